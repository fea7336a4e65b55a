// Parses Markdown and MDX into an mdast tree with micromark inside a long-lived worker thread (see
// parserWorkerPool.ts). micromark does quadratic work on some inputs (thousands of setext headings, nested
// list markers on one line) and a parse in progress cannot be interrupted: in a worker, the pool can
// terminate it at the document's deadline. Plain JavaScript on purpose: it must load as it is under node,
// tsx, vitest and the Electron build. It only parses; markdown.ts turns the tree into sections.
import { parentPort } from 'node:worker_threads';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkMdx from 'remark-mdx';
import remarkParse from 'remark-parse';
import { unified } from 'unified';

const markdownProcessor = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);
const mdxProcessor = unified()
  .use(remarkParse)
  .use(remarkFrontmatter, ['yaml'])
  .use(remarkGfm)
  .use(remarkMdx);

const decoder = new TextDecoder();

/**
 * Positions are dropped (a third of the tree, and nothing reads them) except the front matter's first
 * line, which front-matter errors name. Iterative, so a deeply nested tree cannot overflow the stack here.
 */
function stripPositions(root) {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node.type === 'yaml') node.position = { start: { line: node.position?.start.line ?? 1 } };
    else delete node.position;
    delete node.data;
    if (Array.isArray(node.children)) for (const child of node.children) stack.push(child);
  }
  return root;
}

parentPort.on('message', ({ id, data, mdx }) => {
  const text = decoder.decode(data);
  try {
    const tree = stripPositions((mdx ? mdxProcessor : markdownProcessor).parse(text));
    parentPort.postMessage({ id, ok: true, tree });
  } catch (error) {
    // MDX syntax errors are VFileMessages: their reason and place go back as data.
    const reason = typeof error?.reason === 'string' ? error.reason : undefined;
    try {
      parentPort.postMessage({
        id,
        ok: false,
        name: error?.name ?? 'Error',
        message: String(error?.message ?? error),
        ...(reason === undefined ? {} : { reason, line: error.line, column: error.column }),
      });
    } catch {
      parentPort.postMessage({
        id,
        ok: false,
        name: 'Error',
        message: 'the parse result could not be sent.',
      });
    }
  }
});
