import type { Element, ElementContent, Root, RootContent } from 'hast';
import { select } from 'hast-util-select';
import { toText } from 'hast-util-to-text';
import { InvalidDocument } from '../errors';
import type { Section } from '../types';

export interface HtmlSectionOptions {
  /** Extra elements to leave out, on top of page chrome and hidden elements. */
  strip?: (element: Element) => boolean;
  /**
   * The numbered lists whose items begin with their own labels (a DOCX's: Word's, written in by
   * docxNumbering.mjs), which get no '1. ' of ours; bulleted items still get '- '.
   */
  labelledList?: (list: Element) => boolean;
}

/** Elements whose header, footer and aside belong to them, not to the page. */
const SECTIONING = new Set(['main', 'article', 'section']);

/** Page chrome, non-text elements and form controls (isContentButton): never content a reader came for. */
const CHROME_TAGS = new Set([
  'nav',
  'header',
  'footer',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'iframe',
  'object',
  'embed',
  'canvas',
  'audio',
  'video',
  'map',
  'button',
  'input',
  'select',
  'textarea',
  'datalist',
]);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo']);
// The usual "visually hidden" classes (Drupal, Bootstrap, WordPress): skip links and screen-reader labels.
const HIDDEN_CLASSES = new Set([
  'element-invisible',
  'element-hidden',
  'sr-only',
  'visually-hidden',
  'screen-reader-text',
]);

// Inline CSS that hides an element (inline XBRL in SEC filings hides its data this way).
const HIDDEN_STYLE =
  /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse))\s*(?:!important\s*)?(?:;|$)/i;

/**
 * Blocks (HTML's rendering section) that hast-util-to-text reads as inline, run into the text around
 * them ("Refund policyRefunds take 5 days."): read as paragraphs, each on lines of its own.
 */
const PARAGRAPH_TAGS = new Set(['details', 'summary']);
/** Bootstrap's attribute for what a button toggles (data-toggle before Bootstrap 5). */
const TOGGLE_PROPERTIES = ['dataBsToggle', 'dataToggle'] as const;

const HEADING = /^h([1-6])$/;
// Private-use characters that mark a heading inside the flowing text; removed from the input first.
const MARK = '\uE000';
const MID = '\uE001';
const END = '\uE002';
const MARKERS = /[\uE000-\uE002]/g;
const HEADING_MARK = /\uE000([1-6])\uE001([^\uE002]*)\uE002/;

/** A table whose cells hold this much text is page layout, not data. */
const LAYOUT_CELL_CHARS = 2000;

/**
 * HTML (a web page, or what mammoth makes of a DOCX) to sections of readable text, one per heading block
 * with the heading path as metadata ({ headings: ['H1 text', 'H2 text'] }). The text follows the
 * browser's innerText (hast-util-to-text), so block boundaries become line breaks and words on minified
 * pages stay apart; tables become one line per row with cells separated by ' | '; list items get a marker.
 */
export function htmlToSections(tree: Root, options: HtmlSectionOptions = {}): Section[] {
  const body = select('body', tree) ?? tree;
  prune(body, options.strip ?? (() => false), { inContent: false, inHeading: false });
  flattenTables(body, false);
  markListItems(body, '', options.labelledList ?? (() => false));
  markHeadings(body);
  return splitAtHeadings(toText(body));
}

/**
 * Runs a step over the HTML tree, which the unified utilities walk recursively: only absurd nesting (about
 * 2,000 levels, as in a malicious or badly broken file) overflows the stack, and is refused clearly.
 */
export function guardNesting<T>(source: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof RangeError) throw nestedTooDeeply(source);
    throw error;
  }
}

export function nestedTooDeeply(source: string): InvalidDocument {
  return new InvalidDocument(source, 'the HTML is nested too deeply to read (thousands of levels).');
}

/** Text of one element on a single line, as a title or a table cell reads. */
export function inlineText(node: Root | Element): string {
  return tidy(toText(node)).replace(/\s+/g, ' ').trim();
}

/** Where an element stands: inside a main, article or section (inContent), inside a heading. */
interface Place {
  inContent: boolean;
  inHeading: boolean;
}

