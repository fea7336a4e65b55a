import { describe, expect, it } from 'vitest';
import {
  CHUNK_PAGE_SIZE,
  chunkCountLabel,
  chunkNumberOf,
  pageOfChunk,
} from '../../../../src/renderer/src/features/inspect/chunkPages';

describe("Inspect's chunk counts and Go to chunk", () => {
  it('counts with thousands separators, and a bounded count with a plus', () => {
    expect(chunkCountLabel(450_000, { search: false, atLeast: false })).toBe('450,000 chunks');
    expect(chunkCountLabel(1, { search: false, atLeast: false })).toBe('1 chunk');
    expect(chunkCountLabel(434_641, { search: true, atLeast: false })).toBe('434,641 matching chunks');
    expect(chunkCountLabel(1, { search: true, atLeast: false })).toBe('1 matching chunk');
    expect(chunkCountLabel(10_000, { search: true, atLeast: true })).toBe('10,000+ matching chunks');
  });

  it('takes a chunk number as the chunks show it, and opens its page', () => {
    for (const typed of ['12345', ' 12345 ', '#12345', '12,345', '# 12,345', '12 345']) {
      expect(chunkNumberOf(typed, 450_000), typed).toEqual({ chunk: 12_345 });
    }
    expect(chunkNumberOf('1', 1)).toEqual({ chunk: 1 });
    expect(chunkNumberOf('450000', 450_000)).toEqual({ chunk: 450_000 });
    expect(pageOfChunk(1)).toBe(1);
    expect(pageOfChunk(CHUNK_PAGE_SIZE)).toBe(1);
    expect(pageOfChunk(CHUNK_PAGE_SIZE + 1)).toBe(2);
    expect(pageOfChunk(450_000)).toBe(450_000 / CHUNK_PAGE_SIZE);
  });

  it('refuses what is not a chunk number of the document, saying which numbers are', () => {
    const refusal = { error: 'Type a chunk number from 1 to 450,000.' };
    for (const typed of [
      '',
      '0',
      '450001',
      '-3',
      '1.5',
      '1e3',
      'abc',
      '12,34',
      '1,2345',
      '#',
      '9'.repeat(20),
    ]) {
      expect(chunkNumberOf(typed, 450_000), typed).toEqual(refusal);
    }
  });
});
