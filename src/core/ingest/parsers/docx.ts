import rehypeParse from 'rehype-parse';
import { unified } from 'unified';
import type { Element, Root } from 'hast';
import { InvalidDocument } from '../errors';
import type { Metadata, Parser } from '../types';
import { DEFAULT_DOCX_LIMITS, screenDocxArchive, type DocxArchiveLimits } from './docxArchive';
import { guardNesting, htmlToSections } from './htmlSections';
import { ParserWorkerFailure, ParserWorkerPool, type ParserWorkerReply } from './parserWorkerPool';

export interface DocxParserOptions {
  limits?: Partial<DocxArchiveLimits>;
  /** How long mammoth may take on one file before its worker is terminated (default 120 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_MEMORY_MB = 2048;

let pool: ParserWorkerPool | undefined;
const htmlParser = unified().use(rehypeParse);

/**
 * DOCX parser: body text (headers and footers left out, as mammoth does) converted to HTML by mammoth on
 * a worker thread (docxWorker.mjs), then cut into one section per heading block ({ headings }); tables one
 * row per line with ' | ' between cells, list items one per line. The ZIP is screened first (sizes, ratios, encryption). Document metadata
 * { title, author } from the document's properties. Text mammoth would drop (fields' results, equations,
 * DrawingML text boxes...) is given to it in elements it reads (docxWorker.mjs); text still left out is
 * named in a warning.
 */
export function createDocxParser(options: DocxParserOptions = {}): Parser {
  const limits = { ...DEFAULT_DOCX_LIMITS, ...options.limits };
  return async ({ bytes, source }) => {
    const properties = await screenDocxArchive(bytes, source, limits);
    const { html, messages, leftOut } = await convertInWorker(
      bytes,
      source,
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    const sections = guardNesting(source, () =>
      htmlToSections(withNotesHeading(htmlParser.parse(html)), {
        strip: isFootnoteBacklink,
        // Word's list labels are in the text (docxNumbering.mjs); mammoth's notes lists have none.
        labelledList: (list) => !isNotesList(list),
      }),
    );
    const warnings = messages.filter((m) => m.type === 'error').map((m) => `${source}: ${m.message}`);
    if (leftOut.length > 0) {
      const elements = leftOut.map((name) => `${name}${LEFT_OUT_REASONS[name] ?? ''}`).join(', ');
      warnings.push(
        `${source}: some text was left out, in elements the Word reader cannot read: ${elements}.`,
      );
    }
    if (sections.length === 0) warnings.push(`${source}: the document has no text.`);
    const metadata: Metadata = { ...properties };
    return { format: 'docx', sections, metadata, ...(warnings.length > 0 ? { warnings } : {}) };
  };
}

export const parseDocx: Parser = createDocxParser();

/** The heading the document's footnotes and endnotes are filed under. */
export const NOTES_HEADING = 'Notes';

/**
 * mammoth writes the footnotes and endnotes as lists at the end of the body (`<li id="footnote-1">`),
 * where they would be filed under the document's last heading, whatever they annotate. A "Notes" heading
 * before them gives them a section of their own, as Word sets them apart at the foot of the page.
 */
function withNotesHeading(root: Root): Root {
  const visit = (parent: Root | Element) => {
    const children: (typeof parent.children)[number][] = [];
    for (const child of parent.children) {
      if (child.type === 'element' && isNotesList(child)) {
        children.push({
          type: 'element',
          tagName: 'h1',
          properties: {},
          children: [{ type: 'text', value: NOTES_HEADING }],
        });
      } else if (child.type === 'element') {
        visit(child);
      }
      children.push(child);
    }
    parent.children = children as typeof parent.children;
  };
  visit(root);
  return root;
}

function isNotesList(element: Element): boolean {
  if (element.tagName !== 'ol') return false;
  const first = element.children.find((c): c is Element => c.type === 'element');
  const id = first?.properties.id;
  return first?.tagName === 'li' && typeof id === 'string' && /^(footnote|endnote)-/.test(id);
}

/** mammoth ends each footnote with a "↑" link back to its reference: not text. */
function isFootnoteBacklink(element: Element): boolean {
  const href = element.properties.href;
  return element.tagName === 'a' && typeof href === 'string' && /^#(footnote|endnote)-ref-/.test(href);
}

/** Why an element's text could not be read, for the warning that names it. */
const LEFT_OUT_REASONS: Record<string, string> = {
  'w:sym': ' (a character of a symbol font with no Unicode equivalent)',
  'w:altChunk': ' (content imported from another file)',
};

interface MammothResult {
  html: string;
  messages: { type: string; message: string }[];
  /** The elements whose text mammoth left out (docxWorker.mjs), each named once. */
  leftOut: string[];
}

async function convertInWorker(bytes: Uint8Array, source: string, timeoutMs: number): Promise<MammothResult> {
  pool ??= new ParserWorkerPool(new URL('./docxWorker.mjs', import.meta.url), {
    maxMemoryMb: MAX_MEMORY_MB,
    // mammoth keeps nothing between files and the worker's cache of styles and numbering parts is bounded
    // (docxWorker.mjs), while a fresh worker loads mammoth again, starts with an empty cache and reads
    // slowly until its JIT warms up: 208 DOCX files took about a fifth more CPU with a new worker every
    // 100 files (docs/performance.md, seventeenth pass). Idle workers still stop after 30 s.
    maxFilesPerWorker: 100_000,
  });
  let reply: ParserWorkerReply<MammothResult>;
  try {
    // A copy for the worker (transferred), so the caller's bytes stay usable.
    reply = await pool.read<MammothResult>(new Uint8Array(bytes), {}, timeoutMs);
  } catch (error) {
    if (!(error instanceof ParserWorkerFailure)) throw error;
    const reason =
      error.reason === 'timeout'
        ? `reading it took too long (over ${Math.round(timeoutMs / 100) / 10} s) and was stopped`
        : error.reason === 'memory'
          ? `reading it needed more than ${MAX_MEMORY_MB} MB of memory and was stopped`
          : error.message.replace(/\.$/, '');
    throw new InvalidDocument(source, `could not be read as a Word document (${reason}).`);
  }
  if (!reply.ok) {
    throw new InvalidDocument(
      source,
      `could not be read as a Word document (${reply.message.replace(/\.$/, '')}).`,
    );
  }
  return reply;
}
