import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { chunkSections, countTokens, type TextChunk } from '../../../../src/core/ingest/chunkers';

const repoRoot = new URL('../../../..', import.meta.url).pathname;
export const fixturesDir = path.join(repoRoot, '../shared/fixtures/docs');

/** The text files among the shared fixtures, as raw text (their markup is text too). */
export function fixtureTexts(): { name: string; text: string }[] {
  return fs
    .readdirSync(fixturesDir)
    .filter((name) => /\.(md|html|json|csv)$/.test(name))
    .map((name) => ({ name, text: fs.readFileSync(path.join(fixturesDir, name), 'utf8') }));
}

/** Where each chunk sits in the section text (chunks come in order, each an exact slice). */
export function locate(text: string, chunks: TextChunk[]): { start: number; end: number }[] {
  let from = 0;
  return chunks.map((chunk) => {
    const start = text.indexOf(chunk.text, from);
    expect(
      start,
      `chunk is not a slice of the input: ${JSON.stringify(chunk.text.slice(0, 80))}`,
    ).toBeGreaterThanOrEqual(0);
    from = start;
    return { start, end: start + chunk.text.length };
  });
}

/**
 * Every chunk is an exact slice of the input, and every non-whitespace character of the input is in some
 * chunk. Compared on the non-whitespace sequence, where each chunk must start at or before the end of
 * what earlier chunks covered (the furthest such match is taken, so repeated text cannot fake a gap).
 */
export function expectLossless(text: string, chunks: TextChunk[]): void {
  const visible = text.replace(/\s+/g, '');
  let previous = 0;
  let covered = 0;
  for (const chunk of chunks) {
    expect(
      text.includes(chunk.text),
      `chunk is not a slice: ${JSON.stringify(chunk.text.slice(0, 60))}`,
    ).toBe(true);
    const own = chunk.text.replace(/\s+/g, '');
    let best = -1;
    for (
      let at = visible.indexOf(own, previous);
      at !== -1 && at <= covered;
      at = visible.indexOf(own, at + 1)
    )
      best = at;
    expect(best, `text lost before ${JSON.stringify(chunk.text.slice(0, 60))}`).toBeGreaterThanOrEqual(0);
    previous = best;
    covered = Math.max(covered, best + own.length);
  }
  expect(covered).toBe(visible.length);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Trimmed, non-empty, within size, honest token counts, no character split in half. */
export function expectWellFormed(chunks: TextChunk[], chunkSize: number): void {
  for (const chunk of chunks) {
    expect(chunk.text).toBe(chunk.text.trim());
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.tokenCount).toBe(countTokens(chunk.text));
    expect(chunk.tokenCount).toBeLessThanOrEqual(chunkSize);
    expect(LONE_SURROGATE.test(chunk.text)).toBe(false);
  }
}

/** Deterministic pseudo-random text mixing prose, newlines, tabs, emoji, CJK, umlauts and long runs. */
export function randomText(seed: number, length: number): string {
  let state = seed;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
  const atoms = [
    'the',
    'knowledge',
    'base',
    'Grüße',
    'Ölfeld',
    'naïve',
    '日本語のテキスト',
    '中文',
    '👨‍👩‍👧',
    '🎉',
    'x²',
    'end.',
    'really?',
    'wow!',
    '"quoted."',
    'a',
    '(paren)',
    'https://example.com/a?b=c',
    '—',
    '<|endoftext|>',
  ];
  const gaps = [' ', ' ', ' ', ' ', '\n', '\n\n', '\t', '  ', '\r\n', '\u00a0', '\n   \n'];
  let text = '';
  while (text.length < length) {
    if (next(50) === 0) text += 'z'.repeat(200 + next(800));
    else text += atoms[next(atoms.length)]! + gaps[next(gaps.length)]!;
  }
  return text;
}

