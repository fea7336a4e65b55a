import { decodeGenerator, encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { PLAIN_TEXT, tokenizerSegments } from './tokenCount.mjs';

export { countTokens, countTokensUpTo, isLowSurrogate, TokenRanges } from './tokenCount.mjs';

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
