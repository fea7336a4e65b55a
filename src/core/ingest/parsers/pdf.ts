import { EncryptedDocument, InvalidDocument, NoTextLayer } from '../errors';
import type { Parser, ParsedDocument, Section } from '../types';
import { pageText, removeControlChars, type PdfTextItem } from './pdfText';
import { ParserWorkerFailure, ParserWorkerPool } from './parserWorkerPool';

export interface PdfParserOptions {
  /** How long one file may take before its worker is terminated (default 120 s). */
  timeoutMs?: number;
  /** Heap limit of the worker (default 2048 MB). */
  maxMemoryMb?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_MEMORY_MB = 2048;
/** A page with fewer visible characters than this that paints an image is taken for a scan. */
const IMAGE_PAGE_MAX_CHARS = 20;

interface WorkerPage {
  items: PdfTextItem[];
  chars: number;
  images: number;
  error?: string;
}

interface WorkerResult {
  ok: true;
  title?: string;
  author?: string;
  pages: WorkerPage[];
}

type WorkerReply = WorkerResult | { ok: false; name: string; message: string };

/**
 * PDF parser: the text layer only, one section per page with text ({ page }, 1-based). pdfjs runs in a
 * long-lived worker thread (a 600-page file takes seconds and hundreds of MB), terminated and replaced
 * when a file runs out of time or memory.
 * Refuses encrypted files, and files where at least half of the pages with content are images without text.
 */
export function createPdfParser(options: PdfParserOptions = {}): Parser {
  return async ({ bytes, source }) => toDocument(await readInWorker(bytes, source, options), source);
}

export const parsePdf: Parser = createPdfParser();

function toDocument(result: WorkerResult, source: string): ParsedDocument {
  const sections: Section[] = [];
  const imagePages: number[] = [];
  const failedPages: string[] = [];
  let pagesWithContent = 0;
  result.pages.forEach((page, index) => {
    const number = index + 1;
    if (page.error !== undefined) {
      failedPages.push(`page ${number} (${page.error})`);
      return;
    }
    const text = pageText(page.items);
    if (page.chars < IMAGE_PAGE_MAX_CHARS && page.images > 0) imagePages.push(number);
    if (text || page.images > 0) pagesWithContent++;
    if (text) sections.push({ text, metadata: { page: number } });
  });

  if (failedPages.length > 0 && failedPages.length === result.pages.length) {
    throw new InvalidDocument(source, `no page of the PDF could be read: ${failedPages[0]}`);
  }
  if (imagePages.length > 0 && imagePages.length * 2 >= pagesWithContent) {
    const total = result.pages.length;
    throw new NoTextLayer(
      source,
      `only images, no text, on ${imagePages.length} of ${total} page${total === 1 ? '' : 's'}`,
    );
  }
  if (sections.length === 0) throw new NoTextLayer(source, 'no text was found on any page');

  const warnings: string[] = [];
  if (imagePages.length > 0) {
    const one = imagePages.length === 1;
    warnings.push(
      `${source}: ${pageList(imagePages)} ${one ? 'has' : 'have'} only images, no text, and ${one ? 'was' : 'were'} ` +
        `left out; OCR the file to include ${one ? 'it' : 'them'}.`,
    );
  }
  if (failedPages.length > 0) {
    warnings.push(`${source}: could not read ${failedPages.join(', ')}; their text is missing.`);
  }
  const metadata: Record<string, string> = {};
  const title = removeControlChars(result.title ?? '').trim();
  const author = removeControlChars(result.author ?? '').trim();
  if (title) metadata.title = title;
  if (author) metadata.author = author;
  return { format: 'pdf', sections, metadata, ...(warnings.length > 0 ? { warnings } : {}) };
}

function pageList(pages: number[]): string {
  return pages.length === 1 ? `page ${pages[0]}` : `pages ${pages.join(', ')}`;
}

/** One pool per heap limit (parsers made with other limits get their own). */
const pools = new Map<number, ParserWorkerPool>();

function poolFor(maxMemoryMb: number): ParserWorkerPool {
  let pool = pools.get(maxMemoryMb);
  if (!pool) {
    pool = new ParserWorkerPool(new URL('./pdfWorker.mjs', import.meta.url), { maxMemoryMb });
    pools.set(maxMemoryMb, pool);
  }
  return pool;
}

async function readInWorker(
  bytes: Uint8Array,
  source: string,
  options: PdfParserOptions,
): Promise<WorkerResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxMemoryMb = options.maxMemoryMb ?? DEFAULT_MAX_MEMORY_MB;
  // The worker gets its own copy (transferred, not cloned), so the caller's bytes stay usable. Not
  // bytes.slice(): on a Buffer that is a view of the same memory.
  const data = new Uint8Array(bytes);
  let reply: WorkerReply;
  try {
    reply = await poolFor(maxMemoryMb).read<Omit<WorkerResult, 'ok'>>(
      data,
      { lowTextChars: IMAGE_PAGE_MAX_CHARS },
      timeoutMs,
    );
  } catch (error) {
    if (!(error instanceof ParserWorkerFailure)) throw error;
    if (error.reason === 'timeout') {
      const seconds = Math.round(timeoutMs / 100) / 10;
      throw new InvalidDocument(
        source,
        `reading the PDF took too long (over ${seconds} s) and was stopped; the file may be damaged or too complex. Try splitting it into smaller files.`,
      );
    }
    if (error.reason === 'memory') {
      throw new InvalidDocument(
        source,
        `reading the PDF needed more than ${maxMemoryMb} MB of memory and was stopped.`,
      );
    }
    if (error.reason === 'exit')
      throw new InvalidDocument(source, `the PDF ${error.message.replace(/^the /, '')}`);
    throw refusal(error.errorName, error.message, source);
  }
  if (!reply.ok) throw refusal(reply.name, reply.message, source);
  return reply;
}

function refusal(name: string, message: string, source: string): Error {
  if (name === 'PasswordException') return new EncryptedDocument(source);
  if (name === 'InvalidPDFException') {
    return new InvalidDocument(
      source,
      `not a valid PDF, or damaged beyond repair (${message.replace(/\.$/, '')}).`,
    );
  }
  return new InvalidDocument(source, `the PDF could not be read (${message.replace(/\.$/, '')}).`);
}
