import { describe, expect, it } from 'vitest';
import {
  chunkText,
  expectLossless,
  expectWellFormed,
  fixtureTexts,
  locate,
  randomText,
} from './chunkProperties';

const numbered = (n: number, words = 12): string =>
  `Sentence number ${n} says ${Array.from({ length: words }, (_, i) => `w${n}x${i}`).join(' ')}.`;

describe('recursive chunker', () => {
  it('keeps a section that fits as one trimmed chunk', () => {
    const chunks = chunkText('  \n Grüße aus Köln 👋 — 日本語。\n\n', { strategy: 'recursive' });
    expect(chunks).toEqual([
      { text: 'Grüße aus Köln 👋 — 日本語。', tokenCount: chunks[0]!.tokenCount, metadata: {} },
    ]);
  });

  it('cuts at paragraph breaks when paragraphs fit', () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) =>
      [0, 1, 2].map((s) => numbered(p * 3 + s)).join(' '),
    );
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text, { strategy: 'recursive', chunkSize: 256, chunkOverlap: 0 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(paragraphs).toContain(chunk.text.split('\n\n')[0]);
      expect(paragraphs).toContain(chunk.text.split('\n\n').at(-1));
    }
    expect(chunks.map((c) => c.text).join('\n\n')).toBe(text);
  });

  it('falls back to sentences inside a long paragraph, overlapping by whole sentences', () => {
    const sentences = Array.from({ length: 60 }, (_, i) => numbered(i, 4));
    const text = sentences.join(' ');
    const chunks = chunkText(text, { strategy: 'recursive', chunkSize: 128, chunkOverlap: 40 });
    expectWellFormed(chunks, 128);
    expectLossless(text, chunks);
    const spans = locate(text, chunks);
    for (let i = 1; i < chunks.length; i++) {
      expect(spans[i]!.start).toBeLessThan(spans[i - 1]!.end);
      expect(chunks[i]!.text).toMatch(/^Sentence number \d+ says/);
      expect(chunks[i]!.text).toMatch(/\.$/);
    }
  });

  it('splits lines, then words, then tokens when nothing coarser is left', () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(words, { strategy: 'recursive', chunkSize: 32, chunkOverlap: 8 });
    expectWellFormed(chunks, 32);
    expectLossless(words, chunks);
    for (const chunk of chunks) expect(chunk.text).toMatch(/^word\d+( word\d+)*$/);
  });

  it('handles a long whitespace-free run quickly', () => {
    // Letters without a period (seeded): a periodic run ('abab…') is found anywhere in itself, and
    // expectLossless could not place the chunks of a section chunked in parts (MAX_PART_CHARS).
    let state = 7;
    const letter = () =>
      String.fromCharCode(97 + (((state = (state * 1103515245 + 12345) & 0x7fffffff) >>> 16) % 26));
    const text = `start ${Array.from({ length: 150_000 }, letter).join('')} end`;
    const started = performance.now();
    const chunks = chunkText(text, { strategy: 'recursive' });
    expect(performance.now() - started).toBeLessThan(5000);
    expectWellFormed(chunks, 512);
    expectLossless(text, chunks);
  });

  it('loses nothing on the fixtures and on random text, at several sizes', () => {
    const texts = [...fixtureTexts().map((f) => f.text), randomText(1, 30_000), randomText(2, 8_000)];
    for (const text of texts) {
      for (const [chunkSize, chunkOverlap] of [
        [16, 0],
        [64, 16],
        [512, 64],
      ] as const) {
        const chunks = chunkText(text, { strategy: 'recursive', chunkSize, chunkOverlap });
        expectWellFormed(chunks, chunkSize);
        expectLossless(text, chunks);
      }
    }
  });

  it('is deterministic', () => {
    const text = randomText(7, 20_000);
    expect(chunkText(text, { strategy: 'recursive', chunkSize: 100 })).toEqual(
      chunkText(text, { strategy: 'recursive', chunkSize: 100 }),
    );
  });
});
