import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, describe, expect, it } from 'vitest';
import { cosineDistance } from '../../../src/core/retrieve/cosineDistance';
import { CosineBatch, cosineKernelBytes } from '../../../src/core/retrieve/cosineKernel';
import { seededRng } from '../../../bench/prng';

/** sqlite-vec's own function, the reference both must equal to the bit (NULL: a zero vector). */
const db = new Database(':memory:');
sqliteVec.load(db);
const sqlDistance = db.prepare('SELECT vec_distance_cosine(?, ?)').pluck();
const bytesOf = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const reference = (a: Float32Array, b: Float32Array) =>
  (sqlDistance.get(bytesOf(a), bytesOf(b)) as number | null) ?? NaN;

/** Vectors of mixed scales and signs, some tiny, some exactly zero, some equal to the query. */
function vectors(seed: number, dimensions: number, count: number, query?: Float32Array): Float32Array[] {
  const random = seededRng(seed).next;
  return Array.from({ length: count }, (_, k) => {
    if (k % 11 === 5) return new Float32Array(dimensions);
    if (query && k % 7 === 3) return query.slice();
    const scale = k % 3 === 0 ? 1e-4 : k % 3 === 1 ? 1 : 300;
    return Float32Array.from({ length: dimensions }, () => (random() * 2 - 1.4) * scale);
  });
}

afterAll(() => db.close());

describe('cosine distances as sqlite-vec computes them', () => {
  it('cosineDistance (JavaScript) equals vec_distance_cosine to the bit', () => {
    for (const dimensions of [1, 2, 5, 64, 1024, 3072]) {
      const [query, ...rest] = vectors(dimensions, dimensions, 40);
      for (const v of rest) expect(cosineDistance(query!, v)).toBe(reference(query!, v));
    }
  });

  it('the WebAssembly batch equals it too, for every count of a batch and every group of four', () => {
    for (const dimensions of [1, 3, 100, 1024, 1536, 3072]) {
      const batch = CosineBatch.create(dimensions, 9)!;
      expect(batch.size).toBe(12);
      const query = vectors(dimensions + 1, dimensions, 1)[0]!.map((x) => x + 0.5);
      batch.setQuery(query);
      const candidates = vectors(dimensions + 2, dimensions, 12, query);
      const out = new Float64Array(12);
      for (let count = 1; count <= 12; count++) {
        candidates.slice(0, count).forEach((v, k) => batch.slot(k).set(bytesOf(v)));
        out.fill(-1);
        batch.distances(count, out);
        const want = candidates.slice(0, count).map((v) => reference(query, v));
        expect(Array.from(out.subarray(0, count))).toEqual(want);
        // Nothing past `count` is written.
        expect(Array.from(out.subarray(count)).every((x) => x === -1)).toBe(true);
      }
    }
  });

  it('a new query replaces the last one, sums of squares included', () => {
    const batch = CosineBatch.create(8, 4)!;
    const [a, b, v] = vectors(9, 8, 3);
    const out = new Float64Array(4);
    batch.slot(0).set(bytesOf(v!));
    batch.setQuery(a!);
    batch.distances(1, out);
    expect(out[0]).toBe(reference(a!, v!));
    batch.setQuery(b!);
    batch.distances(1, out);
    expect(out[0]).toBe(reference(b!, v!));
  });

  it('refuses a query of other dimensions and more candidates than it holds', () => {
    const batch = CosineBatch.create(8, 4)!;
    expect(() => batch.setQuery(new Float32Array(7))).toThrow(/7 dimensions, not 8/);
    expect(() => batch.distances(5, new Float64Array(5))).toThrow(/holds 4 vectors, not 5/);
    expect(CosineBatch.create(0, 4)).toBeUndefined();
    expect(CosineBatch.create(8, 0)).toBeUndefined();
  });

  it('is a valid WebAssembly module exporting parts', () => {
    const { Module } = (
      globalThis as unknown as {
        WebAssembly: { Module: { new (b: Uint8Array): object; exports(m: object): { name: string }[] } };
      }
    ).WebAssembly;
    expect(Module.exports(new Module(cosineKernelBytes())).map((e) => e.name)).toEqual(['parts']);
  });
});
