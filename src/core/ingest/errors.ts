import { DomainError } from '../errors';
import { codeOf } from '../uploads/storageErrors';

export { UnsupportedEmbeddingModel } from '../embed/errors';
import type { FileOutcome } from './pipeline';
import type { SkippedRow } from './types';
import { sizeAgainstLimit } from './zipLimits';

/** Per-file refusals: each message names the file and says what the user can do. */

export class NoTextLayer extends DomainError {
  constructor(
    readonly source: string,
    detail = '',
  ) {
    super(
      'no_text_layer',
      `${source}: the PDF has no text layer${detail ? ` (${detail})` : ''}. Scanned or image PDFs must be OCR-processed before upload.`,
    );
  }
}

export class EncryptedDocument extends DomainError {
  constructor(readonly source: string) {
    super(
      'encrypted_document',
      `${source}: the document is encrypted or password-protected. Remove the protection and upload it again.`,
    );
  }
}

export class InvalidDocument extends DomainError {
  constructor(
    readonly source: string,
    reason: string,
  ) {
    super('invalid_document', `${source}: ${reason}`);
  }
}

/** Why the system could not read a file, by errno code, in words. */
const UNREADABLE_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOENT: 'it was moved or deleted during the ingestion',
  ENOTDIR: 'it was moved or deleted during the ingestion',
  EISDIR: 'it is a folder now',
  ELOOP: 'too many levels of symbolic links',
  EIO: 'input/output error: the disk or share holding it failed',
  ENXIO: 'it is not a regular file',
};

/**
 * A file given to ingest that the system refused to read (EACCES, gone since it was listed, ...), as
 * that file's refusal naming it and why, so the other files are still ingested; anything else (a full
 * disk, too many open files) is returned as it is, to fail the ingestion as before.
 */
export function unreadableFile(source: string, err: unknown): unknown {
  const code = codeOf(err);
  const reason = UNREADABLE_REASONS[code];
  if (reason === undefined) return err;
  const fix =
    code === 'EACCES' || code === 'EPERM' ? ' Make it readable for this user, or leave it out.' : '';
  return new InvalidDocument(source, `the file cannot be read (${reason}, ${code}).${fix}`);
}

/**
 * A document that chunked into nothing: when the parser skipped every row (a CSV whose rows all lack a
 * required column), says so, with the first reason and how to choose the columns; otherwise that no text
 * was found.
 */
export function nothingToRetrieve(source: string, skippedRows: readonly SkippedRow[] = []): InvalidDocument {
  const [first] = skippedRows;
  if (first === undefined) {
    return new InvalidDocument(source, 'no text was found in the document, so there is nothing to retrieve.');
  }
  const rows =
    skippedRows.length === 1 ? 'its only data row was' : `all ${skippedRows.length} data rows were`;
  return new InvalidDocument(
    source,
    `${rows} skipped (row ${first.row}: ${first.reason}), so there is nothing to retrieve. A row needs every named column by default: fill them in, or name the columns a row needs (Required CSV columns under Chunking on the studio's Ingest page, required_columns in an upload's config, --required-columns with kbstudio ingest).`,
  );
}

export interface UnsupportedEntry {
  entry: string;
  type: string;
}

export class UnsupportedFileType extends DomainError {
  constructor(readonly entries: UnsupportedEntry[]) {
    const list = entries.map((e) => `${e.entry} (${e.type})`).join(', ');
    super(
      'unsupported_file_type',
      `Unsupported file type: ${list}. Supported: .pdf, .docx, .html, .htm, .md, .mdx, .json, .csv (and .jsonl pre-built embeddings, .zip archives).`,
      { entries },
    );
  }
}

export class PayloadTooLarge extends DomainError {
  /** `planLimit: false` for a limit of the request's form (a field's size), which no plan raises. */
  constructor(message: string, { planLimit = true }: { planLimit?: boolean } = {}) {
    super(
      'payload_too_large',
      planLimit
        ? `${message} Larger knowledge bases require a creator plan upgrade or contacting support.`
        : message,
    );
  }
}

/** The studio's per-knowledge-base byte limit (spec §8), refused before the file that would pass it is staged. */
export class KnowledgeBaseTooLarge extends PayloadTooLarge {
  constructor(bytes: number, limit: number) {
    const shown = sizeAgainstLimit(bytes, limit);
    super(
      `The knowledge base would hold ${shown.size} of documents; the studio limit is ${shown.limit} per knowledge base (use a bulk upload above that).`,
    );
  }
}

const CHUNK_LIMIT_ADVICE = 'Larger knowledge bases require a creator plan upgrade or contacting support.';

export class ChunkLimitExceeded extends DomainError {
  constructor(limit: number, wouldHave: number, message?: string) {
    super(
      'chunk_limit_exceeded',
      message ??
        `This upload would bring the knowledge base to ${wouldHave} chunks; the limit is ${limit}. ${CHUNK_LIMIT_ADVICE}`,
    );
  }

  /** A knowledge base at the limit, refused a new document before any file is read (limitsAhead.ts). */
  static full(limit: number, holds: number): ChunkLimitExceeded {
    return new ChunkLimitExceeded(
      limit,
      holds,
      `The knowledge base already holds ${holds} chunks; the limit is ${limit}, so no new document can be added (a new version of a document it holds can replace it, or delete documents to make room). ${CHUNK_LIMIT_ADVICE}`,
    );
  }
}

/** Thrown by an atomic ingestion that refused a file; carries every file's outcome. */
export class IngestionFailed extends DomainError {
  constructor(
    readonly outcomes: FileOutcome[],
    first: FileOutcome,
  ) {
    super(first.error!.code as DomainError['code'], first.error!.message, { documents: outcomes });
  }
}
