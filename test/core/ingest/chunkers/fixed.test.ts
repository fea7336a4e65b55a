import { describe, expect, it } from 'vitest';
import { countTokens } from '../../../../src/core/ingest/chunkers';
import {
  chunkText,
  expectLossless,
  expectWellFormed,
  fixtureTexts,
  locate,
  randomText,
} from './chunkProperties';

const prose = Array.from({ length: 300 }, (_, i) => `Item ${i} is described in plain words here.`).join(' ');

describe('fixed chunker', () => {
  it('cuts full windows of chunkSize tokens that overlap by chunkOverlap tokens', () => {
    const chunks = chunkText(prose, { strategy: 'fixed', chunkSize: 100, chunkOverlap: 20 });
    expectWellFormed(chunks, 100);
    expectLossless(prose, chunks);
    const spans = locate(prose, chunks);
    for (let i = 0; i < chunks.length - 1; i++) {
      expect(chunks[i]!.tokenCount).toBeGreaterThanOrEqual(97);
      const shared = prose.slice(spans[i + 1]!.start, spans[i]!.end);
      expect(countTokens(shared)).toBeGreaterThanOrEqual(17);
      expect(countTokens(shared)).toBeLessThanOrEqual(22);
    }
  });

  it('does not overlap when chunkOverlap is 0', () => {
    const chunks = chunkText(prose, { strategy: 'fixed', chunkSize: 64, chunkOverlap: 0 });
    const spans = locate(prose, chunks);
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
    expect(chunks.reduce((sum, c) => sum + c.tokenCount, 0)).toBeLessThanOrEqual(
      countTokens(prose) + chunks.length * 2,
    );
  });

  it('never splits an emoji, a CJK character or an umlaut spread over several tokens', () => {
    const text = '👨‍👩‍👧‍👦🏳️‍🌈𝔘𝔫𝔦𝔠𝔬𝔡𝔢 Grüße 鬱龜龘 '.repeat(200);
    const chunks = chunkText(text, { strategy: 'fixed', chunkSize: 17, chunkOverlap: 5 });
    expectWellFormed(chunks, 17);
    expectLossless(text, chunks);
  });

  it('handles long whitespace-free runs quickly', () => {
    const text = 'x'.repeat(300_000) + ' ' + '日本語'.repeat(30_000);
    const started = performance.now();
    const chunks = chunkText(text, { strategy: 'fixed', chunkSize: 512, chunkOverlap: 64 });
    expect(performance.now() - started).toBeLessThan(5000);
    expectWellFormed(chunks, 512);
    expect(chunks.at(-1)!.text.endsWith('日本語')).toBe(true);
  });

  it('loses nothing on the fixtures and random text, and is deterministic', () => {
    for (const text of [...fixtureTexts().map((f) => f.text), randomText(3, 20_000)]) {
      const chunks = chunkText(text, { strategy: 'fixed', chunkSize: 48, chunkOverlap: 12 });
      expectWellFormed(chunks, 48);
      expectLossless(text, chunks);
      expect(chunkText(text, { strategy: 'fixed', chunkSize: 48, chunkOverlap: 12 })).toEqual(chunks);
    }
  });
});
