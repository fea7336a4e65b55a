import type { Metadata } from '../types';

/**
 * Chunk metadata keys the pipeline and the parsers set themselves (DESIGN §4, plus `item` for JSON).
 * A user field of the same name is renamed with a suffix (`row` → `row_2`) rather than overwriting
 * them or being overwritten.
 */
export const RESERVED_METADATA_KEYS: ReadonlySet<string> = new Set([
  'source',
  'format',
  'documentId',
  'chunkIndex',
  'page',
  'row',
  'item',
  'headings',
]);

/**
 * Nested objects become dotted keys (`{ author: { name } }` → `author.name`). Arrays are kept as they
 * are, whatever they hold, so `tags: ['a', 'b']` stays a list that metadata filters can match.
 * An empty nested object is kept as `{}` so no field disappears.
 */
export function flattenFields(value: Record<string, unknown>, prefix = ''): [string, unknown][] {
  const entries: [string, unknown][] = [];
  for (const [key, field] of Object.entries(value)) {
    const path = prefix + key;
    if (isPlainObject(field) && Object.keys(field).length > 0)
      entries.push(...flattenFields(field, `${path}.`));
    else entries.push([path, field]);
  }
  return entries;
}

/** Per `taken` set, the suffix to try next for each name: names are only ever added to the set. */
const nextSuffix = new WeakMap<Set<string>, Map<string, number>>();

/**
 * `name` if free, else `name_2`, `name_3`, ...; records the chosen name in `taken`. The search resumes
 * where the last one for `name` stopped, so N equal names (a CSV header) cost O(N), not O(N²).
 */
export function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  if (taken.has(candidate)) {
    let suffixes = nextSuffix.get(taken);
    if (!suffixes) nextSuffix.set(taken, (suffixes = new Map()));
    let i = suffixes.get(name) ?? 2;
    for (candidate = `${name}_${i}`; taken.has(candidate);) candidate = `${name}_${++i}`;
    suffixes.set(name, i + 1);
  }
  taken.add(candidate);
  return candidate;
}

/**
 * Entries to metadata: keys colliding with a reserved key or with each other (`a.b` next to `{ a: { b } }`)
 * get a suffix. Built with Object.fromEntries so a `__proto__` field stays a plain own property.
 */
export function toMetadata(entries: [string, unknown][], taken = new Set(RESERVED_METADATA_KEYS)): Metadata {
  return Object.fromEntries(entries.map(([key, value]) => [uniqueName(key, taken), value]));
}

/**
 * Deeper values are refused: metadata is stored as JSON, and JSON.stringify overflows the stack on a few
 * thousand levels, which JSON.parse happily builds.
 */
export const MAX_NESTING = 64;

/** How deeply objects and arrays nest in a value (a scalar is 0), counted without recursion. */
export function nestingDepth(value: unknown): number {
  const scan = new NestingScan(value);
  scan.run(Infinity);
  return scan.deepest;
}

/**
 * nestingDepth a step at a time, for a caller that gives its thread's event loop turns between steps
 * (a single 50 MB JSON object is one value). The scan stops once past MAX_NESTING.
 */
export class NestingScan {
  deepest = 0;
  private readonly stack: [unknown, number][];

  constructor(value: unknown) {
    this.stack = [[value, 0]];
  }

  /** Visits up to `values` values; true when the scan is done. */
  run(values: number): boolean {
    const { stack } = this;
    for (let visited = 0; stack.length > 0 && visited < values; visited++) {
      const [current, depth] = stack.pop() as [unknown, number];
      if (typeof current !== 'object' || current === null) continue;
      this.deepest = Math.max(this.deepest, depth + 1);
      if (this.deepest > MAX_NESTING) return true;
      for (const child of Object.values(current)) stack.push([child, depth + 1]);
    }
    return stack.length === 0;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
