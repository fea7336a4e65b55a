// Parses HTML into a hast tree with rehype-parse (parse5) inside a long-lived worker thread (see
// parserWorkerPool.ts), so a page whose parse runs past its deadline can be stopped by terminating the
// thread. Plain JavaScript on purpose: it must load as it is under node, tsx, vitest and the Electron
// build. It only parses; html.ts and htmlSections.ts turn the tree into sections.
import { parentPort } from 'node:worker_threads';
import rehypeParse from 'rehype-parse';
import { unified } from 'unified';

const processor = unified().use(rehypeParse);
const decoder = new TextDecoder();

/** Positions are dropped (nothing reads them, and they are a third of the tree); iterative, for deep trees. */
function stripPositions(root) {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    delete node.position;
    if (Array.isArray(node.children)) for (const child of node.children) stack.push(child);
    if (node.content) stack.push(node.content);
  }
  return root;
}

parentPort.on('message', ({ id, data }) => {
  try {
    const tree = stripPositions(processor.parse(decoder.decode(data)));
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
