import { afterEach, describe, expect, it } from 'vitest';
import { cachedEmbedder, sha256Hex } from '../../../src/core/embed/cachedEmbedder';
import type { Embedder } from '../../../src/core/embed/embedder';
import { openDataDir } from '../../../src/db/open';
import { SqliteEmbeddingCache } from '../../../src/db/repositories/embeddingCache';
import { tempDir } from '../../helpers/studio';

const dirs: { remove(): void }[] = [];
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

describe('SqliteEmbeddingCache', () => {
  it('stores float32 vectors per content hash and model, and replaces them', () => {
    const db = openDataDir(fresh());
    const cache = new SqliteEmbeddingCache(db);
    const v = Float32Array.from([0.1, -2.5, 3e-8]);
    cache.set('h1', 'model-a', v);
    expect(Array.from(cache.get('h1', 'model-a')!)).toEqual(Array.from(v));
    expect(cache.get('h1', 'model-b')).toBeUndefined();
    expect(cache.get('h2', 'model-a')).toBeUndefined();

    cache.set('h1', 'model-a', Float32Array.from([1, 2]));
    expect(Array.from(cache.get('h1', 'model-a')!)).toEqual([1, 2]);
    const blob = db
      .prepare(`SELECT vector FROM embedding_cache WHERE content_hash = 'h1'`)
      .pluck()
      .get() as Buffer;
    expect(blob.equals(Buffer.from(Float32Array.from([1, 2]).buffer))).toBe(true);
    db.close();
  });

  it('writes many in one transaction, from views into larger buffers too', () => {
    const db = openDataDir(fresh());
    const cache = new SqliteEmbeddingCache(db);
    const backing = Float32Array.from([9, 1, 2, 3, 4, 5]);
    cache.setMany('m', [
      ['a', backing.subarray(1, 3)],
      ['b', backing.subarray(3, 6)],
    ]);
    expect(Array.from(cache.get('a', 'm')!)).toEqual([1, 2]);
    expect(Array.from(cache.get('b', 'm')!)).toEqual([3, 4, 5]);
    db.close();
  });

  it('keeps a re-opened studio from re-embedding unchanged text', async () => {
    const dir = fresh();
    let calls = 0;
    const inner: Embedder = {
      model: 'kbs-offline-hybrid-v1',
      dimensions: 2,
      embed: async (texts) => {
        calls += texts.length;
        return texts.map((t) => Float32Array.from([t.length, 1]));
      },
    };
    let db = openDataDir(dir);
    await cachedEmbedder(inner, new SqliteEmbeddingCache(db)).embed(['chunk one', 'chunk two'], 'document');
    db.close();
    db = openDataDir(dir);
    const cache = new SqliteEmbeddingCache(db);
    const out = await cachedEmbedder(inner, cache).embed(
      ['chunk two', 'chunk one', 'chunk three'],
      'document',
    );
    expect(calls).toBe(3);
    expect(out.map((v) => Array.from(v))).toEqual([
      [9, 1],
      [9, 1],
      [11, 1],
    ]);
    expect(cache.get(sha256Hex('chunk three'), 'kbs-offline-hybrid-v1')).toBeDefined();
    db.close();
  });
});
