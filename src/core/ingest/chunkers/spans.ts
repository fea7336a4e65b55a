import { graphemeBoundaryAtOrAfter, graphemeBoundaryAtOrBefore } from './graphemes';
import { countTokens, countTokensUpTo, TokenRanges } from './tokenizer';

/** A chunk as a range of its section's text, already trimmed, with its token count. */
export interface ChunkSpan {
  start: number;
  end: number;
  tokens: number;
}

/** A piece to pack: a range of the section's text (untrimmed) and the tokens it adds to a chunk. */
export type Piece = ChunkSpan;

export interface SizeOptions {
  chunkSize: number;
  chunkOverlap: number;
  /** The counts of the section text's ranges, when a chunker made them (they equal countTokens of each slice). */
  ranges?: TokenRanges;
}

/** Every strategy: section text in, trimmed chunk ranges out (each at most chunkSize tokens). */
export type Chunker = (text: string, options: SizeOptions) => ChunkSpan[];

const WHITESPACE = /\s/;

/**
 * The range without surrounding whitespace, or undefined when nothing else is in it. Whitespace that
 * carries a combining mark (" \u0301", how an accent is shown on its own) is part of that cluster and stays.
 */
export function trimRange(text: string, start: number, end: number): [number, number] | undefined {
  const from = start;
  const to = end;
  while (start < end && WHITESPACE.test(text[start]!)) start++;
  while (end > start && WHITESPACE.test(text[end - 1]!)) end--;
  if (start === end) return undefined;
  if (start > from) start = Math.max(from, graphemeBoundaryAtOrBefore(text, start));
  if (end < to) end = Math.min(to, graphemeBoundaryAtOrAfter(text, end));
  return [start, end];
}

/** The range without surrounding whitespace, measured; undefined when nothing but whitespace is left. */
export function finishChunk(
  text: string,
  start: number,
  end: number,
  ranges?: TokenRanges,
): ChunkSpan | undefined {
  const range = trimRange(text, start, end);
  if (range === undefined) return undefined;
  const tokens =
    ranges?.text === text ? ranges.count(range[0], range[1]) : countTokens(text.slice(range[0], range[1]));
  return { start: range[0], end: range[1], tokens };
}

/** A text of this many characters per token of chunkSize or more is indexed before it is counted. */
const LIKELY_TOO_LARGE_CHARS_PER_TOKEN = 4;

/**
 * The whole text as one chunk if it fits in chunkSize; `tooLarge` with its trimmed range if not, and the
 * counts of its ranges (TokenRanges) for splitting it, unless it cannot be indexed. A short text is
 * counted up to chunkSize and no further; one long enough that it very likely does not fit (about four
 * characters make a token of English) is indexed first, and its count taken from the index, so its
 * first chunkSize tokens are not counted twice.
 */
export function wholeText(
  text: string,
  chunkSize: number,
): { fits: ChunkSpan } | { tooLarge: [number, number]; ranges?: TokenRanges } | undefined {
  const range = trimRange(text, 0, text.length);
  if (range === undefined) return undefined;
  // Indexed once at most: a text with runs countTokens cuts gives null each time.
  const indexFirst = text.length >= chunkSize * LIKELY_TOO_LARGE_CHARS_PER_TOKEN;
  const indexed = indexFirst ? TokenRanges.of(text) : null;
  const tokens = indexed
    ? indexed.countUpTo(range[0], range[1], chunkSize)
    : countTokensUpTo(text.slice(range[0], range[1]), chunkSize);
  if (tokens !== false) return { fits: { start: range[0], end: range[1], tokens } };
  return { tooLarge: range, ranges: (indexFirst ? indexed : TokenRanges.of(text)) ?? undefined };
}

/**
 * A piece with its tokens as they count inside a chunk: whitespace after it mostly merges into the next
 * word's first token ("end. Next" → "end", ".", " Next"), but line breaks stay tokens of their own.
 * Summing these estimates fills chunks closer to chunkSize than counting each piece with its spaces.
 * A piece over chunkSize is not counted further (Infinity): it is split, never packed.
 */
export function measurePiece(
  text: string,
  start: number,
  end: number,
  chunkSize: number,
  ranges?: TokenRanges,
): Piece {
  let contentEnd = end;
  while (contentEnd > start && WHITESPACE.test(text[contentEnd - 1]!)) contentEnd--;
  const lineBreak = contentEnd < end && text.slice(contentEnd, end).includes('\n') ? 1 : 0;
  const tokens =
    ranges?.text === text
      ? ranges.countUpTo(start, contentEnd, chunkSize)
      : countTokensUpTo(text.slice(start, contentEnd), chunkSize);
  return { start, end, tokens: tokens === false ? Number.POSITIVE_INFINITY : tokens + lineBreak };
}
