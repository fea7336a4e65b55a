// Parses Markdown and MDX into an mdast tree, with markdown-it where it reads a piece as micromark does
// (see markdownItTree) and micromark otherwise, inside a long-lived worker thread (see
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
import MarkdownIt from 'markdown-it';
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
/**
 * Markup inside an address: emphasis, strikethrough, escapes, code, HTML, links, entity references. An
 * underscore between two letters or digits (`t.me/zoda_gov_ua`) is not: CommonMark lets such an
 * underscore neither open nor close emphasis, so it reads the same in a link and in text.
 */
const MARKUP = /[*~\\`<>[\]]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])|&(?:#\d+|#x[\da-f]+|[a-z][\da-z]*);/iu;
/** Longer runs without white space are checked whole by the full parser. */
const MAX_TOKEN = 4096;
const EMAIL_ATEXT = /[\w.+-]/;
const isSpace = (code) => code === 32 || (code >= 9 && code <= 13);

/**
 * Whether autolink literals could change the text of `text`: some `http://`, `https://` or `www.` is
 * followed by markup before the next white space, or some `@` after a character of an address's local
 * part has markup in its run of non-space characters (the local part comes before it). Runs are cut at
 * ASCII white space only, so they hold at least what GFM would make a link of. Addresses inside a code
 * span, an autolink, an HTML tag or a link's destination are not literals (takenRanges).
 */
export function autolinksMatter(text) {
  const taken = takenRanges(text);
  let range = 0;
  AUTOLINK_START.lastIndex = 0;
  for (let match = AUTOLINK_START.exec(text); match; match = AUTOLINK_START.exec(text)) {
    // An address that starts inside a code span, an autolink, an HTML tag or a link's destination is
    // part of it (one that starts before such a range runs into it, and its run holds the markup).
    while (range < taken.length && taken[range][1] <= match.index) range++;
    if (range < taken.length && taken[range][0] < match.index) continue;
    // An e-mail address needs its local part (letters, digits, `.+-_`) right before the `@`.
    if (match[0] === '@' && !EMAIL_ATEXT.test(text[match.index - 1] ?? '')) continue;
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

/** A code span on one line: a run of backticks, text without a pipe, the same run (not a longer one). */
const CODE_SPAN = /(?<![`\\])(`+)(?!`)([^`\n|]*?[^`\n|])\1(?!`)/g;
/** What can take a backtick before a code span does: an escape, an autolink or HTML tag around it. */
const BACKTICK_TAKEN = /\\`|<[^<>\n]*`[^<>\n]*>/;

/**
 * Where the text's code spans are, as [start, end) pairs in order: nothing in them is a link, footnote
 * or task. Only the certain ones: on one line (a backtick in a code block above cannot open one there)
 * and without a pipe (table cells are cut at pipes first), in text without an escaped backtick or a
 * tag or autolink holding one. A span missed only leaves more to check.
 */
function codeSpans(text) {
  if (!text.includes('`') || BACKTICK_TAKEN.test(text)) return [];
  return [...text.matchAll(CODE_SPAN)].map((span) => [span.index, span.index + span[0].length]);
}

/**
 * An autolink (CommonMark): `<scheme:...>` or `<address@domain>`, not after a backslash. (CommonMark
 * also allows C1 controls and Unicode spaces in a URI autolink; refusing them only checks more.)
 */
const ANGLE_AUTOLINK =
  /(?<!\\)<(?:[A-Za-z][A-Za-z\d.+-]{1,31}:[^<>\s\p{Cc}]*|[\w.!#$%&'*+/=?^`{|}~-]+@[A-Za-z\d](?:[A-Za-z\d-]{0,61}[A-Za-z\d])?(?:\.[A-Za-z\d](?:[A-Za-z\d-]{0,61}[A-Za-z\d])?)*)>/gu;
/** An HTML open or closing tag on one line (CommonMark raw HTML), not after a backslash. */
const HTML_TAG =
  /(?<!\\)<(?:[A-Za-z][A-Za-z\d-]*(?:[ \t]+[A-Za-z_:][\w.:-]*(?:[ \t]*=[ \t]*(?:[^\s"'=<>`]+|'[^'\n]*'|"[^"\n]*"))?)*[ \t]*\/?|\/[A-Za-z][A-Za-z\d-]*[ \t]*)>/g;
/**
 * A link or image with a plain label (no brackets, backticks or backslashes; not a footnote's `[^`)
 * and a destination without spaces, `<`, backslashes or a title (parentheses nested once at most): such
 * a label is the nearest opener of its `]`, so it is a link, and its destination is never text. Group 1
 * is the destination.
 */
const LINK_DESTINATION = /(?<!\\)\[(?!\^)[^[\]\\`\n]*\](\([^\s()<\\]*(?:\([^\s()<\\]*\)[^\s()<\\]*)*\))/g;

/**
 * The ranges that constructs starting before an address take whole, so no autolink literal starts in
 * them: code spans, autolinks, HTML tags, link destinations. Sorted, overlaps joined.
 */
function takenRanges(text) {
  const ranges = codeSpans(text);
  if (text.includes('<')) {
    for (const regex of [ANGLE_AUTOLINK, HTML_TAG]) {
      for (const match of text.matchAll(regex)) ranges.push([match.index, match.index + match[0].length]);
    }
  }
  if (text.includes('](')) {
    for (const match of text.matchAll(LINK_DESTINATION)) {
      const end = match.index + match[0].length;
      ranges.push([end - match[1].length, end]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const joined = [];
  for (const [start, end] of ranges) {
    const last = joined.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else joined.push([start, end]);
  }
  return joined;
}

/** The text with its code spans (codeSpans) blanked out, same length. */
function withoutCodeSpans(text) {
  const parts = [];
  let at = 0;
  for (const [start, end] of codeSpans(text)) {
    parts.push(text.slice(at, start), ' '.repeat(end - start));
    at = end;
  }
  parts.push(text.slice(at));
  return parts.join('');
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

/** The tree of one piece: markdown-it's where it reads the piece as micromark would, else micromark's. */
export function parseMarkdownTree(text, mdx = false) {
  return (!mdx && markdownItTree(text)) || micromarkTree(text, mdx);
}

/** The tree micromark (remark-parse with GFM, or MDX) makes of a piece, without positions. */
export function micromarkTree(text, mdx = false) {
  const processor = mdx ? mdxProcessor : autolinksMatter(text) ? markdownProcessor : fastMarkdownProcessor;
  return stripPositions(processor.parse(text));
}

/*
 * markdown-it reads CommonMark and GFM tables 8 times as fast as micromark. Its tokens become the part
 * of mdast that markdownText.ts reads (blocks, phrasing, table cells, list starts, code languages,
 * image alt text), and only where both parsers read a piece alike. Any other piece goes to micromark:
 *   - GFM that markdown-it lacks: tildes that could close a strikethrough in a paragraph or table row
 *     (GFM also takes single tildes) and `~~~` fences; footnotes (`[^`) and task list items outside
 *     code spans; addresses that autolink literals could change (autolinksMatter);
 *   - carriage returns (markdown-it turns them into line feeds, micromark keeps them in code), a byte
 *     order mark at the start of a line, autolinks with percent escapes or non-ASCII characters
 *     (markdown-it shows them decoded);
 *   - tables: rows with more or fewer cells than the header (markdown-it pads and cuts them, micromark
 *     keeps them) or without a pipe; tables in a list or quote, or followed by a line of text; a
 *     delimiter row without a pipe, or a header that starts like another block; delimiter rows
 *     under a line without a pipe (or, without a pipe themselves, under any text);
 *   - lists: items that are empty, start on the line after their marker, or start with another block
 *     than a paragraph or a list; lists and indented code right after another block without a blank
 *     line; ordered lists not starting at 1 after indented code; tab-indented lines where there are
 *     list items; paragraphs in a list item or quote with a line that starts with an HTML tag;
 *   - fenced code left open; runs of three or more `*` or `_` in a paragraph; brackets left open in a
 *     paragraph with code spans; link reference definitions other than `[label]: destination "title"`
 *     on one line, or followed by a line of text;
 *   - nesting deeper than MAX_LEVEL (markdown-it stops parsing at 100 levels, micromark does not);
 *   - front matter other than a closed `---` block at the start, and any token not mapped below.
 * Each rule comes from a difference that comparing both on seeded documents found. Tests compare the
 * sections of both on the fixtures, the docs, the benchmark's corpus, seeded documents of every
 * construct and edited copies of real ones (test/core/ingest/parsers/markdownWorker.test.ts).
 */
const markdownIt = new MarkdownIt('default', { html: true, linkify: false, typographer: false });
const NOT_FOR_MARKDOWN_IT = /\r|\[\^|^\uFEFF|^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)+\[[ xX]\]/m;
/** A line indented with a tab, and a list item: the parsers count a tab's columns in an item differently. */
const TAB_INDENT = /^[ >]*\t/m;
const LIST_ITEM_LINE = /^[ \t>]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/m;
/** A line that holds a link reference definition (in quotes and list items too). */
const DEFINITION = /^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*(\[[^\]\n]+\]:.*)$/;
/** A link reference definition on one line: a destination without quotes or parentheses, a title. */
const PLAIN_DEFINITION =
  /^\[[^\]\n]+\]:[ \t]*(?:<[^<>\n]*>|[^\s"'()<>]+)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$/;
const EMPHASIS_RUN = /\*{3}|_{3}/;
/**
 * What might be an autolink, for the percent-escape and non-ASCII check: looser than ANGLE_AUTOLINK on
 * purpose (that one must only match real autolinks, this one must miss none).
 */
const AUTOLINK = /<(?:[a-z][a-z\d+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>/gi;
const MAX_LEVEL = 40;
/** YAML front matter as remark-frontmatter reads it: `---` lines around it, nothing else on them. */
const FRONT_MATTER = /^---[ \t]*\n(?:([\s\S]*?)\n)??---[ \t]*(?:\n|$)/;

const BLOCK_OPEN = {
  paragraph_open: () => ({ type: 'paragraph', children: [] }),
  heading_open: (token) => ({ type: 'heading', depth: Number(token.tag.slice(1)), children: [] }),
  blockquote_open: () => ({ type: 'blockquote', children: [] }),
  bullet_list_open: () => ({ type: 'list', ordered: false, start: null, children: [] }),
  ordered_list_open: (token) => ({
    type: 'list',
    ordered: true,
    start: Number(token.attrGet('start') ?? 1),
    children: [],
  }),
  list_item_open: () => ({ type: 'listItem', checked: null, children: [] }),
  table_open: () => ({ type: 'table', children: [] }),
  tr_open: () => ({ type: 'tableRow', children: [] }),
  th_open: () => ({ type: 'tableCell', children: [] }),
  td_open: () => ({ type: 'tableCell', children: [] }),
};
const BLOCK_CLOSE = new Set([
  'paragraph_close',
  'heading_close',
  'blockquote_close',
  'bullet_list_close',
  'ordered_list_close',
  'list_item_close',
  'table_close',
  'tr_close',
  'th_close',
  'td_close',
]);
const INLINE_OPEN = { em_open: 'emphasis', strong_open: 'strong', s_open: 'delete', link_open: 'link' };
const INLINE_CLOSE = new Set(['em_close', 'strong_close', 's_close', 'link_close']);

/** The piece's tree from markdown-it, or undefined where micromark must read it (see above). */
export function markdownItTree(text) {
  if (NOT_FOR_MARKDOWN_IT.test(withoutCodeSpans(text)) || autolinksMatter(text)) return undefined;
  if (TAB_INDENT.test(text) && LIST_ITEM_LINE.test(text)) return undefined;
  if (!definitionsAlike(text) || !delimiterRowsAlike(text)) return undefined;
  for (const [autolink] of text.matchAll(AUTOLINK)) if (/[%\u0080-\uffff]/.test(autolink)) return undefined;
  const root = { type: 'root', children: [] };
  let body = text;
  if (text.startsWith('---')) {
    const frontMatter = FRONT_MATTER.exec(text);
    if (!frontMatter) return undefined;
    root.children.push({ type: 'yaml', value: frontMatter[1] ?? '', position: { start: { line: 1 } } });
    body = text.slice(frontMatter[0].length);
  }
  const lines = body.split('\n');
  const open = [root];
  let columns = 0;
  const tokens = markdownIt.parse(body, {});
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.level > MAX_LEVEL) return undefined;
    const make = BLOCK_OPEN[token.type];
    if (make) {
      if (!opensAlike(tokens, i, lines)) return undefined;
      const node = make(token);
      open.at(-1).children.push(node);
      open.push(node);
      if (token.type === 'table_open') columns = cellCount(lines[token.map[0]]);
      else if (token.type === 'tr_open') {
        // micromark ends a table at some lines without a pipe (an HTML tag) that markdown-it reads as rows.
        const row = lines[token.map[0]];
        if (!row.includes('|') || mayStrike(row) || cellCount(row) !== columns) return undefined;
      }
      continue;
    }
    if (BLOCK_CLOSE.has(token.type)) {
      open.pop();
      continue;
    }
    const parent = open.at(-1).children;
    switch (token.type) {
      case 'inline': {
        if (!inlineAlike(token.content)) return undefined;
        const children = phrasing(token.children);
        if (!children) return undefined;
        parent.push(...children);
        break;
      }
      case 'fence': {
        if (token.markup[0] === '~') return undefined;
        // Closed only: micromark and markdown-it end an unclosed fence's code at different lines.
        const close = CLOSING_FENCE.exec(lines[token.map[1] - 1]);
        if (token.map[1] - token.map[0] < 2 || !close || close[1].length < token.markup.length)
          return undefined;
        const lang = markdownIt.utils.unescapeAll(token.info).trim().split(/\s+/)[0];
        parent.push({ type: 'code', lang: lang || null, value: token.content.replace(/\n$/, '') });
        break;
      }
      case 'code_block':
        // Only after a blank line: micromark reads one right after a quote or definition otherwise.
        if (token.map[0] > 0 && lines[token.map[0] - 1].trim() !== '') return undefined;
        // Not before a line of spaces: micromark keeps the spaces past the indentation as a last line.
        if (/^[ \t]+$/.test(lines[token.map[1]] ?? '')) return undefined;
        parent.push({ type: 'code', lang: null, value: token.content.replace(/\n$/, '') });
        break;
      case 'html_block':
        parent.push({ type: 'html', value: token.content.replace(/\n$/, '') });
        break;
      case 'hr':
        parent.push({ type: 'thematicBreak' });
        break;
      case 'thead_open':
      case 'thead_close':
      case 'tbody_open':
      case 'tbody_close':
        break;
      default:
        return undefined;
    }
  }
  return root;
}

/** A list item whose first line is only its marker (its text starts on the next line). */
const MARKER_ONLY = /^[ \t>]*(?:[-+*]|\d{1,9}[.)])[ \t]*$/;
/** What a list item may start with: text, or a list (`- - nested`). */
const ITEM_STARTS = new Set(['paragraph_open', 'bullet_list_open', 'ordered_list_open']);
/** A line that starts with an HTML tag (in a quote or list item). */
const TAG_LINE = /^[ \t>]*<[/a-z]/i;
/** A fence closing a code block (inside quotes too). */
const CLOSING_FENCE = /^[ \t>]*(`{3,})[ \t]*$/;
/** A line that starts like another block: a quote, list item, heading, fence or HTML. */
const BLOCK_START = /^\s*(?:>|[-+*](?:\s|$)|\d{1,9}[.)](?:\s|$)|#{1,6}(?:\s|$)|`{3}|~{3}|<)/;

/**
 * Whether micromark opens the same container as markdown-it's tokens[i] (see above for the cases where
 * they differ: empty list items, list items that start with another block, lists right after indented
 * code or HTML, tables).
 */
function opensAlike(tokens, i, lines) {
  const token = tokens[i];
  switch (token.type) {
    case 'list_item_open':
      return ITEM_STARTS.has(tokens[i + 1]?.type) && !MARKER_ONLY.test(lines[token.map[0]]);
    case 'bullet_list_open':
    case 'ordered_list_open': {
      const before = tokens[i - 1];
      if (before?.type !== 'code_block' && before?.type !== 'html_block') return true;
      // Right after it; or, for an ordered list not starting at 1, after indented code at all.
      const start = Number(token.attrGet('start') ?? 1);
      return before.map[1] !== token.map[0] && (before.type !== 'code_block' || start === 1);
    }
    case 'paragraph_open':
      return (
        token.level === 0 || !lines.slice(token.map[0] + 1, token.map[1]).some((line) => TAG_LINE.test(line))
      );
    case 'table_open': {
      // At the top level only, ending at a blank line (micromark reads a following line as a row), with
      // a pipe in its delimiter row, and a header that does not start like another block.
      const after = lines[token.map[1]];
      return (
        token.level === 0 &&
        (after === undefined || after.trim() === '') &&
        lines[token.map[0] + 1].includes('|') &&
        !BLOCK_START.test(lines[token.map[0]])
      );
    }
    default:
      return true;
  }
}

/**
 * Whether every link reference definition is plain and followed by a blank line, another definition or
 * the end. micromark reads the line after a definition as it would after a paragraph (an ordered list
 * not starting at 1, an HTML tag, an empty list item do not start there), markdown-it as a new block.
 */
function definitionsAlike(text) {
  if (!text.includes(']:')) return true;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const definition = DEFINITION.exec(lines[i]);
    if (!definition) continue;
    if (!PLAIN_DEFINITION.test(definition[1])) return false;
    const next = lines[i + 1];
    if (next !== undefined && !/^[ \t>]*$/.test(next) && !DEFINITION.test(next)) return false;
  }
  return true;
}

const PUNCTUATION = /[\p{P}\p{S}]/u;
const WHITE_SPACE = /\s/;

/**
 * Whether tildes in the text could close a strikethrough, which GFM makes of one tilde or two (`~a~`),
 * markdown-it of two only. None can where no run of tildes is right-flanking (CommonMark: after a
 * character that is not white space, and not after punctuation unless white space or punctuation
 * follows): `~11 s (~1 GB)` reads alike.
 */
function mayStrike(text) {
  for (const run of text.matchAll(/~+/g)) {
    const before = text[run.index - 1];
    const after = text[run.index + run[0].length];
    if (before === undefined || WHITE_SPACE.test(before)) continue;
    if (
      !PUNCTUATION.test(before) ||
      after === undefined ||
      WHITE_SPACE.test(after) ||
      PUNCTUATION.test(after)
    )
      return true;
  }
  return false;
}

/**
 * Whether CommonMark's "rule of three" could decide how emphasis pairs: a run of one and a run of two of
 * the same delimiter, one of them able to both open and close (flanked on both sides). The parsers apply
 * it differently: `**a*!*, b` is `*<em>a</em>!*, b` to markdown-it, emphasis around `a!` to micromark.
 * Escaped and code-span delimiters count too: a text is only ever sent to micromark for nothing.
 */
function ruleOfThreeMayApply(content) {
  for (const [mark, runs] of [
    ['*', /\*+/g],
    ['_', /_+/g],
  ]) {
    if (!content.includes(mark)) continue;
    const lengths = new Set();
    let opensAndCloses = false;
    for (const run of content.matchAll(runs)) {
      const length = run[0].length;
      lengths.add(length);
      opensAndCloses ||= flankedBothSides(content[run.index - 1], content[run.index + length]);
    }
    if (opensAndCloses && lengths.has(1) && lengths.has(2)) return true;
  }
  return false;
}

/**
 * Whether a delimiter run between these characters is both left- and right-flanking: white space on
 * neither side, and punctuation on both sides or on neither.
 */
function flankedBothSides(before, after) {
  if (before === undefined || after === undefined) return false;
  if (WHITE_SPACE.test(before) || WHITE_SPACE.test(after)) return false;
  return PUNCTUATION.test(before) === PUNCTUATION.test(after);
}

/**
 * Whether each `[` and the first `]` after it hold whole code spans (an even number of backticks between
 * them). A code span that starts inside the brackets and ends after them is one to micromark
 * (`` [`a](u) b `c` ``), while markdown-it reads every backtick of the paragraph as text.
 */
function bracketsHoldWholeCodeSpans(content) {
  // One pass: the backticks seen so far, at each `[` not yet followed by a `]`.
  let ticks = 0;
  const opened = [];
  for (let i = 0; i < content.length; i++) {
    const c = content[i];
    if (c === '`') ticks++;
    else if (c === '[') opened.push(ticks);
    else if (c === ']') {
      if (opened.some((at) => (ticks - at) % 2 === 1)) return false;
      opened.length = 0;
    }
  }
  return true;
}

/**
 * Whether a code span may open at the very end of a line (an odd number of backticks so far, the last
 * of them ending the line). Its text then starts with the line break, and the parsers keep different
 * parts of the next line's indentation when that line is a lazy line of a list item (`` - x`\n ! e `y ``).
 */
function codeSpanMayOpenAtLineEnd(content) {
  if (!content.includes('`') || !content.includes('\n')) return false;
  let ticks = 0;
  let last = '';
  for (let i = 0; i < content.length; i++) {
    const c = content[i];
    if (c === '\n' && last === '`' && ticks % 2 === 1) return true;
    if (c === '`') ticks++;
    if (c !== ' ' && c !== '\t') last = c;
  }
  return false;
}

/**
 * Whether the parsers read a paragraph's text alike: not where runs of three or more `*` or `_`, or
 * the rule of three, make them pair emphasis differently, nor where tildes could be strikethrough, nor
 * where a code span may open at a line's end, nor where a `[` left without its `]`, or brackets cutting a code
 * span, meet code spans (markdown-it then drops some of them).
 */
function inlineAlike(content) {
  if (EMPHASIS_RUN.test(content) || ruleOfThreeMayApply(content) || mayStrike(content)) return false;
  if (codeSpanMayOpenAtLineEnd(content)) return false;
  if (!content.includes('`') || !content.includes('[')) return true;
  return content.split('[').length === content.split(']').length && bracketsHoldWholeCodeSpans(content);
}

/** A line that could be a table's delimiter row (`|---|:-:|`, `-:`). */
const DELIMITER_ROW = /^[ \t>]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/gm;

/**
 * Whether every line that could be a delimiter row follows a line with a pipe (with a pipe itself) or
 * no line of text (with a colon and no pipe, `-:`): micromark also makes a table of a header without
 * a pipe (`a` then `|-` or `-:`), markdown-it does not. `---` alone is a heading's underline to both.
 */
function delimiterRowsAlike(text) {
  if (!text.includes('-')) return true;
  for (const match of text.matchAll(DELIMITER_ROW)) {
    const pipe = match[0].includes('|');
    if ((!pipe && !match[0].includes(':')) || match.index === 0) continue;
    const previous = text.slice(text.lastIndexOf('\n', match.index - 2) + 1, match.index);
    if (pipe ? !previous.includes('|') : previous.trim() !== '') return false;
    // A header less indented than its delimiter row (a lazy line of a list item): micromark still makes
    // a table of it inside the item, markdown-it ends the item there.
    if (indentation(previous) < indentation(match[0])) return false;
  }
  return true;
}

/** The spaces and tabs a line starts with. */
const indentation = (line) => /^[ \t]*/.exec(line)[0].length;

/** The cells of a table row line, split as markdown-it splits them (a pipe after `\\` is text). */
function cellCount(line) {
  const text = line.trim();
  const cells = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '|' || text[i - 1] === '\\') continue;
    cells.push(text.slice(start, i));
    start = i + 1;
  }
  cells.push(text.slice(start));
  // As escapedSplit's caller does: an empty first and last cell are the row's outer pipes.
  if (cells[0] === '') cells.shift();
  if (cells.length > 0 && cells.at(-1) === '') cells.pop();
  return cells.length;
}

/** markdown-it's inline tokens as mdast phrasing nodes, or undefined for a token not mapped. */
function phrasing(tokens) {
  const root = { children: [] };
  const open = [root];
  for (const token of tokens) {
    if (token.level > MAX_LEVEL) return undefined;
    const parent = open.at(-1).children;
    const type = INLINE_OPEN[token.type];
    if (type) {
      const node = { type, children: [] };
      parent.push(node);
      open.push(node);
      continue;
    }
    if (INLINE_CLOSE.has(token.type)) {
      open.pop();
      continue;
    }
    switch (token.type) {
      case 'text':
        parent.push({ type: 'text', value: token.content });
        break;
      case 'softbreak':
        parent.push({ type: 'text', value: '\n' });
        break;
      case 'hardbreak':
        parent.push({ type: 'break' });
        break;
      case 'code_inline':
        parent.push({ type: 'inlineCode', value: token.content });
        break;
      case 'html_inline':
        parent.push({ type: 'html', value: token.content });
        break;
      case 'image':
        parent.push({ type: 'image', alt: altText(token.children) });
        break;
      default:
        return undefined;
    }
  }
  return root.children;
}

/** An image's alt text as mdast-util-to-string gives it: the values of its label's nodes. */
function altText(tokens) {
  let text = '';
  for (const token of tokens ?? []) {
    if (token.type === 'softbreak') text += '\n';
    else if (token.type === 'image') text += altText(token.children);
    else if (token.type === 'text' || token.type === 'code_inline' || token.type === 'html_inline')
      text += token.content;
  }
  return text;
}

// Imported by tests: there is no parent port then.
parentPort?.on('message', ({ id, data, mdx }) => {
  const text = decoder.decode(data);
  try {
    parentPort.postMessage({ id, ok: true, tree: parseMarkdownTree(text, mdx) });
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