function prune(parent: Root | Element, strip: (element: Element) => boolean, place: Place): void {
  const kept: (RootContent | ElementContent)[] = [];
  for (const child of parent.children) {
    if (child.type === 'comment' || child.type === 'doctype') continue;
    if (child.type === 'text') {
      kept.push({ ...child, value: child.value.replace(MARKERS, '') });
      continue;
    }
    if (child.type !== 'element' || isStripped(child, strip, place)) continue;
    if (child.tagName === 'img') {
      // An image's text alternative is text of the page (a heading drawn as an image, a diagram's
      // description), read where the image stands as a screen reader reads it. Decorative images have
      // none (alt="") or say so (role presentation or none).
      const alt = imageText(child);
      if (alt) kept.push({ type: 'text', value: alt.replace(MARKERS, '') });
      continue;
    }
    prune(child, strip, {
      inContent: place.inContent || SECTIONING.has(child.tagName),
      inHeading: place.inHeading || HEADING.test(child.tagName),
    });
    // A disclosure button outside a heading labels the panel it opens, as a summary does its details.
    if (PARAGRAPH_TAGS.has(child.tagName) || (child.tagName === 'button' && !place.inHeading))
      child.tagName = 'p';
    kept.push(child);
  }
  setChildren(parent, kept);
}

/** An image's alt text, or '' for a decorative image (no or blank alt, role presentation or none). */
function imageText(image: Element): string {
  const role = String(image.properties.role ?? '').toLowerCase();
  if (role === 'presentation' || role === 'none') return '';
  const alt = image.properties.alt;
  return typeof alt === 'string' ? alt.replace(/\s+/g, ' ').trim() : '';
}

function isStripped(element: Element, strip: (element: Element) => boolean, place: Place): boolean {
  const { tagName, properties } = element;
  // An article's or a section's header and footer (its title, byline, notes) are its content; only the
  // page's own are chrome (the banner and contentinfo of HTML-AAM: not inside main, article, section).
  const ownsIt = place.inContent && (tagName === 'header' || tagName === 'footer');
  const content = ownsIt || (tagName === 'button' && isContentButton(element, place.inHeading));
  if ((CHROME_TAGS.has(tagName) && !content) || properties.hidden || properties.ariaHidden === 'true')
    return true;
  if (tagName === 'dialog' && !properties.open) return true;
  const role = typeof properties.role === 'string' ? properties.role : '';
  if (CHROME_ROLES.has(role)) return true;
  // A page-level sidebar is chrome; an aside inside the article (a note, a callout) is content.
  if (!place.inContent && (tagName === 'aside' || role === 'complementary')) return true;
  const style = properties.style;
  if (typeof style === 'string' && HIDDEN_STYLE.test(style)) return true;
  const classes = properties.className;
  if (Array.isArray(classes) && classes.some((name) => HIDDEN_CLASSES.has(String(name)))) return true;
  return strip(element);
}

/**
 * A button whose text is content: one inside a heading (WAI-ARIA's accordion: the question, which the
 * heading is), or a disclosure, which shows and hides a panel (aria-expanded or aria-controls, or
 * Bootstrap's collapse): an FAQ's questions. Form and dialog buttons ("Submit", "Add to cart",
 * "Close"), menu buttons (aria-haspopup) and Bootstrap's other toggles (dropdown, modal, tab) are
 * controls.
 */
function isContentButton(button: Element, inHeading: boolean): boolean {
  if (inHeading) return true;
  const { properties } = button;
  const toggle = TOGGLE_PROPERTIES.map((name) => properties[name]).find((value) => value !== undefined);
  if (toggle !== undefined) return toggle === 'collapse';
  const popup = properties.ariaHasPopup;
  if (popup !== undefined && popup !== 'false') return false;
  return properties.ariaExpanded !== undefined || properties.ariaControls !== undefined;
}

/** Tables, innermost first: data tables become ' | '-separated rows, layout tables plain blocks. */
function flattenTables(parent: Root | Element, inCell: boolean): void {
  parent.children.forEach((child, index) => {
    if (child.type !== 'element') return;
    flattenTables(child, inCell || child.tagName === 'td' || child.tagName === 'th');
    if (child.tagName === 'table') parent.children[index] = flattenTable(child, inCell);
  });
}

