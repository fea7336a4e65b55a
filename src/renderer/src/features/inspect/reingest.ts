import { chunkingError, validChunking } from '../ingest/chunkPreview';
import type { ChunkingFormValues, ChunkingSettings, ChunkingStrategy } from '../ingest/types';
import type { DocumentSummary } from './documentsApi';

const STRATEGIES: readonly string[] = ['recursive', 'sentence', 'markdown', 'fixed'];

/**
 * The chunking a document was ingested with (its metadata), as the re-ingest form starts from; null
 * for documents ingested with their own embeddings (JSONL), which are stored again as they are.
 */
export function chunkingOfDocument(doc: Pick<DocumentSummary, 'metadata'>): ChunkingSettings | null {
  const c = doc.metadata.chunking as Record<string, unknown> | undefined;
  if (!c || typeof c.strategy !== 'string' || !STRATEGIES.includes(c.strategy)) return null;
  return {
    strategy: c.strategy as ChunkingStrategy,
    chunkSize: typeof c.chunkSize === 'number' ? c.chunkSize : 512,
    chunkOverlap: typeof c.chunkOverlap === 'number' ? c.chunkOverlap : 64,
  };
}

export interface ReingestPlan {
  /** The JSON body of POST /studio/documents/:id/reingest (not sent while there is an `error`). */
  body: Partial<ChunkingSettings>;
  /** Same bytes and same settings: the server will answer that nothing changed. */
  unchanged: boolean;
  /** Why the settings cannot be sent as they are. */
  error?: string;
}

/** What re-ingesting `doc` with `settings` sends, and whether it would change anything. */
export function reingestPlan(
  doc: Pick<DocumentSummary, 'metadata'>,
  settings: ChunkingFormValues | null,
): ReingestPlan {
  const current = chunkingOfDocument(doc);
  if (!settings || !current) return { body: {}, unchanged: true };
  const error = chunkingError(settings);
  const unchanged =
    settings.strategy === current.strategy &&
    settings.chunkSize === current.chunkSize &&
    settings.chunkOverlap === current.chunkOverlap;
  return { body: { ...validChunking(settings) }, unchanged, error };
}
