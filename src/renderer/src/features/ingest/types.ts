/** The wire shapes of the studio's ingestion endpoints (src/core/ingest/jobs.ts, preview.ts). */

import type {
  CHUNKING_STRATEGIES,
  FileOutcome,
  IngestProgress,
  IngestStage,
} from '../../../../shared/uploads';

export type ChunkingStrategy = (typeof CHUNKING_STRATEGIES)[number];

export interface ChunkingSettings {
  strategy: ChunkingStrategy;
  chunkSize: number;
  chunkOverlap: number;
}

/** Which columns a CSV row must fill to be kept (the server's `csvRequiredColumns`). */
export type CsvRowRule = 'named' | 'listed' | 'none';

/**
 * The CSV row rule as the form holds it: `named` (the server's default: every named column), `listed`
 * (the columns typed in `columns`), `none` (every row kept, whatever is empty).
 */
export interface CsvRowsFormValues {
  rule: CsvRowRule;
  columns: string[];
}

/** What an ingestion (and its preview) is sent: the chunking and, unless left to the server, the CSV rule. */
export interface IngestSettings extends ChunkingSettings {
  /** Columns a CSV row must fill to be kept: undefined for every named column, [] for none. */
  csvRequiredColumns?: string[];
}

/**
 * The chunking settings as the form holds them while the user edits: a number field is a string when
 * it does not hold a number (empty, or "-" half typed), as Mantine's NumberInput gives it.
 */
export interface ChunkingFormValues {
  strategy: ChunkingStrategy;
  chunkSize: number | string;
  chunkOverlap: number | string;
}

/** `interrupted`: each file of an ingestion a stop of the studio cut short. */
export type Stage = IngestStage | 'processed' | 'interrupted';

export type JobProgress = IngestProgress;

export type { FileOutcome };

export interface IngestJob {
  id: string;
  listingId: string;
  kind: 'ingest' | 'reingest';
  /** `interrupted`: the studio stopped while it ran (reported after the restart until dismissed). */
  state: 'running' | 'done' | 'failed' | 'cancelled' | 'interrupted';
  startedAt: string;
  finishedAt: string | null;
  progress: JobProgress | null;
  files: { source: string; stage: Stage }[];
  result: {
    documents: FileOutcome[];
    committed: boolean;
    documentCount: number;
    chunkCount: number;
    durationMs: number;
  } | null;
  error: { code: string; message: string } | null;
}

export interface PreviewChunk {
  index: number;
  text: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
}

export interface ChunkPreview {
  source: string;
  format: string;
  chunking: ChunkingSettings;
  totalChunks: number;
  totalTokens: number;
  chunks: PreviewChunk[];
  skippedRows?: { row: number; reason: string }[];
  warnings?: string[];
}

/** A file the user dropped or picked, with its path relative to what was dropped. */
export interface QueuedFile {
  file: File;
  path: string;
  /** Why the last ingestion of it rejected it (kept queued to be tried again once the cause is fixed). */
  rejected?: string;
  /**
   * Of the files this one holds (itself, or an archive's entries), those the last ingestion rejected
   * because another file of it took their name and was stored: ingesting this again replaces that one.
   */
  clashes?: NameClash[];
  /** The file changed (or was removed) on disk after it was added: it can no longer be read or sent. */
  changed?: boolean;
}

/** A file rejected for a name another file of the same ingestion took, and stored. */
export interface NameClash {
  /** The rejected file as the page names it: `x.zip › a.md` for an archive's entry, else its path. */
  file: string;
  /** The file that took the name, named the same way. */
  storedFrom: string;
  /** The name both have in the knowledge base. */
  name: string;
}
