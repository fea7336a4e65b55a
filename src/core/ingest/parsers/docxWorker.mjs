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
 * fixtures.
 */
export function readXmlString(xmlString, namespaceMap = {}) {
  try {
    return Promise.resolve(saxesTree(xmlString, namespaceMap));
  } catch {
    return xmldomReadString(xmlString, namespaceMap);
  }
}

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

// Only the mammoth this reader was written against (1.x, which reads XML with xmldom) gets it; another
// major version keeps its own reader.
if (require('mammoth/package.json').version.startsWith('1.') && typeof xmldomReadString === 'function') {
  mammothXml.readString = readXmlString;
}

// Imported by tests for readXmlString: there is no parent port then.
parentPort?.on('message', async ({ id, data }) => {
  try {
    const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const { value, messages } = await mammoth.convertToHtml({ buffer }, MAMMOTH_OPTIONS);
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
