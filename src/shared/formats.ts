/**
 * What an ingestion takes, by file extension: the server's rule (spec §2 upload table), and the
 * studio's, which marks queued files the server would refuse.
 */

export const DOCUMENT_FORMATS = ['pdf', 'docx', 'html', 'markdown', 'json', 'csv'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** File extension (lower-case, with dot) → format, per the spec's upload table (§2). */
export const FORMAT_BY_EXTENSION: Record<string, DocumentFormat> = {
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.html': 'html',
  '.htm': 'html',
  '.md': 'markdown',
  '.mdx': 'markdown',
  '.json': 'json',
  '.csv': 'csv',
};

/** Taken too, but not documents: pre-built embeddings (JSONL) and archives of documents (ZIP). */
export const NON_DOCUMENT_EXTENSIONS = ['.jsonl', '.zip'] as const;
