import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../../src/core/embed/embedder';
import { EmbeddingBudget, EmbeddingsAhead } from '../../../src/core/ingest/embeddingsAhead';

/** An embedder whose calls wait until answered: each text's vector is [its length]. */
function heldEmbedder() {
  const calls: { texts: string[]; answer: () => void }[] = [];
  const embedder: Embedder = {
    model: 'held',
    dimensions: 1,
    embed: (texts) =>
      new Promise((resolve) =>
        calls.push({ texts, answer: () => resolve(texts.map((t) => Float32Array.of(t.length))) }),
      ),
  };
  return { embedder, calls };
}

const texts = (n: number, prefix = 't') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('EmbeddingsAhead', () => {
  it('starts batches ahead within the budget shared by the files, and one more as each is taken', async () => {
    const { embedder, calls } = heldEmbedder();
    const budget = new EmbeddingBudget(3);
    const first = new EmbeddingsAhead(embedder, texts(10), 4, budget);
    // Three batches of four, three started at once.
    expect(first.batchCount).toBe(3);
    expect(calls.map((c) => c.texts)).toEqual([texts(4), texts(8).slice(4), texts(10).slice(8)]);
    // The next file gets nothing ahead until the first takes its batches.
    const second = new EmbeddingsAhead(embedder, texts(5, 's'), 4, budget);
    expect(calls).toHaveLength(3);

    calls.forEach((c) => c.answer());
    expect((await first.next()).map((v) => v[0])).toEqual([2, 2, 2, 2]);
    // Taking one left room for the second file's first batch.
    expect(calls).toHaveLength(4);
    expect(calls[3]!.texts).toEqual(texts(4, 's'));
    await first.next();
    await first.next();
    expect(() => first.next()).toThrow(/taken already/);
    expect(calls).toHaveLength(5);
    expect(budget.batchesInFlight).toBe(2);
    calls.forEach((c) => c.answer());
    expect((await second.next()).map((v) => v[0])).toEqual([2, 2, 2, 2]);
    expect((await second.next()).map((v) => v[0])).toEqual([2]);
    expect(budget.batchesInFlight).toBe(0);
  });

  it('starts a batch when it is taken if the budget left none ahead, and gives back what is not taken', async () => {
    const { embedder, calls } = heldEmbedder();
    const budget = new EmbeddingBudget(2);
    const busy = new EmbeddingsAhead(embedder, texts(8), 4, budget);
    const waiting = new EmbeddingsAhead(embedder, texts(2, 'w'), 4, budget);
    expect(calls).toHaveLength(2);
    const taken = waiting.next();
    expect(calls).toHaveLength(3);
    calls[2]!.answer();
    expect((await taken).map((v) => v[0])).toEqual([2, 2]);

    // A file that stops before taking its batches (cancelled, rejected) gives its budget back.
    busy.close();
    expect(budget.batchesInFlight).toBe(0);
    new EmbeddingsAhead(embedder, texts(8, 'n'), 4, budget);
    expect(calls.slice(3).map((c) => c.texts[0])).toEqual(['n0', 'n4']);
  });
});
