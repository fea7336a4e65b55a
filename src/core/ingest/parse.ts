import type { DocumentFormat, ParsedDocument, ParseInput } from './types';

export interface ParseOptions {
  /** CSV: columns whose empty cells skip the row (default: every named column). */
  csvRequiredColumns?: string[];
  /** Stops the parse (HTML, Markdown and CSV: drops its queued work and terminates a worker running it). */
  signal?: AbortSignal;
}

/**
 * Each parser module (and its libraries: pdfjs, mammoth, unified, csv-parse) is loaded on first use, so
 * commands that never parse start fast; then kept, so the files after the first do not go through the
 * module loader again (an `import()` per file took a round trip to tsx's loader thread).
 */
const loaded = new Map<string, Promise<unknown>>();
function load<T>(key: string, importer: () => Promise<T>): Promise<T> {
  let module = loaded.get(key) as Promise<T> | undefined;
  if (!module) {
    module = importer();
    loaded.set(key, module);
    // A failed load is tried again by the next file.
    module.catch(() => loaded.delete(key));
  }
  return module;
}

/** Parses one document with the parser of its format. */
export async function parseDocument(
  format: DocumentFormat,
  input: ParseInput,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  switch (format) {
    case 'pdf':
      return (await load('pdf', () => import('./parsers/pdf'))).parsePdf(input);
    case 'docx':
      return (await load('docx', () => import('./parsers/docx'))).parseDocx(input);
    case 'html':
      return (await load('html', () => import('./parsers/html'))).parseHtml(input, {
        signal: options.signal,
      });
    case 'markdown':
      return (await load('markdown', () => import('./parsers/markdown'))).parseMarkdown(input, {
        signal: options.signal,
      });
    case 'json':
      return (await load('json', () => import('./parsers/json'))).parseJson(input);
    case 'csv':
      return (await load('csv', () => import('./parsers/csv'))).parseCsv(input, {
        requiredColumns: options.csvRequiredColumns,
        signal: options.signal,
      });
  }
}
