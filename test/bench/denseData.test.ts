import { describe, expect, it } from 'vitest';
import { TextProjection } from '../../bench/denseData';
import { parseOptions } from '../../bench/options';
import { seededRng } from '../../bench/prng';

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
};

describe('TextProjection (retrieve.dense --dense-vectors text)', () => {
  it("keeps the offline model's cosines on average and its neighbours' order, at unit length", () => {
    const rng = seededRng(3);
    const projection = new TextProjection(seededRng(9), 1024, 100);
    const base = Float32Array.from({ length: 100 }, () => rng.next() * 2 - 1);
    // Vectors from near the base to unrelated to it.
    const others = [0.1, 0.5, 1, 2, 4].map((noise) => base.map((x) => x + (rng.next() * 2 - 1) * noise));
    const before = others.map((v) => cosine(base, v));
    const after = others.map((v) => cosine(projection.project(base), projection.project(v)));
    for (let i = 0; i < others.length; i++) expect(Math.abs(after[i]! - before[i]!)).toBeLessThan(0.1);
    expect([...after].sort((a, b) => b - a)).toEqual(after);
    const projected = projection.project(base);
    expect(Math.hypot(...projected)).toBeCloseTo(1, 5);
    // Seeded: the same projection twice.
    expect(new TextProjection(seededRng(9), 1024, 100).project(base)).toEqual(projected);
  });

  it('leaves the zero vector (a text without a known word) zero, and refuses another width', () => {
    const projection = new TextProjection(seededRng(9), 1024, 100);
    expect(projection.project(new Float32Array(100)).every((x) => x === 0)).toBe(true);
    expect(() => projection.project(new Float32Array(300))).toThrow('expected 100 dimensions, got 300');
  });

  it('is chosen with --dense-vectors, and another value is refused', () => {
    expect(parseOptions(['--dense-vectors', 'text']).denseVectors).toBe('text');
    expect(parseOptions([]).denseVectors).toBeUndefined();
    expect(() => parseOptions(['--dense-vectors', 'random'])).toThrow(
      "--dense-vectors: 'random' is not clustered or text.",
    );
  });
});