export function chunkText(text: string, options: Parameters<typeof chunkSections>[1]): TextChunk[] {
  return chunkSections([{ text, metadata: {} }], options);
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** No rule of UAX #29 joins an ASCII letter or digit or a CJK ideograph to what precedes it but Prepend. */
const SURE_START = /[A-Za-z0-9\u4e00-\u9fff]/g;

/**
 * Where the extended grapheme clusters of a text without Prepend characters (U+0600…) begin and end.
 * Segmented in stretches of some thousand characters, each ending before a SURE_START character:
 * iterating over one long string's segments slows down with its length (80,000 characters took seconds).
 */
export function graphemeBoundaries(text: string): Set<number> {
  const boundaries = new Set([text.length]);
  for (let from = 0; from < text.length;) {
    SURE_START.lastIndex = from + 2000;
    const to = SURE_START.exec(text)?.index ?? text.length;
    for (const { index } of graphemes.segment(text.slice(from, to))) boundaries.add(from + index);
    from = to;
  }
  return boundaries;
}

/**
 * Every chunk starts and ends between grapheme clusters (but inside a cluster of more than chunkSize
 * tokens, which no chunk can hold), keeps to chunkSize, shares at most about chunkOverlap tokens with the
 * chunk before it and skips nothing but whitespace: the chunks minus their overlaps put together give the
 * text's content (the chunks placed by placeChunks).
 */
export function expectWholeGraphemes(
  text: string,
  chunks: TextChunk[],
  { chunkSize, chunkOverlap }: { chunkSize: number; chunkOverlap: number },
): void {
  const boundaries = graphemeBoundaries(text);
  const sorted = [...boundaries].sort((a, b) => a - b);
  const tooLarge: [number, number][] = [];
  for (let i = 0; i + 1 < sorted.length; i++) {
    const [from, to] = [sorted[i]!, sorted[i + 1]!];
    if (to - from > 8 && countTokens(text.slice(from, to)) > chunkSize) tooLarge.push([from, to]);
  }
  const onBoundary = (at: number) =>
    boundaries.has(at) || tooLarge.some(([from, to]) => at > from && at < to);
  const spans = placeChunks(text, chunks);
  let previous = { start: 0, end: 0 };
  let content = '';
  chunks.forEach((chunk, i) => {
    const { start, end } = spans[i]!;
    const chars = [...chunk.text];
    const [head, tail] = [chars.slice(0, 6).join(''), chars.slice(-6).join('')];
    const where = `chunk ${i} at ${start}: ${JSON.stringify(head)}…${JSON.stringify(tail)}`;
    expect(onBoundary(start), `starts inside a cluster, ${where}`).toBe(true);
    expect(onBoundary(end), `ends inside a cluster, ${where}`).toBe(true);
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.tokenCount).toBe(countTokens(chunk.text));
    expect(chunk.tokenCount, where).toBeLessThanOrEqual(chunkSize);
    // Trimmed, but for a space that carries an accent: that cluster is kept whole.
    expect(/^\s(?!\p{M})|\s$/u.test(chunk.text), `not trimmed, ${where}`).toBe(false);
    if (i > 0) {
      const shared = text.slice(start, Math.max(start, previous.end));
      expect(countTokens(shared), `overlaps too much, ${where}`).toBeLessThanOrEqual(chunkOverlap + 2);
      expect(text.slice(previous.end, start).trim(), `skips text, ${where}`).toBe('');
    }
    content += text.slice(Math.max(start, previous.end), end);
    previous = { start, end };
  });
  expect(text.slice(previous.end).trim()).toBe('');
  expect(content.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
}

/**
 * Where each chunk sits in the text, when the text repeats itself (a cluster, a word): each chunk starts
 * no earlier than the one before (only a longer one where it did) and no later than the first
 * non-whitespace character after it, the first at the text's first, and the last leaves only whitespace.
 * Of the places that fit, the latest is tried first (overlaps are short), and another when a later chunk
 * then finds no place.
 */
export function placeChunks(text: string, chunks: TextChunk[]): { start: number; end: number }[] {
  const contentAfter = (at: number) => at + (/^\s*/.exec(text.slice(at, at + 1000))?.[0].length ?? 0);
  const spans: { start: number; end: number }[] = [];
  let tries = 0;
  const place = (i: number, previous: { start: number; end: number }): boolean => {
    if (i === chunks.length) return text.slice(previous.end).trim() === '';
    if (++tries > 100_000) return false;
    const chunk = chunks[i]!.text;
    const lowest = i === 0 ? 0 : previous.start + (chunk.length > previous.end - previous.start ? 0 : 1);
    const highest = contentAfter(previous.end);
    // Searched within the places that fit only: lastIndexOf on the whole text walks back to its start.
    const window = text.slice(lowest, highest + chunk.length);
    for (
      let at = window.lastIndexOf(chunk);
      at >= 0;
      at = at === 0 ? -1 : window.lastIndexOf(chunk, at - 1)
    ) {
      spans[i] = { start: lowest + at, end: lowest + at + chunk.length };
      if (place(i + 1, spans[i]!)) return true;
    }
    return false;
  };
  expect(place(0, { start: 0, end: 0 }), 'the chunks do not cover the text in order').toBe(true);
  return spans;
}

/**
 * Seeded text of clusters that tokenize into several tokens each (ZWJ emoji families, flags, letters with
 * combining accents, Hangul syllables spelled in jamo, an Indic conjunct) beside CJK, in long runs
 * without a space (which only token windows can cut) and in Markdown paragraphs under headings. Words
 * carry numbers and no cluster follows itself, so the text hardly repeats itself.
 */
export function clusterText(seed: number, length: number): string {
  let state = seed;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return (state >>> 8) % n;
  };
  const clusters = [
    '👨‍👩‍👧‍👦',
    '👩‍👩‍👦',
    '👨‍👨‍👧‍👧',
    '👩‍❤️‍💋‍👨',
    '🧑🏽‍🚀',
    '🏳️‍🌈',
    '🇩🇪',
    '🇫🇷',
    '🇯🇵',
    '🇰🇷',
    '🇧🇷',
    '🏴󠁧󠁢󠁳󠁣󠁴󠁿',
    'e\u0301',
    'a\u0308\u0304',
    'o\u0302\u0323',
    'n\u0303',
    'u\u0308\u0301',
    '\u1112\u1161\u11ab',
    '\u1100\u116e\u11a8',
    '\u110b\u1165',
    '\u1109\u1165\u11af',
    'क्ष',
    '日',
    '本',
    '語',
    '中',
    '文',
    'x',
  ];
  const words = ['the', 'knowledge', 'base', 'Grüße', '日本語', '한국어', 'naïve', 'end.', 'wow!', ' \u0301'];
  let text = '';
  while (text.length < length) {
    const kind = next(10);
    if (kind === 0) text += `\n\n${'#'.repeat(1 + next(3))} Part ${text.length}\n\n`;
    else if (kind < 4) {
      // Never the same cluster twice in a row: the chunks of a run of one cluster could not be placed.
      for (let i = 20 + next(120), last = -1; i > 0; i--) {
        last = (last + 1 + next(clusters.length - 1)) % clusters.length;
        text += clusters[last]!;
      }
      text += [' ', '\n', '. '][next(3)]!;
    } else {
      for (let i = 3 + next(12); i > 0; i--) text += `${words[next(words.length)]!}${next(100)} `;
      text += clusters[next(clusters.length)]! + [' ', '\n\n', '. '][next(3)]!;
    }
  }
  return text;
}
