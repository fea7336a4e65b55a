import {
  countTokens as countCl100k,
  decodeGenerator,
  encode,
  isWithinTokenLimit,
} from 'gpt-tokenizer/encoding/cl100k_base';

/** A document that contains "<|endoftext|>" means the characters, not the control token. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE time grows with the square of a pre-token's length: 50,000 characters without a space take
 * seconds. Runs longer than this are tokenized in pieces of this length, which changes their count by
 * a token or so and leaves ordinary text (words, URLs, CJK sentences) exactly as cl100k counts it.
 */
const MAX_RUN = 256;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN},}|\\s{${MAX_RUN},}`, 'g');

/** Tokens of `text` in cl100k (the tokenizer of OpenAI's embedding models). */
export function countTokens(text: string): number {
  let total = 0;
  for (const [start, end] of tokenizerSegments(text))
    total += countCl100k(text.slice(start, end), PLAIN_TEXT);
  return total;
}

/** The token count when it is at most `limit`, else false; stops early, so a 5 MB text costs no more than `limit`. */
export function countTokensUpTo(text: string, limit: number): number | false {
  let total = 0;
  for (const [start, end] of tokenizerSegments(text)) {
    const count = isWithinTokenLimit(text.slice(start, end), limit - total, PLAIN_TEXT);
    if (count === false) return false;
    total += count;
  }
  return total;
}

/**
 * Positions where the text can be cut between tokens without splitting a character: `tokens[i]`
 * tokens cover exactly `text.slice(0, chars[i])`. Both arrays start at 0 and end at the totals.
 */
export interface TokenBoundaries {
  tokens: number[];
  chars: number[];
}

export function tokenBoundaries(text: string): TokenBoundaries {
  const tokens = [0];
  const chars = [0];
  let tokenBase = 0;
  for (const [start, end] of tokenizerSegments(text)) {
    const ids = encode(text.slice(start, end), PLAIN_TEXT);
    let consumed = 0;
    let offset = start;
    // decodeGenerator pulls one token at a time and yields only whole characters, so at each yield
    // the tokens consumed so far decode to exactly the characters yielded so far.
    const counted = (function* () {
      for (const id of ids) {
        consumed++;
        yield id;
      }
    })();
    for (const piece of decodeGenerator(counted)) {
      offset += piece.length;
      tokens.push(tokenBase + consumed);
      chars.push(Math.min(offset, end));
    }
    tokenBase += ids.length;
    if (chars[chars.length - 1] !== end) {
      tokens.push(tokenBase);
      chars.push(end);
    }
  }
  return { tokens, chars };
}

/** [start, end) ranges to tokenize separately: the text between long runs, and long runs in pieces. */
function tokenizerSegments(text: string): [number, number][] {
  const segments: [number, number][] = [];
  let pos = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    const runStart = match.index;
    const runEnd = runStart + match[0].length;
    if (runStart > pos) segments.push([pos, runStart]);
    for (let start = runStart; start < runEnd;) {
      let end = Math.min(runEnd, start + MAX_RUN);
      if (end < runEnd && isLowSurrogate(text.charCodeAt(end))) end--;
      segments.push([start, end]);
      start = end;
    }
    pos = runEnd;
  }
  if (pos < text.length) segments.push([pos, text.length]);
  return segments;
}

export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
