/** The benchmark's seeded generator (mulberry32) for property tests: the same seed gives the same cases. */
export { seededRng as seededRandom } from '../../bench/prng';
