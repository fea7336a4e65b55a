import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cachedEmbedder, sha256Hex } from '../../../src/core/embed/cachedEmbedder';
import type { Embedder } from '../../../src/core/embed/embedder';
import { openDataDir, type Db } from '../../../src/db/open';
import { SqliteEmbeddingCache } from '../../../src/db/repositories/embeddingCache';
import { tempDir } from '../../helpers/studio';

const dirs: { remove(): void }[] = [];
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

/** What the cache table holds, by hash. */
function stored(db: Db): [string, number[]][] {
  const rows = db
    .prepare(`SELECT content_hash AS hash, vector FROM embedding_cache ORDER BY content_hash`)
    .all() as { hash: string; vector: Buffer }[];
  return rows.map((r) => [r.hash, Array.from(new Float32Array(new Uint8Array(r.vector).buffer))]);
}

describe('SqliteEmbeddingCache', () => {
  it('holds what it cannot write at once, answers from memory, and writes it with the next write', () => {
    const db = openDataDir(fresh());
    const cache = new SqliteEmbeddingCache(db);
    // Another connection holds the write lock, as a commit into a knowledge base does for minutes.
    const other = new Database(db.name);
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    try {
      cache.setMany('m', [['h1', Float32Array.of(1)]]);
      cache.set('h2', 'm', Float32Array.of(2));
      // A newer vector for a held text replaces it.
      cache.set('h1', 'm', Float32Array.of(11));
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Not the connection's 5 s busy wait (three times).
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(stored(db)).toEqual([]);
    expect(cache.heldCount).toBe(2);
    expect(Array.from(cache.get('h1', 'm')!)).toEqual([11]);
    expect(Array.from(cache.get('h2', 'm')!)).toEqual([2]);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5_000);

    cache.setMany('m', [['h3', Float32Array.of(3)]]);
    expect(cache.heldCount).toBe(0);
    expect(stored(db)).toEqual([
      ['h1', [11]],
      ['h2', [2]],
      ['h3', [3]],
    ]);
    // Other failures are still thrown.
    db.close();
    expect(() => cache.set('h4', 'm', Float32Array.of(4))).toThrow(/not open/);
  });

  it('writes held vectors by itself once the lock is free, and holds no more than its bound', async () => {
    const db = openDataDir(fresh());
    // Room for three vectors of 4 dimensions.
    const cache = new SqliteEmbeddingCache(db, 48);
    const other = new Database(db.name);
    other.exec('BEGIN IMMEDIATE');
    const vector = (x: number) => Float32Array.of(x, x, x, x);
    try {
      const batch = Float32Array.from({ length: 20 }, (_, i) => Math.floor(i / 4));
      // Views into one batch's buffer, as the embedders give them.
      cache.setMany(
        'm',
        [0, 1, 2, 3, 4].map((i) => [`h${i}`, batch.subarray(i * 4, i * 4 + 4)] as const),
      );
      batch.fill(-1);
      expect(cache.heldCount).toBe(3);
      expect(cache.get('h3', 'm')).toBeUndefined();
      // Tried again after a second: still locked, still held.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(cache.heldCount).toBe(3);
      expect(Array.from(cache.get('h2', 'm')!)).toEqual(Array.from(vector(2)));
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await vi.waitFor(() => expect(cache.heldCount).toBe(0), { timeout: 5_000 });
    expect(stored(db)).toEqual([0, 1, 2].map((i) => [`h${i}`, Array.from(vector(i))]));
    db.close();
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
