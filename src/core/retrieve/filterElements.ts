import { filterNumber, type FilterCondition, type FilterScalar } from './filters';

/**
 * One value of a metadata key as SQLite's json_each yields it: the value itself for a scalar, each
 * element for an array, each member for an object. `type` is json_each's type name ('text', 'integer',
 * 'real', 'true', 'false', 'null', 'array', 'object'); `value` its SQL value as better-sqlite3 reads it.
 */
export interface JsonElement {
  type: string;
  value: unknown;
}

/** A condition that holds for a chunk when any of its elements matches (or, negated, when none does). */
export type ElementCondition = Exclude<FilterCondition, { op: 'exists' }>;

/** Whether the chunk-level result of `condition` is "no element matches" rather than "some element does". */
export const isNegated = (condition: ElementCondition): boolean =>
  condition.op === 'ne' || condition.op === 'nin';

/**
 * A test of one element against `condition`, exactly as the SQL of `filterSql` (db/repositories/search.ts)
 * decides it: `ne` and `nin` are tested as `eq` and `in` here, and negated over the chunk's elements by
 * the caller. Texts compare by their UTF-8 bytes, as SQLite's BINARY collation does. `$in` lists (up to
 * 1,000 values) become sets, since the test runs once per distinct value of a key.
 */
export function elementPredicate(condition: ElementCondition): (element: JsonElement) => boolean {
  switch (condition.op) {
    case 'eq':
    case 'ne':
      return oneOf([condition.value]);
    case 'in':
    case 'nin':
      return oneOf(condition.values);
    default: {
      const { op, value: bound } = condition;
      const holds = (order: number) =>
        op === 'gt' ? order > 0 : op === 'gte' ? order >= 0 : op === 'lt' ? order < 0 : order <= 0;
      if (typeof bound === 'number') {
        return (e) => {
          const n = filterNumber(e.type, e.value);
          return n !== null && holds(n < bound ? -1 : n > bound ? 1 : 0);
        };
      }
      return (e) => e.type === 'text' && typeof e.value === 'string' && holds(compareUtf8(e.value, bound));
    }
  }
}

/** Equal to one of `values`: a string to a JSON string, a number numerically (numeric strings too), a boolean to true or false. */
function oneOf(values: FilterScalar[]): (element: JsonElement) => boolean {
  const strings = new Set(values.filter((v) => typeof v === 'string'));
  const numbers = new Set(values.filter((v) => typeof v === 'number'));
  const types = new Set(values.filter((v) => typeof v === 'boolean').map(String));
  return (e) => {
    if (types.has(e.type)) return true;
    if (e.type === 'text' && strings.has(e.value as string)) return true;
    if (numbers.size === 0) return false;
    const n = filterNumber(e.type, e.value);
    return n !== null && numbers.has(n);
  };
}

/**
 * Orders two strings by their UTF-8 bytes (SQLite's BINARY collation), that is by code points, not by
 * UTF-16 code units: those put a character past U+FFFF (a surrogate pair) before U+E000-U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xPair = x >= 0xd800 && x <= 0xdfff;
    const yPair = y >= 0xd800 && y <= 0xdfff;
    if (xPair !== yPair) return xPair ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
