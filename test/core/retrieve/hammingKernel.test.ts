import { describe, expect, it } from 'vitest';
import { HammingSpace, hammingKernelBytes, SELECT_CAPACITY } from '../../../src/core/retrieve/hammingKernel';
import { codeBytes, nearestPositions, signCode } from '../../../src/core/retrieve/signCodes';
import { seededRng } from '../../../bench/prng';

/** mulberry32, the benchmark's generator: the same random data on every run. */
const rng = (seed: number) => seededRng(seed).next;

const popcount = (x: number) => {
  let n = 0;
  for (let v = x; v; v &= v - 1) n++;
  return n;
};

/** The plain JS reference: bits that differ between two codes. */
function hamming(a: Uint8Array, aAt: number, b: Uint8Array, bytes: number): number {
  let d = 0;
  for (let i = 0; i < bytes; i++) d += popcount(a[aAt + i]! ^ b[i]!);
  return d;
}

describe('WebAssembly Hamming kernel', () => {
  it('is a valid WebAssembly module exporting scan and select', () => {
    const { Module } = (
      globalThis as unknown as {
        WebAssembly: {
          Module: { new (b: Uint8Array): object; exports(m: object): unknown; imports(m: object): unknown };
        };
      }
    ).WebAssembly;
    const module = new Module(hammingKernelBytes());
    expect(Module.exports(module)).toEqual([
      { name: 'scan', kind: 'function' },
      { name: 'select', kind: 'function' },
    ]);
    expect(Module.imports(module)).toEqual([{ module: 'env', name: 'memory', kind: 'memory' }]);
  });

  for (const bytesPerCode of [32, 128, 192, 384]) {
    it(`gives the same distances as a JS popcount for ${bytesPerCode * 8}-bit codes`, () => {
      const random = rng(bytesPerCode);
      const count = 1_537;
      const space = new HammingSpace(count, bytesPerCode);
      for (let i = 0; i < space.codes.length; i++) space.codes[i] = Math.floor(random() * 256);
      for (let trial = 0; trial < 3; trial++) {
        const query = Uint8Array.from({ length: bytesPerCode }, () => Math.floor(random() * 256));
        const distances = space.distancesTo(query);
        const expected = Array.from({ length: count }, (_, i) =>
          hamming(space.codes, i * bytesPerCode, query, bytesPerCode),
        );
        expect(Array.from(distances)).toEqual(expected);
      }
    });
  }

  it('splits large sets with the helper thread: same distances and histogram as one thread', () => {
    const random = rng(3);
    const count = 40_001;
    const bytesPerCode = 128;
    const alone = new HammingSpace(count, bytesPerCode, { parallel: false });
    const shared = new HammingSpace(count, bytesPerCode, { parallel: true });
    expect(alone.parallel).toBe(false);
    expect(shared.parallel).toBe(true);
    for (let i = 0; i < alone.codes.length; i++) alone.codes[i] = Math.floor(random() * 256);
    shared.codes.set(alone.codes);
    for (let trial = 0; trial < 3; trial++) {
      const query = Uint8Array.from({ length: bytesPerCode }, () => Math.floor(random() * 256));
      const expected = Array.from({ length: count }, (_, i) =>
        hamming(alone.codes, i * bytesPerCode, query, bytesPerCode),
      );
      const histogram = new Uint32Array(bytesPerCode * 8 + 2);
      expect(Array.from(shared.distancesTo(query, histogram))).toEqual(expected);
      const counts = new Array<number>(histogram.length).fill(0);
      for (const d of expected) counts[d]!++;
      expect(Array.from(histogram)).toEqual(counts);
      expect(Array.from(alone.distancesTo(query, histogram))).toEqual(expected);
      expect(Array.from(histogram)).toEqual(counts);
      expect(
        Array.from(nearestPositions(shared.distancesTo(query, histogram), 50, 1024, undefined, histogram)),
      ).toEqual(Array.from(nearestPositions(alone.distancesTo(query), 50, 1024)));
    }
    // Disposed, the set still answers, on one thread.
    shared.dispose();
    expect(shared.parallel).toBe(false);
    const query = new Uint8Array(bytesPerCode).fill(0xaa);
    expect(Array.from(shared.distancesTo(query))).toEqual(Array.from(alone.distancesTo(query)));
  });

  it('selects the nearest positions in WebAssembly exactly as nearestPositions does', () => {
    const random = rng(5);
    // Sizes around the selection's 8 lanes, and a set the helper shares; codes of 32 bytes with few bits
    // set, so that many codes tie at each distance and the cut falls inside a run of ties.
    for (const count of [0, 1, 7, 8, 9, 17, 1_537, 40_001]) {
      const bytesPerCode = count === 40_001 ? 128 : 32;
      const space = new HammingSpace(count, bytesPerCode);
      for (let i = 0; i < space.codes.length; i++) space.codes[i] = random() < 0.1 ? 1 << (i % 8) : 0;
      const query = new Uint8Array(bytesPerCode);
      const histogram = new Uint32Array(bytesPerCode * 8 + 2);
      const distances = Uint16Array.from(space.distancesTo(query, histogram));
      for (const wanted of [0, 1, 5, 8, 20, 400, 808, count - 1, count, count + 3, SELECT_CAPACITY + 1]) {
        if (wanted < 0) continue;
        const expected = Array.from(nearestPositions(distances, wanted, bytesPerCode * 8));
        expect(Array.from(space.nearest(wanted, histogram)), `${count} codes, ${wanted} wanted`).toEqual(
          expected,
        );
      }
    }
  });

  it('scans small sets on one thread (waking the helper would cost more)', () => {
    expect(new HammingSpace(1_000, 128).parallel).toBe(false);
    expect(new HammingSpace(40_000, 128).parallel).toBe(true);
  });

  it('covers the extremes: identical codes at 0, complements at every bit', () => {
    const space = new HammingSpace(2, 64);
    space.codes.fill(0xff, 0, 64);
    const distances = space.distancesTo(new Uint8Array(64).fill(0xff));
    expect(Array.from(distances)).toEqual([0, 512]);
  });

  it('handles an empty set and refuses a query of the wrong length', () => {
    expect(new HammingSpace(0, 32).distancesTo(new Uint8Array(32)).length).toBe(0);
    expect(() => new HammingSpace(3, 32).distancesTo(new Uint8Array(64))).toThrow(/wrong length/);
    expect(() => new HammingSpace(3, 16)).toThrow(/multiple of 32/);
  });
});

