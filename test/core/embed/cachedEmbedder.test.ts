import { describe, expect, it } from 'vitest';
import { batchedEmbedder, cachedEmbedder, sha256Hex } from '../../../src/core/embed/cachedEmbedder';
import type { EmbedKind, Embedder, EmbeddingCache } from '../../../src/core/embed/embedder';
import { EmbeddingModelUnavailable } from '../../../src/core/embed/errors';

/** A fake model whose vector encodes the text's length and kind, recording each call. */
function countingEmbedder(dimensions = 3) {
  const calls: { texts: string[]; kind: EmbedKind }[] = [];
  const embedder: Embedder = {
    model: 'fake-model',
    dimensions,
    async embed(texts, kind) {
      calls.push({ texts, kind });
      return texts.map((t) =>
        Float32Array.from({ length: dimensions }, (_, i) => (i === 0 ? t.length : kind === 'query' ? 1 : 0)),
      );
    },
  };
  return { embedder, calls };
}

function memoryCache(): EmbeddingCache & { store: Map<string, Float32Array> } {
  const store = new Map<string, Float32Array>();
  return {
    store,
    get: (hash, model) => store.get(`${model}/${hash}`),
    set: (hash, model, vector) => void store.set(`${model}/${hash}`, vector),
  };
}

describe('cachedEmbedder', () => {
  it('embeds only the texts the cache lacks, and never again on re-ingest', async () => {
    const { embedder, calls } = countingEmbedder();
    const cache = memoryCache();
    const cached = cachedEmbedder(embedder, cache);
    expect(cached.model).toBe('fake-model');
    expect(cached.dimensions).toBe(3);

    const first = await cached.embed(['alpha', 'be', 'gamma'], 'document');
    expect(first.map((v) => v[0])).toEqual([5, 2, 5]);
    expect(calls).toEqual([{ texts: ['alpha', 'be', 'gamma'], kind: 'document' }]);
    expect([...cache.store.keys()]).toContain(`fake-model/${sha256Hex('alpha')}`);

    const again = await cached.embed(['gamma', 'new text', 'alpha'], 'document');
    expect(again.map((v) => v[0])).toEqual([5, 8, 5]);
    expect(calls.slice(1)).toEqual([{ texts: ['new text'], kind: 'document' }]);

    await cached.embed(['alpha', 'be', 'gamma', 'new text'], 'document');
    expect(calls).toHaveLength(2);
  });

  it('embeds a text repeated within one call once and returns it at every position', async () => {
    const { embedder, calls } = countingEmbedder();
    const out = await cachedEmbedder(embedder, memoryCache()).embed(['x', 'yy', 'x', 'x'], 'document');
    expect(calls.map((c) => c.texts)).toEqual([['x', 'yy']]);
    expect(out.map((v) => v[0])).toEqual([1, 2, 1, 1]);
  });

  it('calls the model in batches of the configured size', async () => {
    const { embedder, calls } = countingEmbedder();
    const texts = Array.from({ length: 7 }, (_, i) => 'w'.repeat(i + 1));
    const out = await cachedEmbedder(embedder, memoryCache(), { batchSize: 3 }).embed(texts, 'document');
    expect(calls.map((c) => c.texts.length)).toEqual([3, 3, 1]);
    expect(out.map((v) => v[0])).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('uses setMany when the cache offers it, and the custom hash', async () => {
    const { embedder } = countingEmbedder();
    const written: [string, string, number][] = [];
    const cache: EmbeddingCache = {
      get: () => undefined,
      set: () => {
        throw new Error('set should not be used');
      },
      setMany: (model, entries) => {
        for (const [hash, v] of entries) written.push([model, hash, v[0]!]);
      },
    };
    await cachedEmbedder(embedder, cache, { hash: (t) => `h:${t}` }).embed(['ab', 'cde'], 'document');
    expect(written).toEqual([
      ['fake-model', 'h:ab', 2],
      ['fake-model', 'h:cde', 3],
    ]);
  });

  it('does not cache queries, which asymmetric models embed differently', async () => {
    const { embedder, calls } = countingEmbedder();
    const cache = memoryCache();
    const cached = cachedEmbedder(embedder, cache);
    await cached.embed(['same text'], 'document');
    const [query] = await cached.embed(['same text'], 'query');
    expect(Array.from(query!)).toEqual([9, 1, 1]);
    expect(calls.map((c) => c.kind)).toEqual(['document', 'query']);
    expect(cache.store.size).toBe(1);
  });

  it('treats a cached vector of the wrong size as a miss', async () => {
    const { embedder, calls } = countingEmbedder();
    const cache = memoryCache();
    cache.set(sha256Hex('abc'), 'fake-model', new Float32Array(2));
    const [v] = await cachedEmbedder(embedder, cache).embed(['abc'], 'document');
    expect(Array.from(v!)).toEqual([3, 0, 0]);
    expect(calls).toHaveLength(1);
  });

  it('rejects a model that returns the wrong number or size of vectors', async () => {
    const broken: Embedder = {
      model: 'broken',
      dimensions: 3,
      embed: async (texts) => texts.slice(1).map(() => new Float32Array(3)),
    };
    const cache = memoryCache();
    const attempt = cachedEmbedder(broken, cache).embed(['a', 'b'], 'document');
    await expect(attempt).rejects.toThrow(EmbeddingModelUnavailable);
    await expect(cachedEmbedder(broken, cache).embed(['a', 'b'], 'document')).rejects.toThrow(
      /returned 1 vectors for 2 texts/,
    );
    expect(cache.store.size).toBe(0);
  });

  it('returns nothing for no texts without calling the model', async () => {
    const { embedder, calls } = countingEmbedder();
    expect(await cachedEmbedder(embedder, memoryCache()).embed([], 'document')).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});

describe('batchedEmbedder', () => {
  it('embeds every call anew, in batches, each repeated text once, and checks the vectors', async () => {
    const { embedder, calls } = countingEmbedder();
    const batched = batchedEmbedder(embedder, { batchSize: 2 });
    const out = await batched.embed(['alpha', 'be', 'alpha', 'gamma'], 'document');
    expect(out.map((v) => v[0])).toEqual([5, 2, 5, 5]);
    expect(calls.map((c) => c.texts)).toEqual([['alpha', 'be'], ['gamma']]);
    await batched.embed(['alpha'], 'document');
    expect(calls.at(-1)).toEqual({ texts: ['alpha'], kind: 'document' });

    const short: Embedder = { ...embedder, embed: async () => [] };
    await expect(batchedEmbedder(short).embed(['x'], 'document')).rejects.toBeInstanceOf(
      EmbeddingModelUnavailable,
    );
  });
});
