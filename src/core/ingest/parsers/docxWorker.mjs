// Converts DOCX files to HTML with mammoth inside a long-lived worker thread (see parserWorkerPool.ts),
// so a Word document is read on the second core while the main thread chunks and embeds the previous
// file. Plain JavaScript on purpose: it must load as it is under node, tsx, vitest and the Electron build
// (which copies this one file beside its bundle, so what it needs is here or in a package).
// docx.ts screens the archive first and turns the HTML into sections.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';
import { SaxesParser } from 'saxes';
import { labelNumberedParagraphs } from './docxNumbering.mjs';

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

const isElement = (node, name) => node.type === 'element' && node.name === name;
const element = (name, attributes = {}, children = []) => new mammothXml.Element(name, attributes, children);
const textRun = (value) => element('w:r', {}, [element('w:t', {}, [mammothXml.text(value)])]);
const lineBreak = () => element('w:br');

/**
 * A run formatted hidden (Word's Hidden font effect, `w:vanish`): text its author chose not to show
 * (notes to self, answers, redacted words) must not reach buyers, and mammoth keeps it. Hidden by a
 * character style is not caught; `w:webHidden` (shown in print: a table of contents' page numbers) is
 * kept. A math run (`m:r`) becomes a `w:r` first (mathReplacement), so hidden math goes too.
 */
const isHiddenRun = (node) =>
  isElement(node, 'w:r') &&
  node.children.some(
    (p) =>
      isElement(p, 'w:rPr') &&
      p.children.some((v) => isElement(v, 'w:vanish') && !OFF.has(v.attributes['w:val'] ?? 'true')),
  );

/** Office Math, in either namespace (transitional, strict): mammoth maps neither to a prefix. */
const MATH =
  /^\{(?:http:\/\/schemas\.openxmlformats\.org\/officeDocument\/2006\/math|http:\/\/purl\.oclc\.org\/ooxml\/officeDocument\/math)\}(.+)$/;

/** The elements whose children are paragraphs: math directly inside one is given a paragraph of its own. */
const BLOCK_CONTAINERS = new Set([
  'w:body',
  'w:tc',
  'w:txbxContent',
  'w:footnote',
  'w:endnote',
  'w:comment',
  'w:hdr',
  'w:ftr',
]);

/**
 * Office Math (`m:oMath` inline, `m:oMathPara` a display paragraph) as its plain text: the math runs'
 * `m:t` texts in order, in place, each `m:r` a `w:r` (its Word run properties kept, so a hidden one is
 * still hidden), the structure around them (fractions, scripts, radicals, their `…Pr` properties)
 * dropped. The equations of one `m:oMathPara` go on lines of their own. mammoth ignores all of it.
 */
function mathReplacement(node, local, parentName) {
  if ((local === 'oMath' || local === 'oMathPara') && BLOCK_CONTAINERS.has(parentName)) {
    return [element('w:p', {}, [node])];
  }
  if (local === 'r' || local === 't') {
    const children = (local === 't' ? [node] : node.children).flatMap((child) => {
      if (child.type !== 'element') return [];
      const inMath = MATH.exec(child.name)?.[1];
      if (inMath === undefined) return [child];
      if (inMath !== 't') return [];
      const value = child.children.map((c) => (c.type === 'text' ? c.value : '')).join('');
      return [element('w:t', {}, [mammothXml.text(value)])];
    });
    return [element('w:r', {}, children)];
  }
  if (local.endsWith('Pr')) return [];
  if (local === 'oMathPara') {
    const equations = [];
    for (const child of node.children) {
      if (child.type !== 'element' || MATH.exec(child.name)?.[1] === 'oMathParaPr') continue;
      if (equations.length > 0) equations.push(element('w:r', {}, [lineBreak()]));
      equations.push(child);
    }
    return equations;
  }
  return node.children;
}

/** mammoth's table of dingbat fonts (Symbol, Wingdings, Webdings): the `w:sym` characters it reads. */
const dingbats = createRequire(require.resolve('mammoth'))('dingbat-to-unicode');
/** The codes of a symbol font's characters (`F000`–`F0FF`): private code points, no Unicode character. */
const SYMBOL_FONT_PRIVATE = /^F0[0-9A-F]{2}$/i;

/**
 * A symbol (`w:sym`) mammoth would drop: a character of a font that is not a dingbat font it knows is
 * its Unicode code point (`<w:sym w:font="Arial" w:char="00E9"/>` is "é"). A symbol font's own code
 * (`F0xx`) has no Unicode equivalent: left to mammoth, which warns. Without a font, mammoth threw and the
 * whole document was refused: it is given an empty one.
 */