describe('sign codes', () => {
  it('set bit i exactly when component i is positive, padded to 256 bits', () => {
    expect(codeBytes(100)).toBe(32);
    expect(codeBytes(1024)).toBe(128);
    expect(codeBytes(1536)).toBe(192);
    const code = signCode(Float32Array.from([0.5, -1, 0, 2, -0.1, 3, 3, 3, 1]));
    expect(code.length).toBe(32);
    expect(code[0]).toBe(0b11101001);
    expect(code[1]).toBe(0b1);
    expect(Array.from(code.subarray(2))).toEqual(new Array(30).fill(0));
  });
});

describe('nearestPositions', () => {
  const reference = (distances: number[], count: number, allowed?: number[]) =>
    distances
      .map((d, i) => ({ d, i }))
      .filter(({ i }) => !allowed || allowed[i])
      .sort((a, b) => a.d - b.d || a.i - b.i)
      .slice(0, count)
      .map(({ i }) => i);

  it('returns the positions of the smallest distances, nearest first, ties in position order', () => {
    const random = rng(7);
    const distances = Uint16Array.from({ length: 5_000 }, () => Math.floor(random() * 60));
    for (const count of [1, 20, 400, 4_999, 5_000, 6_000]) {
      expect(Array.from(nearestPositions(distances, count, 64))).toEqual(
        reference(Array.from(distances), count),
      );
    }
  });

  it('keeps to the allowed positions, returning fewer when fewer are allowed', () => {
    const random = rng(11);
    const distances = Uint16Array.from({ length: 3_000 }, () => Math.floor(random() * 129));
    const allowed = Uint8Array.from({ length: 3_000 }, () => (random() < 0.01 ? 1 : 0));
    const kept = Array.from(allowed).filter(Boolean).length;
    const got = Array.from(nearestPositions(distances, 20, 128, allowed));
    expect(got).toEqual(reference(Array.from(distances), 20, Array.from(allowed)));
    expect(got.every((p) => allowed[p] === 1)).toBe(true);
    expect(Array.from(nearestPositions(distances, 1_000, 128, allowed))).toHaveLength(kept);
  });
});
