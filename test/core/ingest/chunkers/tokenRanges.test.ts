import { describe, expect, it } from 'vitest';
import { wholeText } from '../../../../src/core/ingest/chunkers/spans';
import { countTokens, TokenRanges } from '../../../../src/core/ingest/chunkers/tokenizer';
import { seededRandom } from '../../../helpers/seeded';
import { fixtureTexts, randomText } from './chunkProperties';

/**
 * Atoms that meet cl100k's regex at its edges: contractions, digit runs (cut in threes), punctuation
 * followed by newlines, runs of spaces before words, CRLF, tabs, non-breaking and ideographic spaces,
 * accented letters, CJK and emoji (surrogate pairs).
 */
const ATOMS = [
  'word',
  ' word',
  'Hello',
  "don't",
  "we'll",
  "'s",
  "'VE",
  '12345',
  ' 7',
  '3.14159',
  '.',
  '!?',
  '...\n',
  ',',
  ' (',
  ')',
  ' ',
  '  ',
  '   ',
  '\n',
  '\n\n',
  '\r\n',
  '\t',
  ' \n ',
  '\u00a0',
  '\u3000',
  'Grüße',
  ' Köln',
  '日本語',
  '😀',
  ' 👍🏽',
  '--',
  '#',
  '`code`',
];

function atomText(rng: () => number, atoms: number): string {
  let text = '';
  for (let i = 0; i < atoms; i++) text += ATOMS[Math.floor(rng() * ATOMS.length)];
  return text;
}

/** Every range of `text` the rng picks, plus ranges starting or ending at each whitespace edge. */
function expectExactCounts(text: string, rng: () => number, samples: number): void {
  const ranges = TokenRanges.of(text);
  expect(ranges, 'no long run in these texts: they are indexed').not.toBeNull();
  const check = (start: number, end: number) => {
    const expected = countTokens(text.slice(start, end));
    expect(ranges!.count(start, end), `${JSON.stringify(text.slice(start, end))} [${start}, ${end})`).toBe(
      expected,
    );
    const limit = Math.floor(rng() * (expected + 2));
    expect(ranges!.countUpTo(start, end, limit)).toBe(expected > limit ? false : expected);
  };
  for (let i = 0; i < samples; i++) {
    const a = Math.floor(rng() * (text.length + 1));
    const b = Math.floor(rng() * (text.length + 1));
    check(Math.min(a, b), Math.max(a, b));
  }
  // The chunkers' ranges: after whitespace to before whitespace.
  const edges: number[] = [0, text.length];
  for (let i = 1; i < text.length; i++) if (/\s/.test(text[i - 1]!) !== /\s/.test(text[i]!)) edges.push(i);
  for (let i = 0; i < samples; i++) {
    const a = edges[Math.floor(rng() * edges.length)]!;
    const b = edges[Math.floor(rng() * edges.length)]!;
    check(Math.min(a, b), Math.max(a, b));
  }
}

describe('TokenRanges', () => {
  it('counts any range of seeded texts as countTokens counts its slice', () => {
    const rng = seededRandom(9).next;
    for (let t = 0; t < 60; t++) expectExactCounts(atomText(rng, 20 + Math.floor(rng() * 400)), rng, 150);
  });

  it('counts ranges of the shared fixtures and of mixed random text exactly', () => {
    const rng = seededRandom(10).next;
    for (const { text } of fixtureTexts()) {
      if (TokenRanges.of(text) === null) continue;
      expectExactCounts(text, rng, 200);
    }
    for (let seed = 1; seed <= 10; seed++) {
      const text = randomText(seed, 3_000);
      if (TokenRanges.of(text) !== null) expectExactCounts(text, rng, 200);
    }
  });

  it('counts ranges that start inside a digit run, a word or a contraction', () => {
    const text = "It's 1234567 o'clock, and they'll say   Hello.\n\nNext";
    const rng = seededRandom(11).next;
    const ranges = TokenRanges.of(text)!;
    for (let start = 0; start < text.length; start++) {
      for (let end = start; end <= text.length; end++) {
        expect(ranges.count(start, end)).toBe(countTokens(text.slice(start, end)));
      }
    }
    expectExactCounts(text, rng, 50);
  });

  it('leaves texts with runs countTokens cuts in pieces, and very long texts, to countTokens', () => {
    expect(TokenRanges.of('a'.repeat(300))).toBeNull();
    expect(TokenRanges.of(`word ${' '.repeat(400)} word`)).toBeNull();
    expect(TokenRanges.of('word '.repeat(1_000_000))).toBeNull();
    expect(TokenRanges.of('word '.repeat(1_000))).not.toBeNull();
  });
});

describe('wholeText', () => {
  it('counts a long text that still fits from its index, exactly', () => {
    // 2,100 characters (past the index-first length for 512 tokens) of one-token words: it fits.
    const text = ` ${' international'.repeat(150)} `;
    expect(text.length).toBeGreaterThanOrEqual(512 * 4);
    const whole = wholeText(text, 512);
    const start = text.length - text.trimStart().length;
    const end = text.trimEnd().length;
    expect(whole).toEqual({ fits: { start, end, tokens: countTokens(text.trim()) } });
  });

  it('hands a text too large for one chunk over with its index, short or long', () => {
    const short = 'a b c d '.repeat(100);
    const long = 'word '.repeat(2_000);
    for (const text of [short, long]) {
      const whole = wholeText(text, 100);
      expect(whole && 'tooLarge' in whole && whole.ranges?.text).toBe(text);
    }
    const unindexable = 'x'.repeat(5_000);
    const whole = wholeText(unindexable, 100);
    expect(whole && 'tooLarge' in whole && whole.ranges).toBeUndefined();
  });
});
