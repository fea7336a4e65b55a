import type { DocumentFormat, ParsedDocument, ParseInput } from './types';

export interface ParseOptions {
  /** CSV: columns whose empty cells skip the row (default: every named column). */
  csvRequiredColumns?: string[];
  /** Stops the parse (HTML and Markdown: drops its queued work and terminates a worker running it). */
  signal?: AbortSignal;
}

/**
 * Parses one document. Each parser (and its libraries: pdfjs, mammoth, unified, csv-parse) is
 * loaded on first use, so commands that never parse start fast.
 */
export async function parseDocument(
  format: DocumentFormat,
  input: ParseInput,
  options: ParseOptions = {},
): Promise<ParsedDocument> {
  switch (format) {
    case 'pdf':
      return (await import('./parsers/pdf')).parsePdf(input);
    case 'docx':
      return (await import('./parsers/docx')).parseDocx(input);
    case 'html':
      return (await import('./parsers/html')).parseHtml(input, { signal: options.signal });
    case 'markdown':
      return (await import('./parsers/markdown')).parseMarkdown(input, { signal: options.signal });
    case 'json':
      return (await import('./parsers/json')).parseJson(input);
    case 'csv':
      return (await import('./parsers/csv')).parseCsv(input, { requiredColumns: options.csvRequiredColumns });
  }
}