function symbolReplacement(node) {
  const font = node.attributes['w:font'];
  const char = node.attributes['w:char'] ?? '';
  if (font && (dingbats.hex(font, char) || (/^F0..$/.test(char) && dingbats.hex(font, char.slice(2))))) {
    return null;
  }
  const code = /^[0-9A-F]{1,6}$/i.test(char) ? parseInt(char, 16) : 0;
  const isCharacter =
    code >= 0x20 &&
    code <= 0x10ffff &&
    !(code >= 0xd800 && code <= 0xdfff) &&
    !SYMBOL_FONT_PRIVATE.test(char);
  if (isCharacter) return [element('w:t', {}, [mammothXml.text(String.fromCodePoint(code))])];
  return font === undefined ? [element('w:sym', { ...node.attributes, 'w:font': '' })] : null;
}

/** Tracked deletions (and the old place of moved text): text Word no longer shows. */
const DELETED = new Set(['w:del', 'w:moveFrom']);

/** Whether a node holds text Word shows: a `w:t` with text or a symbol, outside deleted or hidden runs. */
function holdsShownText(node) {
  const stack = [node];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next.type !== 'element' || isHiddenRun(next) || DELETED.has(next.name)) continue;
    if (next.name === 'w:sym') return true;
    if (
      (next.name === 'w:t' || MATH.exec(next.name)?.[1] === 't') &&
      next.children.some((c) => c.value?.trim())
    )
      return true;
    for (const child of next.children) stack.push(child);
  }
  return false;
}

/**
 * A run holding ruby (`w:ruby`, phonetic guides over East Asian text), which mammoth ignores, base text
 * and guide alike: the base text's runs in its place, then the guide's in parentheses, "漢字(かんじ)".
 */
function rubyReplacement(run) {
  if (!run.children.some((c) => isElement(c, 'w:ruby'))) return null;
  const properties = run.children.filter((c) => isElement(c, 'w:rPr'));
  const runs = [];
  let rest = [];
  const flush = () => {
    if (rest.length > 0) runs.push(element('w:r', run.attributes, [...properties, ...rest]));
    rest = [];
  };
  for (const child of run.children) {
    if (isElement(child, 'w:ruby')) {
      flush();
      const part = (name) => child.children.find((c) => isElement(c, name))?.children ?? [];
      runs.push(...part('w:rubyBase'));
      const guide = part('w:rt');
      if (guide.some(holdsShownText)) runs.push(textRun('('), ...guide, textRun(')'));
    } else if (!isElement(child, 'w:rPr')) {
      rest.push(child);
    }
  }
  flush();
  return runs;
}

/**
 * The text boxes of a DrawingML shape (`w:drawing` … `wps:txbx` → `w:txbxContent`), taken out of it
 * and put after it in a `w:pict` › `v:textbox`, where mammoth reads a VML text box: as paragraphs after
 * the paragraph that holds it. mammoth reads a drawing only for its pictures, so a text box Word writes
 * without the VML fallback (or inside a group shape) lost its text without a word.
 */
function textBoxReplacement(drawing) {
  const boxes = [];
  const stack = [drawing];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node.children.some((c) => isElement(c, 'w:txbxContent'))) {
      for (let i = node.children.length - 1; i >= 0; i--) {
        if (node.children[i].type === 'element') stack.push(node.children[i]);
      }
      continue;
    }
    const kept = [];
    for (const child of node.children) {
      if (isElement(child, 'w:txbxContent')) boxes.push(child);
      else {
        kept.push(child);
        if (child.type === 'element') stack.push(child);
      }
    }
    node.children = kept;
  }
  if (boxes.length === 0) return null;
  return [drawing, element('w:pict', {}, [element('v:textbox', {}, boxes)])];
}

/** What a child of a `parentName` element is read as: null to keep it, else the nodes in its place. */
function replacement(node, parentName) {
  if (node.type !== 'element') return null;
  // A name in braces is in a namespace mammoth does not map, as Office Math's is.
  const math = node.name.startsWith('{') ? MATH.exec(node.name)?.[1] : undefined;
  if (math !== undefined) return mathReplacement(node, math, parentName);
  switch (node.name) {
    case 'w:r':
      return isHiddenRun(node) ? [] : rubyReplacement(node);
    // A simple field's result (`MERGEFIELD`, `DATE`, `REF`…) is the text Word shows; its data is not.
    case 'w:fldSimple':
      return node.children.filter((c) => !isElement(c, 'w:fldData'));
    // Bidirectional embedding and override: containers of runs.
    case 'w:dir':
    case 'w:bdo':
      return node.children;
    // Page and column breaks end a line as a line break does (mammoth writes nothing for them).
    case 'w:br':
      return node.attributes['w:type'] === 'page' || node.attributes['w:type'] === 'column'
        ? [lineBreak()]
        : null;
    case 'w:cr':
      return [lineBreak()];
    // A positional tab (aligned to a margin) separates words as a tab does.
    case 'w:ptab':
      return [element('w:tab')];
    case 'w:sym':
      return symbolReplacement(node);
    case 'w:drawing':
      return textBoxReplacement(node);
    // mammoth reads the Fallback, and nothing of one without: then the first Choice, which Word shows.
    case 'mc:AlternateContent': {
      const kept =
        node.children.find((c) => isElement(c, 'mc:Fallback')) ??
        node.children.find((c) => isElement(c, 'mc:Choice'));
      return kept?.children ?? [];
    }
    default:
      return null;
  }
}

