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
