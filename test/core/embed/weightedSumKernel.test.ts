import { afterEach, describe, expect, it, vi } from 'vitest';
import { seededRng } from '../../../bench/prng';
import { GloveSentenceModel } from '../../../src/core/embed/offlineGlove';
import { commonComponent } from '../../../src/core/embed/sif';
import { WeightedRowSums } from '../../../src/core/embed/weightedSumKernel';

/**
 * A table whose values range from 1e-20 to 1e20 with both signs: adding the same terms in another order
 * (or fused, or in float32) gives other bits, so only the same additions in the same order agree.
 */
function wildTable(count: number, dimensions: number, seed: number) {
  const rng = seededRng(seed);
  const wild = () => (rng.chance(0.5) ? -1 : 1) * 10 ** (rng.next() * 40 - 20);
  return {
    vectors: Float32Array.from({ length: count * dimensions }, wild),
    weights: Float32Array.from({ length: count }, () => rng.next()),
  };
}

/** The sum as plain JavaScript adds it: one row at a time, in row order, in float64. */
function reference(vectors: Float32Array, weights: Float32Array, d: number, rows: readonly number[]) {
  const sum = new Float64Array(d);
  for (const row of rows) for (let i = 0; i < d; i++) sum[i]! += weights[row]! * vectors[row * d + i]!;
  return sum;
}

/** A kernel over a copy of this table. */
function kernelOf(vectors: Float32Array, weights: Float32Array, dimensions: number) {
  const kernel = WeightedRowSums.create(weights.length, dimensions);
  kernel?.vectors.set(vectors);
  kernel?.weights.set(weights);
  return kernel;
}

const bits = (v: Float64Array) => Array.from(new BigUint64Array(v.buffer, v.byteOffset, v.length));

afterEach(() => vi.restoreAllMocks());

describe('WeightedRowSums (WebAssembly SIMD)', () => {
  it('gives sums bit-identical to adding row by row, for any number of rows', () => {
    for (const dimensions of [2, 8, 100, 102]) {
      const { vectors, weights } = wildTable(500, dimensions, dimensions);
      const kernel = kernelOf(vectors, weights, dimensions);
      expect(kernel).toBeDefined();
      const rng = seededRng(7 * dimensions);
      // Tails of 0-3 rows, and more rows than the kernel takes at once (16,384) with every tail.
      const lengths = [0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 16_384, 16_385, 16_387, 16_388, 40_003];
      for (const length of lengths) {
        const rows = Array.from({ length }, () => rng.int(500));
        expect({ dimensions, length, bits: bits(kernel!.sum(rows)) }).toEqual({
          dimensions,
          length,
          bits: bits(reference(vectors, weights, dimensions, rows)),
        });
      }
    }
  });

  it('detects a different order: the reference with its rows reversed differs', () => {
    // Guards the test above: with these values, the order of the additions shows in the bits.
    const { vectors, weights } = wildTable(50, 100, 1);
    const kernel = kernelOf(vectors, weights, 100)!;
    const rows = Array.from({ length: 40 }, (_, i) => (i * 7) % 50);
    expect(bits(kernel.sum(rows))).not.toEqual(bits(reference(vectors, weights, 100, [...rows].reverse())));
  });

  it('returns a new array each call', () => {
    const { vectors, weights } = wildTable(10, 4, 3);
    const kernel = kernelOf(vectors, weights, 4)!;
    const first = kernel.sum([1, 2, 3]);
    const kept = Array.from(first);
    kernel.sum([4, 5]);
    expect(Array.from(first)).toEqual(kept);
    expect(Array.from(kernel.sum([]))).toEqual([0, 0, 0, 0]);
  });

  it('does not run where it cannot: odd or no dimensions', () => {
    expect(WeightedRowSums.create(10, 7)).toBeUndefined();
    expect(WeightedRowSums.create(10, 0)).toBeUndefined();
    expect(WeightedRowSums.create(-1, 8)).toBeUndefined();
    // Past 4 GB of memory.
    expect(WeightedRowSums.create(11_000_000, 100)).toBeUndefined();
    expect(WeightedRowSums.create(0, 8)?.sum([])).toEqual(new Float64Array(8));
  });

  it('is what the offline model sums with (100 dimensions), and the JavaScript sum where it cannot run', () => {
    const sum = vi.spyOn(WeightedRowSums.prototype, 'sum');
    const model = (dimensions: number) => {
      const words = ['cat', 'dog', 'the'];
      const { vectors } = wildTable(words.length, dimensions, dimensions);
      const table = { dimensions, words, vectors };
      return GloveSentenceModel.of({ table, commonComponent: commonComponent(table) });
    };
    model(100).embed('the cat');
    expect(sum).toHaveBeenCalledTimes(1);
    const odd = model(7).embed('the cat');
    expect(sum).toHaveBeenCalledTimes(1);
    expect(odd.some((x) => x !== 0)).toBe(true);
  });
});
