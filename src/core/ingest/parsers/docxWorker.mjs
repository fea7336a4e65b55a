// Converts DOCX files to HTML with mammoth inside a long-lived worker thread (see parserWorkerPool.ts),
// so a Word document is read on the second core while the main thread chunks and embeds the previous
// file. Plain JavaScript on purpose: it must load as it is under node, tsx, vitest and the Electron build
// (which copies this one file beside its bundle, so what it needs is here or in a package).
// docx.ts screens the archive first and turns the HTML into sections.
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';
import { SaxesParser } from 'saxes';

const MAMMOTH_OPTIONS = {
  // Word's "Title" paragraph style heads the document like a level-1 heading.
  styleMap: ["p[style-name='Title'] => h1:fresh"],
  // Images carry no text: skip them without reading their data (the default inlines them as base64).
  convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
};

const require = createRequire(import.meta.url);
/** mammoth's XML module: every part of the document is read through its `readString`. */
const mammothXml = require('mammoth/lib/xml/index.js');
const xmldomReadString = mammothXml.readString;

/**
 * mammoth's `readString` without xmldom: the same tree of mammoth elements, built from saxes events.
 * mammoth parses every XML part (document, styles, numbering, notes, relationships) into an xmldom DOM
 * and then copies it into its own elements; building them directly reads a file 2.3 times as fast
 * (37 → 16 ms for a 24 KB document), and xmldom and its DOM were most of that time.
 *
 * The tree is mammoth's: an element's name is `prefix:local` with the prefix mammoth maps its namespace
 * to, `{namespace}local` for a namespace it does not map, `local` without one (attributes alike,
 * `xmlns` declarations included); one text node per run of text between tags, comments, processing
 * instructions and CDATA sections (whose content mammoth drops). saxes checks that the XML is well
 * formed: on anything it refuses (undefined entities, unbound prefixes, control characters...) the part
 * is read by xmldom as before, so a document mammoth accepted or refused still is, with the same
 * messages. test/core/ingest/parsers/docxWorker.test.ts compares both readers on every part of the
 * fixtures. A styles or numbering part read before is not read again (sharedParts, below).
 */
export function readXmlString(xmlString, namespaceMap = {}) {
  const shareable = SHARED_ROOT.test(xmlString) && xmlString.length <= SHARED_PART_MAX_CHARS;
  if (shareable) {
    const known = sharedParts.get(xmlString);
    if (known?.namespaceMap === namespaceMap) {
      // Most recently used last: the oldest goes first when the map is full.
      sharedParts.delete(xmlString);
      sharedParts.set(xmlString, known);
      return Promise.resolve(known.tree);
    }
  }
  let tree;
  try {
    tree = saxesTree(xmlString, namespaceMap);
  } catch {
    return xmldomReadString(xmlString, namespaceMap);
  }
  if (shareable) keepSharedPart(xmlString, { namespaceMap, tree });
  return Promise.resolve(tree);
}

/** Keeps a part's tree as the most recently used; the least recently used go past either bound. */
function keepSharedPart(xmlString, entry) {
  if (sharedParts.delete(xmlString)) sharedChars -= xmlString.length;
  sharedParts.set(xmlString, entry);
  sharedChars += xmlString.length;
  while (sharedParts.size > SHARED_PARTS || sharedChars > SHARED_CHARS) {
    const oldest = sharedParts.keys().next().value;
    sharedParts.delete(oldest);
    sharedChars -= oldest.length;
  }
}

/*
 * Documents made from one template carry the same styles and numbering parts, and those are often most
 * of a DOCX's XML: a fixture holds 349 KB of styles beside 5 KB of text. Their trees are kept, by their
 * XML, for the next document that has the same part (a string key: V8 hashes it once, far faster than
 * parsing it). mammoth only reads these trees; the one change it makes, collapsing mc:AlternateContent,
 * gives the same tree when made again. A tree takes about 14 bytes per character of its XML (the four
 * fixtures' parts: 10.7 MB for 0.78 M characters), so the parts kept are bounded by their XML: 4 M
 * characters in all (about 56 MB of trees), none over 1 M, and 16 parts at most. Four parts at most
 * (the bound until the eighteenth pass) held the styles and numbering of two templates: documents from
 * three or four templates in turn missed every time.
 */
