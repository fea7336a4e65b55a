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
  const chunkSection = sectionChunker(options);
  const chunks: TextChunk[] = [];
  for (const section of sections) chunkSection(section, chunks);
  return chunks;
}

/**
 * chunkSections, awaiting `pause()` between sections, so a server thread can give its event loop a turn:
 * the 20,840 rows of a 6.5 MB CSV file took 100-220 ms to chunk in one go. `pause` decides how often it
 * yields (EventLoopTurns); the chunks are the same as chunkSections' (each section is chunked alone).
 */
export async function chunkSectionsPausing(
  sections: Section[],
  options: ChunkingOptions | undefined,
  pause: () => Promise<void>,
): Promise<TextChunk[]> {
  const chunkSection = sectionChunker(options);
  const chunks: TextChunk[] = [];
  for (let i = 0; i < sections.length; i++) {
    chunkSection(sections[i]!, chunks);
    // A few sections between looks at the clock: most are short (a CSV row, a paragraph).
    if (i % PAUSE_EVERY_SECTIONS === PAUSE_EVERY_SECTIONS - 1) await pause();
  }
  return chunks;
}

const PAUSE_EVERY_SECTIONS = 32;

/** Appends one section's chunks to `out`, with the options resolved once. */
function sectionChunker(options?: ChunkingOptions): (section: Section, out: TextChunk[]) => void {
  const { strategy, chunkSize, chunkOverlap } = resolveChunkingOptions(options);
  const chunker = CHUNKERS[strategy];
  return (section, out) => {
    const spans = section.atomic
      ? [finishChunk(section.text, 0, section.text.length)].filter((s) => s !== undefined)
      : chunker(section.text, { chunkSize, chunkOverlap });
    for (const span of spans) {
      out.push({
        text: section.text.slice(span.start, span.end),
        tokenCount: span.tokens,
        metadata: { ...section.metadata },
      });
    }
  };
}
