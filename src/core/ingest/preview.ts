import { readFile, stat } from 'node:fs/promises';
import { chunkSectionsPausing, resolveChunkingOptions, type ChunkingOptions } from './chunkers';
import { EventLoopTurns } from './eventLoopTurns';
import { InvalidDocument, nothingToRetrieve, PayloadTooLarge, UnsupportedFileType } from './errors';
import type { IngestLimits } from './limits';
import { parseDocument } from './parse';
import { classifySource, isZip, tooLargeMessage } from './sources';
import type { Metadata, SkippedRow } from './types';
import { printableName } from './zipEntryNames';

export interface PreviewChunk {
  index: number;
  text: string;
  tokenCount: number;
  metadata: Metadata;
}

export interface ChunkPreview {
  source: string;
  format: string;
  chunking: Required<ChunkingOptions>;
  /** Every chunk the document would give; `chunks` holds the first `limit` of them. */
  totalChunks: number;
  totalTokens: number;
  chunks: PreviewChunk[];
  skippedRows?: SkippedRow[];
  warnings?: string[];
}

export interface PreviewRequest {
  path: string;
  /** The file's name as the user sees it (its format comes from the extension). */
  source: string;
  chunking?: ChunkingOptions;
  csvRequiredColumns?: string[];
  limit: number;
  limits: Pick<IngestLimits, 'maxFileBytes'>;
}

/**
 * How one document would be chunked, without embedding or storing anything: the same parser and
 * chunker as an ingestion, so what the preview shows is what ingestion would store.
 */
export async function previewChunks(request: PreviewRequest): Promise<ChunkPreview> {
  const { source } = request;
  const chunking = resolveChunkingOptions(request.chunking);
  // An archive is a supported input, not an unsupported type: the message that calls a ZIP a "nested
  // archive" is for a ZIP inside a ZIP.
  if (isZip(source)) {
    throw new InvalidDocument(
      source,
      'an archive holds many documents and the preview shows one: preview a file from it, or ingest the archive.',
    );
  }
  const kind = classifySource(source);
  if ('type' in kind) throw new UnsupportedFileType([{ entry: printableName(source), type: kind.type }]);
  if (kind.format === 'jsonl') {
    throw new InvalidDocument(
      source,
      'pre-built embeddings are stored as they are; there is no chunking to preview.',
    );
  }
  const { size } = await stat(request.path);
  if (size > request.limits.maxFileBytes) {
    throw new PayloadTooLarge(tooLargeMessage(source, size, request.limits.maxFileBytes));
  }
  const bytes = new Uint8Array(await readFile(request.path));
  const parsed = await parseDocument(
    kind.format,
    { bytes, source },
    { csvRequiredColumns: request.csvRequiredColumns },
  );
  // The preview runs on the server's thread too: a large file is chunked in turns with its requests.
  const turns = new EventLoopTurns();
  const pieces = await chunkSectionsPausing(parsed.sections, chunking, () => turns.take());
  if (pieces.length === 0) throw nothingToRetrieve(source, parsed.skippedRows);
  return {
    source,
    format: kind.format,
    chunking,
    totalChunks: pieces.length,
    totalTokens: pieces.reduce((n, c) => n + c.tokenCount, 0),
    chunks: pieces.slice(0, request.limit).map((c, index) => ({
      index,
      text: c.text,
      tokenCount: c.tokenCount,
      metadata: { ...parsed.metadata, ...c.metadata },
    })),
    ...(parsed.skippedRows?.length ? { skippedRows: parsed.skippedRows } : {}),
    ...(parsed.warnings?.length ? { warnings: parsed.warnings } : {}),
  };
}
