import type { FileOutcome, IngestProgress } from '../../shared/uploads';
import type { SourceFormat } from './sources';

export interface StagedChunk {
  text: string;
  tokenCount: number;
  contentHash: string;
  /** Section and document metadata; the store adds source, format, documentId and chunkIndex. */
  metadata: Record<string, unknown>;
  vector: Float32Array;
}

export interface StagedDocument {
  source: string;
  format: SourceFormat;
  contentHash: string;
  bytes: number;
  /** Kept with the document: how it was chunked (to tell "unchanged" apart), skipped rows, warnings. */
  metadata: Record<string, unknown>;
}

/** Receives one document's chunks in batches, so a large file is never whole in memory. */
export interface StagedDocumentWriter {
  /**
   * Stages a batch. A writer of a commit under way returns a promise resolved once the batch is in the
   * transaction: await it before sending many more (a failure of the commit may also reject it).
   */
  add(chunks: StagedChunk[]): void | Promise<void>;
  /**
   * The document is complete; its metadata may be amended (skipped rows, warnings), and its content hash
   * given when it was not known at open (a file hashed while it was read).
   */
  finish(metadata?: Record<string, unknown>, contentHash?: string): void;
  /** The document failed part-way: forget what was staged for it. */
  discard(): void;
}

/** Chunks and vectors of an upload in progress, kept outside the knowledge base until commit. */
export interface Staging {
  open(document: StagedDocument): StagedDocumentWriter;
  /** Finished documents and their chunks. */
  readonly documentCount: number;
  readonly chunkCount: number;
  /** Frees the staging area (a temporary database); safe to call twice. */
  dispose(): void;
}

export interface ExistingDocument {
  id: string;
  source: string;
  contentHash: string;
  chunkCount: number;
  /** How many of the spec's documents it is: 1, or a JSON array file's items that gave chunks. */
  documentCount: number;
  bytes: number;
  metadata: Record<string, unknown>;
}

export interface CommitOptions {
  model: string;
  dimensions: number;
  /**
   * The listing's own model, checked in the commit's transaction (under the write lock): with 'same' it
   * must be `model`; with 'take' (an ingestion that asked for `model`, e.g. an upload's `embedding_model`)
   * a listing without chunks takes `model`, one with chunks must be of it. Otherwise the commit writes
   * nothing and fails with a conflict. Without it the listing's model is not looked at (the store keeps
   * vectors of any model: tests and benchmarks use their own).
   */
  listingModel?: 'same' | 'take';
  maxChunks: number;
  maxKnowledgeBaseBytes: number | null;
}

export interface CommitResult {
  documents: { source: string; documentId: string; chunks: number }[];
  documentCount: number;
  chunkCount: number;
  /**
   * How long the commit's transaction held the database's write lock, ms: meanwhile the server's other
   * writes wait (docs/ingestion.md). Absent where the store does not say.
   */
  writeLockMs?: number;
}

/**
 * A bulk upload that a commit completes in its own transaction: the upload's status becomes `completed`,
 * with this report and the knowledge base's totals after the commit, in the same commit as its documents.
 * A stop at any moment leaves both or neither (an upload left `processing` with its documents stored
 * could only be reported as failed, its file report lost).
 */
export interface CompletedUpload {
  uploadId: string;
  files: FileOutcome[];
  /** The last progress; its chunk count becomes the knowledge base's. */
  progress: IngestProgress;
  updatedAt: string;
}

/**
 * A commit under way: its transaction holds the staged documents, and documents opened here go straight
 * into it, so a large import is written while its next lines are read (the knowledge base's write lock is
 * held meanwhile). Nothing is visible before `finish()`.
 */
export interface CommitSession {
  open(document: StagedDocument): StagedDocumentWriter;
  /** Documents and chunks opened here and finished (the staged ones are not counted). */
  readonly documentCount: number;
  readonly chunkCount: number;
  /**
   * Commits, and marks `upload` completed in the same transaction; rejects (leaving the knowledge base and
   * the upload untouched) when a limit would be crossed or the upload is not in progress.
   */
  finish(upload?: CompletedUpload): Promise<CommitResult>;
  /** Rolls everything back; resolves once the commit's connection is closed. Safe after finish, and twice. */
  abort(): Promise<void>;
}

/** The knowledge base of a listing: documents → chunks → vectors. */
export interface KnowledgeBaseStore {
  documents(listingId: string): ExistingDocument[];
  createStaging(workDir: string): Staging;
  /**
   * Replaces the staged documents' old versions and inserts the new ones in one transaction; throws
   * (leaving the knowledge base untouched) when a limit would be crossed.
   */
  commit(listingId: string, staging: Staging, options: CommitOptions): Promise<CommitResult>;
  /**
   * Starts that commit now and keeps it open for more documents (see CommitSession). Nothing more can be
   * staged in `staging` afterwards.
   */
  beginCommit(listingId: string, staging: Staging, options: CommitOptions): CommitSession;
}
