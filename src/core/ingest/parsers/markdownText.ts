import { toText } from 'hast-util-to-text';
import type { List, ListItem, Nodes, Table } from 'mdast';
import type {} from 'mdast-util-mdx';
import rehypeParse from 'rehype-parse';
import { unified } from 'unified';

const htmlParser = unified().use(rehypeParse, { fragment: true });

const PHRASING = new Set([
  'text',
  'inlineCode',
  'emphasis',
  'strong',
  'delete',
  'link',
  'linkReference',
  'image',
  'imageReference',
  'break',
  'footnoteReference',
  'mdxTextExpression',
  'mdxJsxTextElement',
]);

/**
 * One mdast block as the text a reader sees: paragraphs as running text, list items one per line with
 * their `- ` / `1. ` marker (nested ones indented), code blocks verbatim inside their fence, tables one
 * row per line with cells joined by " | " (mdast-util-to-string would run the cells together), block
 * quotes with "> ". Links read as their text, images as their alt text, raw HTML as its text content.
 * MDX import/export statements and `{expressions}` are dropped; JSX elements give their children's text.
 */
export function blockText(node: Nodes): string {
  switch (node.type) {
    case 'paragraph':
    case 'heading':
    case 'tableCell':
      return paragraphText(node.children);
    case 'code':
      return codeText(node.value, node.lang);
    case 'list':
      return listText(node);
    case 'table':
      return tableText(node);
    case 'blockquote':
      return prefixLines(blocksText(node.children), '> ');
    case 'html':
      return htmlText(node.value).trim();
    case 'footnoteDefinition':
      // Empty: nothing to keep (markdownPieces gives a piece such a definition of a footnote defined
      // in another piece, so its references read as in the whole document).
      return node.children.length === 0
        ? ''
        : `[${node.label ?? node.identifier}]: ${blocksText(node.children)}`;
    case 'thematicBreak':
    case 'definition':
    case 'yaml':
    case 'mdxjsEsm':
    case 'mdxFlowExpression':
      return '';
    default:
      return 'children' in node
        ? blocksText(node.children)
        : PHRASING.has(node.type)
          ? paragraphText([node])
          : '';
  }
}

/** Children of a container: consecutive inline nodes form one paragraph; blocks are separated by a blank line. */
function blocksText(children: Nodes[], separator = '\n\n'): string {
  const parts: string[] = [];
  let inline: Nodes[] = [];
  const flushInline = () => {
    if (inline.length > 0) parts.push(paragraphText(inline));
    inline = [];
  };
  for (const child of children) {
    if (PHRASING.has(child.type)) {
      inline.push(child);
      continue;
    }
    flushInline();
    parts.push(blockText(child));
  }
  flushInline();
  return parts.filter((part) => part !== '').join(separator);
}

/** Runs of spaces (left where an MDX `{expression}` or an empty tag was dropped) read as one, as rendered. */
function paragraphText(nodes: Nodes[]): string {
  return inlineText(nodes)
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/ *\n */g, '\n')
    .trim();
}

function inlineText(nodes: Nodes[]): string {
  return nodes.map(inlineNodeText).join('');
}

function inlineNodeText(node: Nodes): string {
  switch (node.type) {
    // A soft line break inside a paragraph reads as a space, as when rendered.
    case 'text':
      return node.value.replace(/[ \t]*\r?\n[ \t]*/g, ' ');
    // A code span's line endings render as spaces (CommonMark); mdast keeps them.
    case 'inlineCode':
      return node.value.replace(/\r\n?|\n/g, ' ');
    case 'image':
    case 'imageReference':
      return node.alt ?? '';
    case 'break':
      return '\n';
    case 'html':
      return htmlText(node.value);
    case 'footnoteReference':
      return `[${node.label ?? node.identifier}]`;
    case 'mdxTextExpression':
      return '';
    default:
      return 'children' in node ? inlineText(node.children) : '';
  }
}

function codeText(value: string, lang: string | null | undefined): string {
  const longestRun = Math.max(2, ...(value.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  return `${fence}${lang ?? ''}\n${value}\n${fence}`;
}

function listText(list: List): string {
  const start = list.start ?? 1;
  return list.children
    .map((item, index) => listItemText(item, list.ordered ? `${start + index}. ` : '- '))
    .filter((line) => line !== '')
    .join('\n');
}

function listItemText(item: ListItem, marker: string): string {
  const task = item.checked === true ? '[x] ' : item.checked === false ? '[ ] ' : '';
  const body = blocksText(item.children, '\n');
  if (body === '' && task === '') return '';
  const indent = ' '.repeat(marker.length);
  return marker + task + body.replace(/\n(?!$)/g, `\n${indent}`);
}

/** Rows one per line, cells between ' | '; a '|' inside a cell stays escaped, or it would read as a cell edge. */
function tableText(table: Table): string {
  return table.children
    .map((row) =>
      row.children
        .map((cell) =>
          blockText(cell)
            .replace(/\s*\n\s*/g, ' ')
            .replaceAll('|', '\\|'),
        )
        .join(' | '),
    )
    .join('\n');
}

function prefixLines(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? prefix.trimEnd() : prefix + line))
    .join('\n');
}

function htmlText(html: string): string {
  return toText(htmlParser.parse(html));
}
