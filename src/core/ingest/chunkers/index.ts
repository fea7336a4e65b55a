import type { Metadata, Section } from '../types';
import { fixedChunker } from './fixed';
import { graphemeBoundaryAtOrBefore } from './graphemes';
import { markdownChunker } from './markdown';
import { resolveChunkingOptions, type ChunkingOptions, type ChunkingStrategy } from './options';
import { recursiveChunker } from './recursive';
import { sentenceChunker } from './sentence';
import { finishChunk, type Chunker } from './spans';
import { isLowSurrogate } from './tokenizer';

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
 * non-whitespace character of the input is in at least one chunk. Chunks start and end between grapheme
 * clusters (a space carrying an accent is not trimmed off it), but inside a cluster over chunkSize tokens.
 */
export function chunkSections(sections: Section[], options?: ChunkingOptions): TextChunk[] {
  const chunkPart = partChunker(options);
  const chunks: TextChunk[] = [];
  for (const section of sections) {
    for (let start: number | undefined = 0; start !== undefined;) start = chunkPart(section, start, chunks);
  }
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
  const chunkPart = partChunker(options);
  const chunks: TextChunk[] = [];
  for (let i = 0; i < sections.length; i++) {
    const section = sections[i]!;
    for (let start: number | undefined = 0; start !== undefined;) {
      start = chunkPart(section, start, chunks);
      // A large section's parts each take a look at the clock (only a large section has parts).
      if (section.text.length > MAX_PART_CHARS) await pause();
    }
    // A few sections between looks at the clock: most are short (a CSV row, a paragraph).
    if (i % PAUSE_EVERY_SECTIONS === PAUSE_EVERY_SECTIONS - 1) await pause();
  }
  return chunks;
}

const PAUSE_EVERY_SECTIONS = 32;

/**
 * Sections longer than this are chunked in parts of at most this many characters, cut at a paragraph
 * break (else a line break, else a space, else between grapheme clusters): one 4.2 MB section (a Markdown
 * file of base64 without a blank line) held the server's thread for 8 s in one chunker call. A part takes
 * at most some tens of milliseconds. The last chunk of a part (cut short by the part's end, and without
 * the overlap a next chunk would have had) is dropped, and the next part starts where it started: chunks
 * straddle part ends as they would in one call, with the same overlap.
 */
export const MAX_PART_CHARS = 32_768;

/** The end of the part starting at `start` (exported for tests): the whole section when it is short or atomic. */
export function partEndOf(section: Section, start: number): number {
  if (section.atomic || section.text.length <= MAX_PART_CHARS) return section.text.length;
  return partEnd(section.text, start);
}

/**
 * Where a chunk's text starts once the whitespace before it is taken back (but not past `floor`): the
 * chunker's tokens carry their leading space, so chunking again from there meets the same tokens.
 */
function withLeadingSpace(text: string, at: number, floor: number): number {
  let from = at;
  while (from > floor + 1 && /\s/.test(text[from - 1]!)) from--;
  return from;
}

/** Where the part starting at `start` ends: after the last separator in its second half, else at the limit. */
function partEnd(text: string, start: number): number {
  const limit = start + MAX_PART_CHARS;
  if (limit >= text.length) return text.length;
  const floor = start + MAX_PART_CHARS / 2;
  // Searched within the window only: lastIndexOf on the whole text walks back to its start.
  const window = text.slice(floor, limit);
  for (const separator of ['\n\n', '\n']) {
    const at = window.lastIndexOf(separator);
    if (at >= 0) return floor + at + separator.length;
  }
  const space = /\s(?=\S*$)/.exec(window);
  // After a space, unless the space carries an accent (" \u0301"): then before it.
  if (space) return graphemeBoundaryAtOrBefore(text, floor + space.index + 1);
  // No whitespace at all: a hard cut between grapheme clusters (inside one only if it fills the part).
  const before = graphemeBoundaryAtOrBefore(text, limit);
  if (before > start) return before;
  return isLowSurrogate(text.charCodeAt(limit)) ? limit - 1 : limit;
}

/**
 * Appends the chunks of the part of a section starting at `start` to `out`, with the options resolved
 * once, and returns where the next part starts (undefined after the section's last part).
 */
function partChunker(
  options?: ChunkingOptions,
): (section: Section, start: number, out: TextChunk[]) => number | undefined {
  const { strategy, chunkSize, chunkOverlap } = resolveChunkingOptions(options);
  const chunker = CHUNKERS[strategy];
  return (section, start, out) => {
    const end = partEndOf(section, start);
    const text = start === 0 && end === section.text.length ? section.text : section.text.slice(start, end);
    const spans = section.atomic
      ? [finishChunk(text, 0, text.length)].filter((s) => s !== undefined)
      : chunker(text, { chunkSize, chunkOverlap });
    // Not the last part: its last chunk is made again, whole, at the start of the next part.
    const last = spans.at(-1);
    const next =
      end < section.text.length && spans.length > 1 && last!.start > 0
        ? start + withLeadingSpace(text, last!.start, spans.at(-2)!.start)
        : undefined;
    const kept = next === undefined ? spans : spans.slice(0, -1);
    for (const span of kept) {
      out.push({
        text: text.slice(span.start, span.end),
        tokenCount: span.tokens,
        metadata: { ...section.metadata },
      });
    }
    return next ?? (end < section.text.length ? end : undefined);
  };
}