const SHARED_ROOT = /^\s*(?:<\?xml[^>]*\?>\s*)?<w:(?:styles|numbering)[\s>]/;
const SHARED_PARTS = 16;
const SHARED_CHARS = 4 * 1024 * 1024;
const SHARED_PART_MAX_CHARS = 1024 * 1024;
/** @type {Map<string, { namespaceMap: object, tree: unknown }>} */
const sharedParts = new Map();
/** The characters of XML of the parts in sharedParts. */
let sharedChars = 0;

function saxesTree(xmlString, namespaceMap) {
  const nameOf = (uri, local) => {
    if (!uri) return local;
    const prefix = namespaceMap[uri];
    return `${prefix ? `${prefix}:` : `{${uri}}`}${local}`;
  };
  const parser = new SaxesParser({ xmlns: true });
  const open = [];
  let root;
  parser.on('opentag', (tag) => {
    const attributes = Object.create(null);
    for (const attribute of Object.values(tag.attributes)) {
      attributes[nameOf(attribute.uri, attribute.local)] = attribute.value;
    }
    const element = new mammothXml.Element(nameOf(tag.uri, tag.local), attributes, []);
    if (open.length > 0) open.at(-1).children.push(element);
    else root = element;
    open.push(element);
  });
  parser.on('closetag', () => open.pop());
  // saxes holds text until the next markup, so each run of text is one event, as it is one xmldom node.
  // Text outside the root element (white space after it) belongs to no element.
  parser.on('text', (value) => {
    if (open.length > 0) open.at(-1).children.push(mammothXml.text(value));
  });
  parser.write(xmlString).close();
  return root;
}

/** A `w:val` that turns a toggle property off (`<w:vanish w:val="0"/>`); absent means on. */
const OFF = new Set(['0', 'false', 'off']);

const isHiddenRun = (node) =>
  node.type === 'element' &&
  node.name === 'w:r' &&
  node.children.some(
    (p) =>
      p.type === 'element' &&
      p.name === 'w:rPr' &&
      p.children.some(
        (v) => v.type === 'element' && v.name === 'w:vanish' && !OFF.has(v.attributes['w:val'] ?? 'true'),
      ),
  );

/**
 * The part without its hidden runs (Word's Hidden font effect, `w:vanish`): text its author chose not
 * to show (notes to self, answers, redacted words) must not reach buyers, and mammoth keeps it. Hidden
 * by a character style is not caught; `w:webHidden` (shown in print: a table of contents' page numbers)
 * is kept. Styles and numbering parts hold no runs, so their shared trees are never changed.
 */
export function withoutHiddenRuns(tree) {
  const stack = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node?.type !== 'element') continue;
    if (node.children.some(isHiddenRun)) node.children = node.children.filter((c) => !isHiddenRun(c));
    for (const child of node.children) if (child.type === 'element') stack.push(child);
  }
  return tree;
}

// Only the mammoth this reader was written against (1.x, which reads XML with xmldom) gets the saxes
// reader; another major version keeps its own. Hidden runs are dropped either way.
const reader =
  require('mammoth/package.json').version.startsWith('1.') && typeof xmldomReadString === 'function'
    ? readXmlString
    : xmldomReadString;

/** The reader mammoth is given: its parts' trees, without hidden runs. */
export const readDocxXml = (xmlString, namespaceMap) =>
  Promise.resolve(reader(xmlString, namespaceMap)).then(withoutHiddenRuns);

if (typeof reader === 'function') mammothXml.readString = readDocxXml;

/** The DOCX as HTML, as this worker converts it (also timed alone by bench/floorParser.mjs). */
export function convertDocx(buffer) {
  return mammoth.convertToHtml({ buffer }, MAMMOTH_OPTIONS);
}

// Imported by tests for readXmlString: there is no parent port then.
parentPort?.on('message', async ({ id, data }) => {
  try {
    const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const { value, messages } = await convertDocx(buffer);
    parentPort.postMessage({
      id,
      ok: true,
      html: value,
      messages: messages.map((m) => ({ type: m.type, message: m.message })),
    });
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      name: error?.name ?? 'Error',
      message: String(error?.message ?? error),
    });
  }
});