function flattenTable(table: Element, nested: boolean): Element {
  const rows = elements(table, 'tr').map((row) => row.children.filter(isCell));
  const cellTexts = rows.map((cells) => cells.map(inlineText));
  const rowTexts = cellTexts.map((texts) => texts.filter(Boolean));
  const caption = elements(table, 'caption')[0];
  const role = table.properties.role;
  const layout =
    role === 'presentation' ||
    role === 'none' ||
    rowTexts.length < 2 ||
    !rowTexts.some((cells) => cells.length >= 2) ||
    rows.some((cells) => cells.some((cell) => select('h1, h2, h3, h4, h5, h6', cell))) ||
    rowTexts.some((cells) => cells.some((text) => text.length > LAYOUT_CELL_CHARS));
  if (layout) {
    const blocks = rows.flat().map((cell) => block(cell.children));
    return block(caption ? [caption, ...blocks] : blocks);
  }
  const lines = withoutEmptyColumns(alignedRows(rows, cellTexts))
    .filter((cells) => cells.some((text) => text !== ''))
    .map((cells) => trimEmptyEnd(cells).join(' | '));
  if (caption) lines.unshift(inlineText(caption));
  // A table inside a cell must stay on the cell's line: its rows are bracketed and separated by '; '.
  if (nested) return block([{ type: 'text', value: `[${lines.join('; ')}]` }]);
  return block(lines.map((line) => block([{ type: 'text', value: line }])));
}

/**
 * Each row's cell texts at their columns: an empty cell stays (`Bob |  | bob@example.com`, not `Bob |
 * bob@example.com`, whose email would read as the phone). A cell spanning rows is repeated in each
 * (mammoth writes a vertically merged DOCX cell so): a row then still says what its merged label is,
 * as a row read alone (a chunk) must. The other columns a cell spans stay empty.
 */
function alignedRows(rows: Element[][], cellTexts: string[][]): string[][] {
  /** Per column: a cell above still reaching down, its text and the rows it has left. */
  let above: ({ text: string; rowsLeft: number } | undefined)[] = [];
  return rows.map((cells, r) => {
    const texts: string[] = [];
    const next = above.map((cell) =>
      cell && cell.rowsLeft > 1 ? { ...cell, rowsLeft: cell.rowsLeft - 1 } : undefined,
    );
    let column = 0;
    const fillFromAbove = () => {
      for (let cell = above[column]; cell !== undefined; cell = above[++column]) texts.push(cell.text);
    };
    for (const [c, cell] of cells.entries()) {
      fillFromAbove();
      const text = cellTexts[r]![c]!;
      const colSpan = span(cell.properties.colSpan, MAX_COLSPAN);
      const rowSpan = span(cell.properties.rowSpan, MAX_ROWSPAN);
      for (let k = 0; k < colSpan; k++, column++) {
        texts.push(k === 0 ? text : '');
        if (rowSpan > 1) next[column] = { text: k === 0 ? text : '', rowsLeft: rowSpan - 1 };
      }
    }
    fillFromAbove();
    above = next;
    return texts;
  });
}

/** HTML's limits on spans; 0 ("to the end of the group") and anything unreadable count as 1. */
const MAX_COLSPAN = 1000;
const MAX_ROWSPAN = 65534;
const span = (value: unknown, max: number): number => {
  const n = typeof value === 'number' ? value : Number.parseInt(String(value ?? ''), 10);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : 1;
};

/** Rows without the columns empty in every row: the spacer columns of laid-out tables (SEC filings). */
function withoutEmptyColumns(rows: string[][]): string[][] {
  const width = Math.max(0, ...rows.map((cells) => cells.length));
  const used = Array.from({ length: width }, (_, column) =>
    rows.some((cells) => (cells[column] ?? '') !== ''),
  );
  return rows.map((cells) => cells.filter((_, column) => used[column]));
}

const trimEmptyEnd = (cells: string[]): string[] => {
  let end = cells.length;
  while (end > 0 && cells[end - 1] === '') end--;
  return cells.slice(0, end);
};

function isCell(node: ElementContent): node is Element {
  return node.type === 'element' && (node.tagName === 'td' || node.tagName === 'th');
}

/** Descendants with this tag name, not looking inside nested tables (already flattened by now). */
function elements(parent: Element, tagName: string): Element[] {
  const found: Element[] = [];
  for (const child of parent.children) {
    if (child.type !== 'element') continue;
    if (child.tagName === tagName) found.push(child);
    else if (child.tagName !== 'td' && child.tagName !== 'th') found.push(...elements(child, tagName));
  }
  return found;
}

function block(children: ElementContent[]): Element {
  return { type: 'element', tagName: 'div', properties: {}, children };
}

function paragraph(text: string): Element {
  return { type: 'element', tagName: 'p', properties: {}, children: [{ type: 'text', value: text }] };
}

