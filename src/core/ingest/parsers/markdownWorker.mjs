// Parses Markdown and MDX into an mdast tree with micromark inside a long-lived worker thread (see
// parserWorkerPool.ts). micromark does quadratic work on some inputs (thousands of setext headings, nested
// list markers on one line) and a parse in progress cannot be interrupted: in a worker, the pool can
// terminate it at the document's deadline. Plain JavaScript on purpose: it must load as it is under node,
// tsx, vitest and the Electron build. It only parses; markdown.ts turns the tree into sections.
import { parentPort } from 'node:worker_threads';
import { gfmFootnoteFromMarkdown } from 'mdast-util-gfm-footnote';
import { gfmStrikethroughFromMarkdown } from 'mdast-util-gfm-strikethrough';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { gfmTaskListItemFromMarkdown } from 'mdast-util-gfm-task-list-item';
import { gfmFootnote } from 'micromark-extension-gfm-footnote';
import { gfmStrikethrough } from 'micromark-extension-gfm-strikethrough';
import { gfmTable } from 'micromark-extension-gfm-table';
import { gfmTaskListItem } from 'micromark-extension-gfm-task-list-item';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkMdx from 'remark-mdx';
import remarkParse from 'remark-parse';
import { unified } from 'unified';

/** remark-gfm without autolink literals: tables, strikethrough, task lists and footnotes. */
function remarkGfmWithoutAutolinks() {
  const data = this.data();
  (data.micromarkExtensions ??= []).push(gfmFootnote(), gfmStrikethrough(), gfmTable(), gfmTaskListItem());
  (data.fromMarkdownExtensions ??= []).push(
    gfmFootnoteFromMarkdown(),
    gfmStrikethroughFromMarkdown(),
    gfmTableFromMarkdown(),
    gfmTaskListItemFromMarkdown(),
  );
}

const markdownProcessor = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);
const mdxProcessor = unified()
  .use(remarkParse)
  .use(remarkFrontmatter, ['yaml'])
  .use(remarkGfm)
  .use(remarkMdx);

/**
 * GFM's autolink literals (bare URLs and e-mail addresses as links) take half of micromark's time, and a
 * link reads as its text, so they change what is read only where a URL or address holds characters that
 * would otherwise be markup: `https://x.org/*a*` keeps its asterisks as a link, loses them as emphasis.
 * Pieces without such an address are parsed without them, about twice as fast.
 */
const fastMarkdownProcessor = unified()
  .use(remarkParse)
  .use(remarkFrontmatter, ['yaml'])
  .use(remarkGfmWithoutAutolinks);

const AUTOLINK_START = /https?:\/\/|www\.|@/gi;
/** Markup inside an address: emphasis, strikethrough, escapes, code, HTML, links, entity references. */
const MARKUP = /[*_~\\`<>[\]]|&(?:#\d+|#x[\da-f]+|[a-z][\da-z]*);/i;
/** Longer runs without white space are checked whole by the full parser. */
const MAX_TOKEN = 4096;
const isSpace = (code) => code === 32 || (code >= 9 && code <= 13);

/**
 * Whether autolink literals could change the text of `text`: some `http://`, `https://` or `www.` is
 * followed by markup before the next white space, or some `@` has markup in its run of non-space
 * characters (an address's local part comes before it). Runs are cut at ASCII white space only, so they
 * hold at least what GFM would make a link of.
 */
export function autolinksMatter(text) {
  AUTOLINK_START.lastIndex = 0;
  for (let match = AUTOLINK_START.exec(text); match; match = AUTOLINK_START.exec(text)) {
    let end = match.index + match[0].length;
    while (end < text.length && !isSpace(text.charCodeAt(end))) {
      if (end - match.index > MAX_TOKEN) return true;
      end++;
    }
    let start = match.index;
    if (match[0] === '@') {
      while (start > 0 && !isSpace(text.charCodeAt(start - 1))) {
        if (match.index - start > MAX_TOKEN) return true;
        start--;
      }
    }
    if (MARKUP.test(text.slice(start, end))) return true;
    AUTOLINK_START.lastIndex = end;
  }
  return false;
}

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

// Imported by tests for autolinksMatter: there is no parent port then.
parentPort?.on('message', ({ id, data, mdx }) => {
  const text = decoder.decode(data);
  try {
    const processor = mdx ? mdxProcessor : autolinksMatter(text) ? markdownProcessor : fastMarkdownProcessor;
    const tree = stripPositions(processor.parse(text));
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
