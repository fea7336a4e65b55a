import type { Metadata, Section } from '../types';
import { fixedChunker } from './fixed';
import { markdownChunker } from './markdown';
import { resolveChunkingOptions, type ChunkingOptions, type ChunkingStrategy } from './options';
import { recursiveChunker } from './recursive';
import { sentenceChunker } from './sentence';
import { finishChunk, type Chunker } from './spans';

export { countTokens } from './tokenizer';
export {
  CHUNKING_STRATEGIES,
  DEFAULT_CHUNK_OVERLAP,
  DEFAULT_CHUNK_SIZE,
  MAX_CHUNK_SIZE,
  MIN_CHUNK_SIZE,
  resolveChunkingOptions,
  type ChunkingOptions,
  type ChunkingStrategy,
} from './options';

export interface TextChunk {
  text: string;
  tokenCount: number;
  metadata: Metadata;
}

const CHUNKERS: Record<ChunkingStrategy, Chunker> = {
  recursive: recursiveChunker,
  fixed: fixedChunker,
  sentence: sentenceChunker,
  markdown: markdownChunker,
};

/**
 * Sections to chunks, in order. Text is never joined across sections, so each chunk carries its
 * section's metadata (a copy). An atomic section is one chunk whatever its size; whitespace-only text
 * gives none. Chunk text is a trimmed slice of the section text, never rewritten, and every
 * non-whitespace character of the input is in at least one chunk.
 */
export function chunkSections(sections: Section[], options?: ChunkingOptions): TextChunk[] {
  const { strategy, chunkSize, chunkOverlap } = resolveChunkingOptions(options);
  const chunker = CHUNKERS[strategy];
  const chunks: TextChunk[] = [];
  for (const section of sections) {
    const spans = section.atomic
      ? [finishChunk(section.text, 0, section.text.length)].filter((s) => s !== undefined)
      : chunker(section.text, { chunkSize, chunkOverlap });
    for (const span of spans) {
      chunks.push({
        text: section.text.slice(span.start, span.end),
        tokenCount: span.tokens,
        metadata: { ...section.metadata },
      });
    }
  }
  return chunks;
}
