import { describe, expect, it } from 'vitest';
import { CHUNKING_STRATEGIES, MAX_PART_CHARS, partEndOf } from '../../../../src/core/ingest/chunkers';
import {
  chunkText,
  clusterText,
  expectLossless,
  expectWholeGraphemes,
  graphemeBoundaries,
} from './chunkProperties';

describe.each(CHUNKING_STRATEGIES)('%s chunker and grapheme clusters', (strategy) => {
  it('starts and ends every chunk between clusters, within size, losing and repeating nothing', () => {
    for (const [seed, sizes] of [
      [1, { chunkSize: 50, chunkOverlap: 10 }],
      // 24 tokens hold every cluster of the text, but a family of four (18 tokens) or a flag with tags
      // (21) with little else.
      [2, { chunkSize: 24, chunkOverlap: 4 }],
      [3, { chunkSize: 37, chunkOverlap: 0 }],
      [4, { chunkSize: 128, chunkOverlap: 30 }],
    ] as const) {
      const text = clusterText(seed, 12_000);
      const chunks = chunkText(text, { strategy, ...sizes });
      expect(chunks.length).toBeGreaterThan(20);
      expectWholeGraphemes(text, chunks, sizes);
    }
  });

  it('keeps clusters whole across the parts of a long section', () => {
    // Runs without a space, so the parts (MAX_PART_CHARS) are cut between clusters, not at whitespace.
    let text = '';
    for (let seed = 10; text.length < MAX_PART_CHARS * 2.5; seed++)
      text += clusterText(seed, 2_000).replace(/\s+/g, '');
    const sizes = { chunkSize: 64, chunkOverlap: 8 };
    const chunks = chunkText(text, { strategy, ...sizes });
    expectWholeGraphemes(text, chunks, sizes);
  });

  it('keeps clusters whole in a sentence longer than the sentence window', () => {
    // Nothing ends a sentence in 30,000 characters: the sentence chunker cuts it where its window ends.
    let text = '';
    for (let seed = 21; text.length < 30_000; seed++)
      text += clusterText(seed, 2_000).replace(/\s+|[.!]/g, '');
    expect(text.length).toBeLessThan(MAX_PART_CHARS);
    const sizes = { chunkSize: 64, chunkOverlap: 8 };
    expectWholeGraphemes(text, chunkText(text, { strategy, ...sizes }), sizes);
  });

  it('cuts a cluster larger than a chunk between its characters, and moves on', () => {
    let state = 9;
    const mark = () =>
      String.fromCharCode(0x300 + ((state = (state * 1103515245 + 12345) & 0x7fffffff) % 0x70));
    const huge = 'a' + Array.from({ length: 500 }, mark).join('');
    const text = `${clusterText(5, 300)} ${huge} ${clusterText(6, 300)}`;
    const at = text.indexOf(huge);
    expect(graphemeBoundaries(text).has(at + 1)).toBe(false);
    const sizes = { chunkSize: 50, chunkOverlap: 10 };
    const chunks = chunkText(text, { strategy, ...sizes });
    expectWholeGraphemes(text, chunks, sizes);
    expectLossless(text, chunks);
    // Every stretch of the cluster is cut once a chunk is full.
    expect(chunks.filter((c) => /^\p{M}{20}/u.test(c.text)).length).toBeGreaterThan(5);
  });
});

describe('the parts of a long section', () => {
  it('end between grapheme clusters, also after a space that carries an accent', () => {
    let run = '';
    for (let seed = 30; run.length < MAX_PART_CHARS * 3; seed++)
      run += clusterText(seed, 2_000).replace(/\s+/g, '');
    // The last space of the first part's second half carries an accent: the part ends before it.
    const accented = MAX_PART_CHARS - 100;
    const text = `${run.slice(0, accented)} \u0301${run.slice(accented)}`;
    const boundaries = graphemeBoundaries(text);
    expect(partEndOf({ text, metadata: {} }, 0)).toBe(accented);
    const ends: number[] = [];
    for (let start = 0; start < text.length; start = ends.at(-1)!)
      ends.push(partEndOf({ text, metadata: {} }, start));
    expect(ends.length).toBeGreaterThan(3);
    for (const end of ends) expect(boundaries.has(end), `part ends at ${end}, inside a cluster`).toBe(true);
  });
});
