import { DomainError } from '../errors';

export { UnsupportedEmbeddingModel } from '../embed/errors';
import type { FileOutcome } from './pipeline';
import { formatBytes } from './zipLimits';

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
    super(
      `The knowledge base would hold ${formatBytes(bytes)} of documents; the studio limit is ${formatBytes(limit)} per knowledge base (use a bulk upload above that).`,
    );
  }
}

export class ChunkLimitExceeded extends DomainError {
  constructor(limit: number, wouldHave: number) {
    super(
      'chunk_limit_exceeded',
      `This upload would bring the knowledge base to ${wouldHave} chunks; the limit is ${limit}. Larger knowledge bases require a creator plan upgrade or contacting support.`,
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
