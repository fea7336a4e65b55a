// Parses HTML into a hast tree with parse5 and hast-util-from-parse5 (what rehype-parse does) inside a
// long-lived worker thread (see parserWorkerPool.ts), so a page whose parse runs past its deadline can be
// stopped by terminating the thread. Plain JavaScript on purpose: it must load as it is under node, tsx,
// vitest and the Electron build. It only parses; html.ts and htmlSections.ts turn the tree into sections.
import { parentPort } from 'node:worker_threads';
import { fromParse5 } from 'hast-util-from-parse5';
import { parse } from 'parse5';

const decoder = new TextDecoder();

/**
 * The tree rehype-parse makes, without source positions: rehype-parse has parse5 record where every node
 * starts and ends and turns that into positions, which this worker then dropped (about 40% of the parse).
 * Same parse5 options otherwise (scripting off, so `<noscript>` content is read as markup).
 */
export function parseHtmlTree(html) {
  return fromParse5(parse(html, { scriptingEnabled: false }));
}

// Imported by tests for parseHtmlTree: there is no parent port then.
parentPort?.on('message', ({ id, data }) => {
  try {
    const tree = parseHtmlTree(decoder.decode(data));
    parentPort.postMessage({ id, ok: true, tree });
  } catch (error) {
    // A tree too deep to send fails with a RangeError, which html.ts reports as too deeply nested.
    parentPort.postMessage({
      id,
      ok: false,
      name: error?.name ?? 'Error',
      message: String(error?.message ?? error),
    });
  }
});
