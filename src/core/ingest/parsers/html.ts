import { decodeText } from '../decode';
import { InvalidDocument } from '../errors';
import { detectHtmlCharset, sniffHtmlCharset } from './htmlCharset';
import { nestedTooDeeply } from './htmlSections';
import type { HtmlPage } from './htmlWorker';
import { parseTimer, type ParseBudget, type ParseTimer } from './parseBudget';
import {
  type CancellableParser,
  PARSE_AHEAD_DEPTH,
  ParserWorkerPool,
  type ParserWorkerReply,
  textParseFailure,
} from './parserWorkerPool';

/** Heap limit of a worker; V8 sizes its heap by it, so a lower one slows parsing (see markdown.ts). */
const MAX_MEMORY_MB = 2048;

let pool: ParserWorkerPool | undefined;

export interface HtmlParserOptions {
  /** Time allowed for one page (its parse in a worker is stopped at the end); see DEFAULT_PARSE_BUDGET. */
  budget?: ParseBudget;
}

/**
 * HTML/HTM parser: the text a reader sees, without navigation, header, footer, scripts, styles, form
 * controls and hidden elements; one section per heading block ({ headings }); document metadata
 * { title, lang } from <title> and <html lang>. The character set comes from the BOM, then the page's
 * own declaration, then valid UTF-8, then detection on the page's text, windows-1252 unless another
 * charset is clearly likelier (detectHtmlCharset). A page that takes far longer than its size warrants is
 * refused (parseTimer): the page is read in a worker thread (htmlWorker.ts), terminated at the deadline.
 */
export function createHtmlParser(options: HtmlParserOptions = {}): CancellableParser {
  return async ({ bytes, source }, { signal } = {}) => {
    const html = decodeText(bytes, sniffHtmlCharset(bytes) ?? detectHtmlCharset(bytes), source);
    // The page's time starts when a worker takes it, not while it waits behind others.
    let started: ParseTimer | undefined;
    const clock = () => (started ??= parseTimer(source, 'HTML', html.length, options.budget));
    const { sections, metadata } = await readInWorker(html, source, clock, signal);
    const warnings = sections.length === 0 ? [`${source}: the page has no visible text.`] : undefined;
    return { format: 'html', sections, metadata, ...(warnings ? { warnings } : {}) };
  };
}

export const parseHtml = createHtmlParser();

async function readInWorker(
  html: string,
  source: string,
  clock: () => ParseTimer,
  signal: AbortSignal | undefined,
): Promise<HtmlPage> {
  pool ??= new ParserWorkerPool(new URL('./htmlWorker.ts', import.meta.url), {
    maxMemoryMb: MAX_MEMORY_MB,
    // rehype keeps nothing between parses, and a fresh worker parses slowly until its JIT warms up.
    maxFilesPerWorker: 100_000,
    depth: PARSE_AHEAD_DEPTH,
  });
  let reply: ParserWorkerReply<HtmlPage>;
  try {
    reply = await pool.read<HtmlPage>(new TextEncoder().encode(html), {}, () => clock().remainingMs(), {
      signal,
    });
  } catch (error) {
    throw textParseFailure(error, source, 'HTML', {
      tooLong: () => clock().tooLong(),
      tooDeep: () => nestedTooDeeply(source),
    });
  }
  if (reply.ok) return { sections: reply.sections, metadata: reply.metadata };
  if (reply.name === 'RangeError') throw nestedTooDeeply(source);
  throw new InvalidDocument(source, `the HTML could not be read: ${reply.message}`);
}
