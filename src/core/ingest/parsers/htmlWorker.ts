// Reads an HTML page inside a long-lived worker thread (see parserWorkerPool.ts): parses it into a hast tree
// with parse5 and hast-util-from-parse5 (what rehype-parse does), then turns the tree into the page's
// sections and metadata (htmlSections.ts). A page whose reading runs past its deadline is stopped by
// terminating the thread, and only the sections come back: the tree, many times larger, never crosses
// to the ingesting thread (docs/performance.md, twentieth pass). TypeScript, started through
// workerScript.ts (tsx from the sources, a bundled .mjs in the Electron build).
import { parentPort } from 'node:worker_threads';
import type { Root } from 'hast';
import { fromParse5 } from 'hast-util-from-parse5';
import { select } from 'hast-util-select';
import { parse } from 'parse5';
import type { Metadata, Section } from '../types';
import { htmlToSections, inlineText } from './htmlSections';

const decoder = new TextDecoder();

/**
 * The tree rehype-parse makes, without source positions: rehype-parse has parse5 record where every node
 * starts and ends and turns that into positions, which were then dropped (about 40% of the parse). Same
 * parse5 options otherwise (scripting off, so `<noscript>` content is read as markup).
 */
export function parseHtmlTree(html: string): Root {
  return fromParse5(parse(html, { scriptingEnabled: false })) as Root;
}

/** What a page gives: its sections, and { title, lang } from <title> and <html lang>. */
export interface HtmlPage {
  sections: Section[];
  metadata: Metadata;
}

/** The page's sections and metadata. A page nested too deeply throws a RangeError (html.ts reports it). */
export function readHtmlPage(html: string): HtmlPage {
  const tree = parseHtmlTree(html);
  const metadata: Metadata = {};
  const titleElement = select('head > title', tree);
  const title = titleElement ? inlineText(titleElement) : '';
  if (title) metadata.title = title;
  const lang = select('html', tree)?.properties.lang;
  if (typeof lang === 'string' && lang.trim()) metadata.lang = lang.trim();
  return { sections: htmlToSections(tree), metadata };
}

// Imported by tests for readHtmlPage: there is no parent port then.
parentPort?.on('message', ({ id, data }: { id: number; data: Uint8Array }) => {
  try {
    parentPort!.postMessage({ id, ok: true, ...readHtmlPage(decoder.decode(data)) });
  } catch (error) {
    const { name = 'Error', message = String(error) } = error instanceof Error ? error : {};
    parentPort!.postMessage({ id, ok: false, name, message });
  }
});