/**
 * '- ' before each item of a bulleted list, '1. ' before each item of a numbered one; a numbered list
 * inside a numbered item continues its number ('2.1. '), since the text cannot show indentation. The
 * items of a numbered list that is `labelled` keep the labels they begin with and get nothing.
 */
function markListItems(parent: Root | Element, number: string, labelled: (list: Element) => boolean): void {
  for (const child of parent.children) {
    if (child.type !== 'element') continue;
    if (child.tagName === 'ul' || child.tagName === 'ol') markList(child, number, labelled);
    else markListItems(child, number, labelled);
  }
}

function markList(list: Element, number: string, labelled: (list: Element) => boolean): void {
  const start = list.properties.start;
  let next = typeof start === 'number' ? start : 1;
  const ownLabels = list.tagName === 'ol' && labelled(list);
  for (const child of list.children) {
    if (child.type !== 'element') continue;
    if (child.tagName === 'li') {
      const own = list.tagName === 'ol' && !ownLabels ? `${number}${next++}.` : '';
      if (list.tagName === 'ul') prefixFirstText(child, '- ');
      else if (own) prefixFirstText(child, `${own} `);
      markListItems(child, own, labelled);
    } else if (child.tagName === 'ul' || child.tagName === 'ol') {
      markList(child, number, labelled);
    } else {
      markListItems(child, number, labelled);
    }
  }
}

/** Puts the marker before the item's own first words (an item holding only a sub-list gets none). */
function prefixFirstText(parent: Element, marker: string): boolean {
  for (const child of parent.children) {
    if (child.type === 'text' && child.value.trim()) {
      child.value = marker + child.value.trimStart();
      return true;
    }
    if (
      child.type === 'element' &&
      child.tagName !== 'ul' &&
      child.tagName !== 'ol' &&
      prefixFirstText(child, marker)
    ) {
      return true;
    }
  }
  return false;
}

/** Replaces each heading by a marked paragraph, found again in the flowing text by splitAtHeadings. */
function markHeadings(parent: Root | Element): void {
  const kept: (RootContent | ElementContent)[] = [];
  for (const child of parent.children) {
    const level = child.type === 'element' ? HEADING.exec(child.tagName)?.[1] : undefined;
    if (child.type === 'element' && level) {
      const text = inlineText(child);
      if (text) kept.push(paragraph(`${MARK}${level}${MID}${text}${END}`));
      continue;
    }
    if (child.type === 'element') markHeadings(child);
    kept.push(child);
  }
  setChildren(parent, kept);
}

function splitAtHeadings(text: string): Section[] {
  const parts = text.split(new RegExp(HEADING_MARK.source, 'g'));
  const sections: Section[] = [];
  const lead = tidy(parts[0] ?? '');
  if (lead) sections.push({ text: lead, metadata: {} });
  const path: { level: number; text: string }[] = [];
  // A heading with no text of its own before a deeper heading is carried into that one's section.
  let carried: { text: string; level: number; headings: string[] } | undefined;
  for (let i = 1; i < parts.length; i += 3) {
    const level = Number(parts[i]);
    const heading = parts[i + 1] ?? '';
    const body = tidy(parts[i + 2] ?? '');
    if (carried && level <= carried.level) {
      sections.push({ text: carried.text, metadata: { headings: carried.headings } });
      carried = undefined;
    }
    while ((path.at(-1)?.level ?? 0) >= level) path.pop();
    path.push({ level, text: heading });
    const headings = path.map((h) => h.text);
    const lines = carried ? `${carried.text}\n\n${heading}` : heading;
    carried = undefined;
    if (body) sections.push({ text: `${lines}\n\n${body}`, metadata: { headings } });
    else carried = { text: lines, level, headings };
  }
  if (carried) sections.push({ text: carried.text, metadata: { headings: carried.headings } });
  return sections;
}

/** Non-breaking spaces to plain ones (runs of them to one), no trailing spaces, at most one blank line. */
function tidy(text: string): string {
  return (
    text
      .replace(/[ \u00a0]*\u00a0[ \u00a0]*/g, ' ')
      // Zero-width spaces, BOMs and soft hyphens (`&shy;`, Word's optional hyphens) are invisible: left
      // in, "soft\u00adhyphen" matches no search for "softhyphen".
      .replace(/[\u200b\ufeff\u00ad]/g, '')
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  );
}

function setChildren(parent: Root | Element, children: (RootContent | ElementContent)[]): void {
  (parent as { children: (RootContent | ElementContent)[] }).children = children;
}
