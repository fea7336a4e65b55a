import { describe, expect, it } from 'vitest';
import {
  chunkText,
  expectLossless,
  expectWellFormed,
  fixtureTexts,
  locate,
  randomText,
} from './chunkProperties';

const sentences = Array.from({ length: 80 }, (_, i) =>
  i % 3 === 0
    ? `Dr. Ng wrote note ${i} on the 3rd day.`
    : i % 3 === 1
      ? `Was item ${i} right?`
      : `Yes, item ${i} was fine!`,
);
const prose = sentences.join(' ');

describe('sentence chunker', () => {
  it('packs whole sentences and overlaps by whole sentences', () => {
    const chunks = chunkText(prose, { strategy: 'sentence', chunkSize: 64, chunkOverlap: 16 });
    expectWellFormed(chunks, 64);
    expectLossless(prose, chunks);
    const spans = locate(prose, chunks);
    for (let i = 0; i < chunks.length; i++) {
      expect(chunks[i]!.text).toMatch(/^(Dr\. Ng wrote|Was item|Yes, item)/);
      expect(chunks[i]!.text).toMatch(/[.?!]$/);
      if (i > 0) expect(spans[i]!.start).toBeLessThan(spans[i - 1]!.end);
    }
  });

  it('splits a sentence longer than chunkSize by tokens', () => {
    const long = `This sentence never ends ${Array.from({ length: 200 }, (_, i) => `clause${i}`).join(' ')}.`;
    const text = `Short one. ${long} Short two.`;
    const chunks = chunkText(text, { strategy: 'sentence', chunkSize: 40, chunkOverlap: 0 });
    expectWellFormed(chunks, 40);
    expectLossless(text, chunks);
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.at(-1)!.text.endsWith('Short two.')).toBe(true);
  });

  it('segments CJK sentences and keeps umlauts and emoji intact', () => {
    const text = '今日は晴れです。明日は雨でしょう！本当ですか？ Grüße 👋🏽 aus Köln. '.repeat(60);
    const chunks = chunkText(text, { strategy: 'sentence', chunkSize: 32, chunkOverlap: 8 });
    expectWellFormed(chunks, 32);
    expectLossless(text, chunks);
    for (const chunk of chunks) expect(chunk.text).toMatch(/[。！？.]$/);
  });

  it('handles a long run without sentence ends quickly', () => {
    const text = `Intro. ${'ab'.repeat(200_000)} Outro.`;
    const started = performance.now();
    const chunks = chunkText(text, { strategy: 'sentence' });
    expect(performance.now() - started).toBeLessThan(5000);
    expectWellFormed(chunks, 512);
    expectLossless(text, chunks);
  });

  it('segments a large text in bounded time', () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `Sentence ${i} is here.`).join(' ');
    const started = performance.now();
    const chunks = chunkText(text, { strategy: 'sentence', chunkSize: 256, chunkOverlap: 32 });
    expect(performance.now() - started).toBeLessThan(5000);
    expectLossless(text, chunks);
  });

  it('loses nothing on the fixtures and random text, and is deterministic', () => {
    for (const text of [...fixtureTexts().map((f) => f.text), randomText(4, 20_000)]) {
      const chunks = chunkText(text, { strategy: 'sentence', chunkSize: 64, chunkOverlap: 16 });
      expectWellFormed(chunks, 64);
      expectLossless(text, chunks);
      expect(chunkText(text, { strategy: 'sentence', chunkSize: 64, chunkOverlap: 16 })).toEqual(chunks);
    }
  });
});
