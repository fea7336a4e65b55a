import { graphemeBoundaryAtOrAfter, graphemeBoundaryAtOrBefore } from './graphemes';
import { finishChunk, type ChunkSpan } from './spans';
import { tokenBoundaries, type TokenRanges } from './tokenizer';

/**
 * Cuts text[start, end) into windows of at most `size` tokens, each starting `overlap` tokens before
 * the previous one ended. Cuts fall between grapheme clusters (an emoji family, a flag, a letter with its
 * accents, a syllable spelled in Hangul jamo is never split): a window's end moves back to the last cluster
 * boundary and the next window's start forward to the next one, so a window never grows past `size` and
 * the overlap only shrinks. A cluster too large for a window of its own (hundreds of marks on one letter)
 * is cut between its characters, as nothing else keeps to `size` and moves on. Each window is re-measured
 * after cutting, because a slice can tokenize into more tokens than the stretch it was cut from.
 */
export function splitByTokens(
  text: string,
  start: number,
  end: number,
  size: number,
  overlap: number,
  ranges?: TokenRanges,
): ChunkSpan[] {
  const { tokens, chars } = tokenBoundaries(text.slice(start, end));
  const last = tokens.length - 1;
  const length = end - start;
  /** Where a window from `fromChar` to token boundary `to` ends: the cluster boundary before it, if any. */
  const endAt = (to: number, fromChar: number): number => {
    const at = chars[to]!;
    if (at >= length) return length;
    const boundary = graphemeBoundaryAtOrBefore(text, start + at) - start;
    return boundary > fromChar ? boundary : at;
  };
  const spans: ChunkSpan[] = [];
  // A window starts at fromChar, at or after token boundary `from` (a cluster may end inside a token).
  let from = 0;
  let fromChar = 0;
  while (fromChar < length && from < last) {
    let to = Math.max(from + 1, lastAtOrBelow(tokens, tokens[from]! + size));
    let toChar = endAt(to, fromChar);
    let span = finishChunk(text, start + fromChar, start + toChar, ranges);
    while (span !== undefined && span.tokens > size && to > from + 1) {
      to = Math.max(from + 1, Math.min(to - 1, lastAtOrBelow(tokens, tokens[to]! - (span.tokens - size))));
      const shorter = endAt(to, fromChar);
      if (shorter === toChar) continue;
      toChar = shorter;
      span = finishChunk(text, start + fromChar, start + toChar, ranges);
    }
    if (span !== undefined) spans.push(span);
    if (toChar >= length) break;
    // The overlap is counted back from where the window ended, which is never passed: no text is skipped.
    const ended = lastAtOrBelow(chars, toChar);
    const next = Math.max(from + 1, lastAtOrBelow(tokens, tokens[ended]! - overlap));
    let nextChar = Math.min(chars[next]!, toChar);
    const boundary = graphemeBoundaryAtOrAfter(text, start + nextChar) - start;
    if (boundary <= toChar) nextChar = boundary;
    from = chars[next] === nextChar ? next : lastAtOrBelow(chars, nextChar);
    fromChar = nextChar;
  }
  return spans;
}

/** Index of the last value <= limit in an ascending array (0 when none is). */
function lastAtOrBelow(sorted: number[], limit: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sorted[mid]! <= limit) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
