/** The shapes every parser produces and every chunker consumes. */

import type { DocumentFormat } from '../../shared/formats';

export { DOCUMENT_FORMATS, FORMAT_BY_EXTENSION, type DocumentFormat } from '../../shared/formats';

export type Metadata = Record<string, unknown>;

/**
 * A run of text with the metadata it carries: a PDF page ({ page }), a block under a heading path
 * ({ headings: ['Intro', 'Scope'] }), a CSV row ({ row, ...columns }), a JSON item ({ item, ...fields }).
 * Chunkers never join text across sections, so a chunk's metadata is exactly its section's.
 */
export interface Section {
  text: string;
  metadata: Metadata;
  /** true: the section is one chunk as it is, never split or merged (a CSV row is one chunk). */
  atomic?: boolean;
}

export interface SkippedRow {
  row: number;
  reason: string;
}

export interface ParsedDocument {
  format: DocumentFormat;
  sections: Section[];
  /** Document-wide metadata given to every chunk (Markdown front matter, HTML title, ...). */
  metadata: Metadata;
  /** CSV rows left out because a required field was empty, with their 1-based data row numbers. */
  skippedRows?: SkippedRow[];
  /** Non-fatal notes for the user (e.g. "2 image-only pages had no text"). */
  warnings?: string[];
}

export interface ParseInput {
  bytes: Uint8Array;
  /** Path of the file inside the upload, used in messages and as metadata `source`. */
  source: string;
}

export type Parser = (input: ParseInput) => Promise<ParsedDocument>;
