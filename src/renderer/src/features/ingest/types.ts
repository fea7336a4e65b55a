/** The wire shapes of the studio's ingestion endpoints (src/core/ingest/jobs.ts, preview.ts). */

export type ChunkingStrategy = 'recursive' | 'fixed' | 'sentence' | 'markdown';

export interface ChunkingSettings {
  strategy: ChunkingStrategy;
  chunkSize: number;
  chunkOverlap: number;
}

export type Stage = 'reading' | 'parsing' | 'chunking' | 'embedding' | 'storing' | 'done' | 'processed';

export interface JobProgress {
  stage: Stage;
  file?: string;
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  chunks: number;
}

export interface FileOutcome {
  source: string;
  format: string;
  status: 'ingested' | 'unchanged' | 'rejected';
  chunks: number;
  skippedRows?: { row: number; reason: string }[];
  warnings?: string[];
  error?: { code: string; message: string };
}

export interface IngestJob {
  id: string;
  listingId: string;
  state: 'running' | 'done' | 'failed' | 'cancelled';
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
}
