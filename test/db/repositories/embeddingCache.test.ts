import Database from 'better-sqlite3';
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
  it('skips a write that cannot get the lock at once, and writes the next one once it can', () => {
    const db = openDataDir(fresh());
    const cache = new SqliteEmbeddingCache(db);
    // Another connection holds the write lock, as a commit into a knowledge base does for minutes.
    const other = new Database(db.name);
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    try {
      cache.setMany('m', [['h1', Float32Array.of(1)]]);
      cache.set('h2', 'm', Float32Array.of(2));
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Not the connection's 5 s busy wait (twice).
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(cache.get('h1', 'm')).toBeUndefined();
    expect(cache.get('h2', 'm')).toBeUndefined();
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5_000);
    cache.setMany('m', [['h1', Float32Array.of(1)]]);
    expect(Array.from(cache.get('h1', 'm')!)).toEqual([1]);
    // Other failures are still thrown.
    db.close();
    expect(() => cache.set('h3', 'm', Float32Array.of(3))).toThrow(/not open/);
  });

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
