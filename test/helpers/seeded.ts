import { seededRng } from '../../bench/prng';

/** The benchmark's seeded generator (mulberry32) for property tests: the same seed gives the same cases. */
export function seededRandom(seed: number): { next: () => number; pick: <T>(items: readonly T[]) => T } {
  const rng = seededRng(seed);
  return { next: rng.next, pick: rng.pick };
}
