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
/** Pages with fewer visible characters than this are looked at for images (a scan's page number, a stamp). */
const IMAGE_PAGE_MAX_CHARS = 20;
/** A page whose images cover at least this share of it is scan-like; a logo or a chart is smaller. */
const SCAN_COVER = 0.5;

interface WorkerPage {
  items: PdfTextItem[];
  chars: number;
  images: number;
  /** The share of the page its images cover, 0–1 (looked at only below IMAGE_PAGE_MAX_CHARS). */
  imageCover: number;
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
 * Refuses encrypted files, and files that read as scans: at least half of the pages with content are
 * images over most of the page without any text, or every such page is one with next to no text (a
 * page number stamped on each scan). A page with text is never left out: a caption under a full-page
 * chart, a slide's title beside a logo are stored, with a warning when the page looks like a scan.
 */
export function createPdfParser(options: PdfParserOptions = {}): Parser {
  return async ({ bytes, source }) => toDocument(await readInWorker(bytes, source, options), source);
}

export const parsePdf: Parser = createPdfParser();

function toDocument(result: WorkerResult, source: string): ParsedDocument {
  const sections: Section[] = [];
  /** Scan-like pages without any text: nothing of them can be stored. */
  const imagePages: number[] = [];
  /** Scan-like pages with a few characters (stored): a stamp on a scan, or a caption under a figure. */
  const fewCharPages: number[] = [];
  const failedPages: string[] = [];
  let pagesWithContent = 0;
  result.pages.forEach((page, index) => {
    const number = index + 1;
    if (page.error !== undefined) {
      failedPages.push(`page ${number} (${page.error})`);
      return;
    }
    const text = pageText(page.items);
    if (page.chars < IMAGE_PAGE_MAX_CHARS && page.images > 0 && page.imageCover >= SCAN_COVER) {
      (text ? fewCharPages : imagePages).push(number);
    }
    if (text || page.images > 0) pagesWithContent++;
    if (text) sections.push({ text, metadata: { page: number } });
  });

  if (failedPages.length > 0 && failedPages.length === result.pages.length) {
    throw new InvalidDocument(source, `no page of the PDF could be read: ${failedPages[0]}`);
  }
  const total = `${result.pages.length} page${result.pages.length === 1 ? '' : 's'}`;
  if (imagePages.length > 0 && imagePages.length * 2 >= pagesWithContent) {
    throw new NoTextLayer(source, `only images, no text, on ${imagePages.length} of ${total}`);
  }
  const scanLike = imagePages.length + fewCharPages.length;
  if (fewCharPages.length > 0 && scanLike === pagesWithContent) {
    throw new NoTextLayer(source, `page-size images with next to no text on ${scanLike} of ${total}`);
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
  if (fewCharPages.length > 0) {
    const one = fewCharPages.length === 1;
    warnings.push(
      `${source}: ${pageList(fewCharPages)} ${one ? 'is' : 'are'} mostly ${one ? 'an image' : 'images'} with next to no text ` +
        `(what text ${one ? 'it has' : 'they have'} was kept); if ${one ? 'it is a scan' : 'they are scans'}, OCR the file to include ${one ? 'its' : 'their'} text.`,
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
