import { CHUNKING_STRATEGIES } from '../../../shared/uploads';
import { InvalidInput } from '../../errors';

export { CHUNKING_STRATEGIES };
export type ChunkingStrategy = (typeof CHUNKING_STRATEGIES)[number];

export interface ChunkingOptions {
  strategy?: ChunkingStrategy;
  /** Tokens (cl100k) per chunk, 16..8192; default 512. */
  chunkSize?: number;
  /** Tokens shared by consecutive chunks, 0..chunkSize-1; default 64 (an eighth of a smaller chunkSize). */
  chunkOverlap?: number;
}

export const DEFAULT_CHUNK_SIZE = 512;
export const DEFAULT_CHUNK_OVERLAP = 64;
export const MIN_CHUNK_SIZE = 16;
export const MAX_CHUNK_SIZE = 8192;

/**
 * Options with defaults filled in, or InvalidInput naming the field. Without an explicit overlap, a
 * chunkSize below 512 gets an eighth of itself as overlap, so `chunkSize: 32` alone is valid.
 */
export function resolveChunkingOptions(options: ChunkingOptions = {}): Required<ChunkingOptions> {
  const { strategy = 'recursive', chunkSize = DEFAULT_CHUNK_SIZE } = options;
  if (!(CHUNKING_STRATEGIES as readonly string[]).includes(strategy)) {
    throw new InvalidInput(
      `strategy must be one of ${CHUNKING_STRATEGIES.join(', ')} (got ${JSON.stringify(strategy)}).`,
    );
  }
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new InvalidInput(
      `chunkSize must be an integer from ${MIN_CHUNK_SIZE} to ${MAX_CHUNK_SIZE} tokens (got ${JSON.stringify(chunkSize)}).`,
    );
  }
  const chunkOverlap = options.chunkOverlap ?? Math.min(DEFAULT_CHUNK_OVERLAP, Math.floor(chunkSize / 8));
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new InvalidInput(
      `chunkOverlap must be an integer from 0 to less than chunkSize (${chunkSize}) tokens (got ${JSON.stringify(chunkOverlap)}).`,
    );
  }
  return { strategy, chunkSize, chunkOverlap };
}