/**
 * The part as mammoth should read it, changed in place and returned: without the runs Word hides, and
 * with the text Word shows that mammoth would drop in elements it reads (replacement, above). Styles and
 * numbering parts hold none of these, so their shared trees are never changed; a tree rewritten again
 * stays as it is.
 */
export function rewriteForMammoth(tree) {
  const stack = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node?.type !== 'element') continue;
    let kept;
    for (let i = 0; i < node.children.length; i++) {
      const child = node.children[i];
      const replaced = replacement(child, node.name);
      if (replaced === null) {
        kept?.push(child);
        continue;
      }
      kept ??= node.children.slice(0, i);
      // What replaces a child is read in its place, so it is replaced in turn (a field in a field).
      const pending = replaced.slice().reverse();
      while (pending.length > 0) {
        const next = pending.pop();
        const again = replacement(next, node.name);
        if (again === null) kept.push(next);
        else for (let j = again.length - 1; j >= 0; j--) pending.push(again[j]);
      }
    }
    if (kept) node.children = kept;
    for (const child of node.children) if (child.type === 'element') stack.push(child);
  }
  return tree;
}

// Only the mammoth this reader was written against (1.x, which reads XML with xmldom) gets the saxes
// reader; another major version keeps its own. The parts are rewritten either way.
const reader =
  require('mammoth/package.json').version.startsWith('1.') && typeof xmldomReadString === 'function'
    ? readXmlString
    : xmldomReadString;

/** The parts read for the conversion in progress (convertDocx): to find what mammoth left out, and to label lists. */
const conversion = new AsyncLocalStorage();

/**
 * The reader installed as mammoth's `readString`: readXmlString's trees, rewritten for mammoth. mammoth
 * reads the styles and numbering parts before the document, whose numbered paragraphs then get Word's
 * labels (docxNumbering.mjs).
 */
export const readDocxXml = (xmlString, namespaceMap) =>
  Promise.resolve(reader(xmlString, namespaceMap)).then((tree) => {
    const parts = conversion.getStore();
    // Shared styles and numbering parts hold no text: not searched for it.
    if (parts) {
      if (tree?.name === 'w:styles') parts.styles = tree;
      else if (tree?.name === 'w:numbering') parts.numbering = tree;
      else parts.trees.push(tree);
    }
    rewriteForMammoth(tree);
    if (parts && tree?.name === 'w:document') {
      labelNumberedParagraphs(tree, parts.numbering, parts.styles, textRun);
    }
    return tree;
  });

if (typeof reader === 'function') mammothXml.readString = readDocxXml;

/** Parts whose content lies elsewhere in the package: left out whole, text or not. */
const CONTENT_ELSEWHERE = new Set(['w:altChunk']);

/**
 * The elements whose text mammoth left out, from its warnings: a symbol it could not map, and each
 * element it ignored (`An unrecognised element was ignored: w:…`) that holds text Word shows in one of
 * the parts it read. Ignored elements without text (permission marks, page numbers) are no loss.
 */
function textLeftOut(messages, trees) {
  const names = new Set();
  const ignored = new Set();
  for (const { message } of messages) {
    if (message.startsWith('A w:sym element with an unsupported character was ignored')) names.add('w:sym');
    const name = /^An unrecognised element was ignored: (.+)$/.exec(message)?.[1];
    if (name === undefined) continue;
    if (CONTENT_ELSEWHERE.has(name)) names.add(name);
    else ignored.add(name);
  }
  if (ignored.size === 0) return [...names];
  const stack = trees.slice();
  while (stack.length > 0) {
    const node = stack.pop();
    if (node.type !== 'element') continue;
    if (ignored.has(node.name) && holdsShownText(node)) {
      names.add(node.name);
      ignored.delete(node.name);
      if (ignored.size === 0) break;
      continue;
    }
    for (const child of node.children) stack.push(child);
  }
  return [...names];
}

/**
 * The DOCX as HTML, as this worker converts it (also timed alone by bench/floorParser.mjs), with mammoth's
 * messages and the names of the elements whose text was left out (leftOut).
 */
export async function convertDocx(buffer) {
  const parts = { trees: [], styles: undefined, numbering: undefined };
  const { value, messages } = await conversion.run(parts, () =>
    mammoth.convertToHtml({ buffer }, MAMMOTH_OPTIONS),
  );
  return { value, messages, leftOut: textLeftOut(messages, parts.trees) };
}

// Imported by tests for readXmlString: there is no parent port then.
parentPort?.on('message', async ({ id, data }) => {
  try {
    const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const { value, messages, leftOut } = await convertDocx(buffer);
    parentPort.postMessage({
      id,
      ok: true,
      html: value,
      messages: messages.map((m) => ({ type: m.type, message: m.message })),
      leftOut,
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
