import type { TextPool } from './fixtures';
import type { Rng } from './prng';

/** Share of words replaced in each copy: enough that no two copies share a chunk's text (no cache hits). */
const REPLACE_RATE = 0.2;

/** A word not after `&` or `#`, so HTML entities and anchors stay intact. */
const WORD = /(?<![&#\w])\p{L}{3,}/gu;

/** Replaces about a fifth of the words with words of the fixtures' vocabulary. */
export function perturbWords(text: string, rng: Rng, pool: TextPool, rate = REPLACE_RATE): string {
  return text.replace(WORD, (word) => (rng.chance(rate) ? rng.pick(pool.words) : word));
}

/** Perturbs the text between tags only; tags and attributes are left as they are. */
export function perturbHtml(html: string, rng: Rng, pool: TextPool): string {
  return html.replace(/>([^<]+)</g, (_all, text: string) => `>${perturbWords(text, rng, pool)}<`);
}

/** Perturbs every string value of a JSON value (keys are kept, so records keep their shape). */
export function perturbJsonValue(value: unknown, rng: Rng, pool: TextPool): unknown {
  if (typeof value === 'string') return perturbWords(value, rng, pool);
  if (Array.isArray(value)) return value.map((v) => perturbJsonValue(v, rng, pool));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, perturbJsonValue(v, rng, pool)]));
  }
  if (typeof value === 'number')
    return Number.isInteger(value) ? value + rng.int(10) : Math.round(value * (0.5 + rng.next()) * 100) / 100;
  return value;
}

/** A few sentences of the fixtures' prose, perturbed. */
export function prose(rng: Rng, pool: TextPool, minSentences: number, maxSentences: number): string {
  const count = rng.between(minSentences, maxSentences);
  return Array.from({ length: count }, () => perturbWords(rng.pick(pool.sentences), rng, pool)).join(' ');
}

/** A short title of vocabulary words. */
export function title(rng: Rng, pool: TextPool, words = 4): string {
  const text = Array.from({ length: words }, () => rng.pick(pool.words)).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
