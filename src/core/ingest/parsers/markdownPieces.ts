/** Documents up to this many characters are parsed whole. */
const SPLIT_ABOVE = 64 * 1024;
const PIECE_SIZE = 32 * 1024;

const FENCE = /^\s*(`{3,}|~{3,})/;
/** A list item after a blank line may continue the same (loose) list: never cut there. */
const LIST_ITEM = /^(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/;
const LINK_DEFINITION = /^ {0,3}\[(?!\^)([^\]]+)\]:[ \t]*\S/;
const FOOTNOTE_DEFINITION = /^ {0,3}\[\^([^\]\s][^\]]*)\]:/;
/** CommonMark HTML blocks 1-5 run across blank lines until their end marker. */
const MULTILINE_HTML: [start: RegExp, end: RegExp][] = [
  [/^ {0,3}<(script|pre|style|textarea)(?=[\s>]|$)/i, /<\/(script|pre|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
  [/^ {0,3}<\?/, /\?>/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/],
  [/^ {0,3}<![A-Za-z]/, />/],
];

/**
 * micromark copies the whole event list each time a container block (a list, a block quote) closes, so a
 * document with many separate lists parses in quadratic time: 640 KB of short sections, each with a list,
 * took 68 s whole and 13 s in pieces on a busy two-core machine. A large CommonMark document is cut into
 * pieces of about PIECE_SIZE, parsed one by one. Cuts go only before a line at column 0 that follows a
 * blank line (not a list item, which may continue a loose list), outside front matter, fenced code and
 * multi-line HTML blocks: such a line closes every open list, quote or paragraph, so each piece parses as
 * it would in the whole. The link reference definitions a piece mentions are appended to it so
 * `[text][ref]` still resolves, and so is an empty definition of each footnote it mentions but does not
 * define (a footnote's text is kept once, where it is; an empty one gives no text), so a reference
 * reads `[1]` as in the whole, not `[^1]`. Not used for MDX, whose JSX elements and expressions span
 * blank lines.
 */
export function markdownPieces(text: string): string[] {
  if (text.length <= SPLIT_ABOVE) return [text];
  const lines = splitLines(text);
  const { cuts, definitions, footnotes, openAtEnd } = scan(lines);

  const pieces: string[] = [];
  let start = 0;
  let size = 0;
  lines.forEach((line, index) => {
    if (size >= PIECE_SIZE && cuts.has(index)) {
      pieces.push(lines.slice(start, index).join(''));
      start = index;
      size = 0;
    }
    size += line.length;
  });
  pieces.push(lines.slice(start).join(''));
  if (pieces.length === 1 || (definitions.size === 0 && footnotes.size === 0)) return pieces;
  // A fence left open at the end of the file would swallow the appended definitions as code.
  return pieces.map((piece, index) =>
    openAtEnd && index === pieces.length - 1 ? piece : withDefinitions(piece, definitions, footnotes),
  );
}

/**
 * The text's lines, each with its line feed: what `text.split(/(?<=\n)/)` gives, in a third to a half of
 * the time (12–25 ms against 40–69 ms for 6 MB, on the server's thread).
 */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  for (let start = 0; ;) {
    const end = text.indexOf('\n', start);
    if (end < 0 || end === text.length - 1) {
      lines.push(text.slice(start));
      return lines;
    }
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
}

/**
 * The piece, followed by the definitions of the labels it mentions (`[label]`), and an empty definition
 * of each footnote it mentions (`[^label]`) that is defined in another piece.
 */
function withDefinitions(piece: string, definitions: Map<string, string>, footnotes: Set<string>): string {
  const used = new Set<string>();
  const notes = new Set<string>();
  for (const [, label] of piece.matchAll(/\[([^[\]]{1,999})\]/g)) {
    const definition = definitions.get(normalizeLabel(label as string));
    if (definition) used.add(definition);
    if (label!.startsWith('^') && footnotes.has(normalizeLabel(label!.slice(1)))) notes.add(label!.slice(1));
  }
  if (notes.size > 0) {
    for (const line of splitLines(piece)) {
      const defined = FOOTNOTE_DEFINITION.exec(line)?.[1];
      if (defined !== undefined) notes.delete(defined);
    }
    for (const label of notes) used.add(`[^${label}]:`);
  }
  return used.size === 0 ? piece : `${piece}\n\n${[...used].join('\n')}\n`;
}

function normalizeLabel(label: string): string {
  return label.trim().replace(/\s+/g, ' ').toLowerCase();
}

function scan(lines: string[]): {
  cuts: Set<number>;
  definitions: Map<string, string>;
  /** The footnote labels defined in the document, normalized. */
  footnotes: Set<string>;
  openAtEnd: boolean;
} {
  const cuts = new Set<number>();
  const definitions = new Map<string, string>();
  const footnotes = new Set<string>();
  let fence: { char: string; length: number; indent: number } | undefined;
  let htmlEnd: RegExp | undefined;
  let previousBlank = true;
  let index = frontMatterEnd(lines);

  for (; index < lines.length; index++) {
    const line = (lines[index] as string).replace(/\r?\n$/, '');
    const blank = line.trim() === '';
    if (fence) {
      const close = FENCE.exec(line)?.[1];
      if (
        close &&
        close[0] === fence.char &&
        close.length >= fence.length &&
        line.trim() === close &&
        closesAt(indentOf(line), fence.indent)
      )
        fence = undefined;
    } else if (htmlEnd) {
      if (htmlEnd.test(line)) htmlEnd = undefined;
    } else {
      const open = FENCE.exec(line)?.[1];
      const html = MULTILINE_HTML.find(([startTag]) => startTag.test(line));
      if (open) fence = { char: open[0] as string, length: open.length, indent: indentOf(line) };
      else if (html && !html[1].test(line.replace(html[0], ''))) htmlEnd = html[1];
      else {
        if (previousBlank && /^\S/.test(line) && !LIST_ITEM.test(line)) cuts.add(index);
        const label = LINK_DEFINITION.exec(line)?.[1];
        // The first definition of a label wins, as in CommonMark.
        if (label !== undefined && !definitions.has(normalizeLabel(label)))
          definitions.set(normalizeLabel(label), line);
        const note = FOOTNOTE_DEFINITION.exec(line)?.[1];
        if (note !== undefined) footnotes.add(normalizeLabel(note));
      }
    }
    previousBlank = blank;
  }
  return { cuts, definitions, footnotes, openAtEnd: fence !== undefined || htmlEnd !== undefined };
}

/** Columns of leading whitespace, a tab reaching the next multiple of 4 (as CommonMark counts them). */
function indentOf(line: string): number {
  let column = 0;
  for (const c of line) {
    if (c === ' ') column++;
    else if (c === '\t') column += 4 - (column % 4);
    else break;
  }
  return column;
}

/**
 * Whether a closing fence indented `indent` columns closes a fence opened at `openIndent`: CommonMark
 * allows at most 3 spaces before it, relative to its container. A fence opened at 4 or more is inside a
 * list item (the only way this scan sees one), whose content starts at about the opening's column; at
 * the top level, a line of four spaces and backticks is code, not the end of the block (it cut a
 * document's code in two, and the rest of the document became code).
 */
function closesAt(indent: number, openIndent: number): boolean {
  const container = openIndent > 3 ? openIndent : 0;
  return indent >= container && indent - container <= 3;
}

/**
 * The first line after YAML front matter (`---` to `---`, as remark-frontmatter reads it), or 0; the
 * front matter is never cut (its `# comments` look like headings).
 */
function frontMatterEnd(lines: string[]): number {
  if (!/^---[ \t]*\r?\n$/.test(lines[0] ?? '')) return 0;
  const close = lines.findIndex((line, index) => index > 0 && /^---[ \t]*\r?\n?$/.test(line));
  return close === -1 ? 0 : close + 1;
}
