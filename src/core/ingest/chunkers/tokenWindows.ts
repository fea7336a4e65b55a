import { finishChunk, type ChunkSpan } from './spans';
import { tokenBoundaries, type TokenRanges } from './tokenizer';

/**
 * Cuts text[start, end) into windows of at most `size` tokens, each starting `overlap` tokens before
 * the previous one ended. Cuts fall between whole characters (an emoji or a CJK character spread over
 * several byte-level tokens is never split), and each window is re-measured after cutting, because a
 * slice can tokenize into more tokens than the stretch it was cut from.
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
  const spans: ChunkSpan[] = [];
  let from = 0;
  while (from < last) {
    let to = Math.max(from + 1, lastAtOrBelow(tokens, tokens[from]! + size));
    let span = finishChunk(text, start + chars[from]!, start + chars[to]!, ranges);
    while (span !== undefined && span.tokens > size && to > from + 1) {
      to = Math.max(from + 1, Math.min(to - 1, lastAtOrBelow(tokens, tokens[to]! - (span.tokens - size))));
      span = finishChunk(text, start + chars[from]!, start + chars[to]!, ranges);
    }
    if (span !== undefined) spans.push(span);
    if (to >= last) break;
    from = Math.max(from + 1, lastAtOrBelow(tokens, tokens[to]! - overlap));
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
