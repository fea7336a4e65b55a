import { FiltersSchema, type Filters } from '../../shared/retrieval';
import { parseOrThrow } from '../validation';

export type FilterScalar = string | number | boolean;

/**
 * One condition on one metadata key, values kept apart from any SQL: the repository binds them as
 * parameters, so a filter can never change the shape of a query.
 */
export type FilterCondition =
  | { op: 'eq' | 'ne'; value: FilterScalar }
  | { op: 'gt' | 'gte' | 'lt' | 'lte'; value: string | number }
  | { op: 'in' | 'nin'; values: FilterScalar[] }
  | { op: 'exists'; value: boolean };

/** Every condition on `key` must hold; every FieldFilter of a query must hold. */
export interface FieldFilter {
  key: string;
  conditions: FilterCondition[];
}

const RANGE_OPS = ['gt', 'gte', 'lt', 'lte'] as const;

/**
 * Validates raw `filters` (DESIGN §2: exact values or `$eq $ne $gt $gte $lt $lte $in $nin $exists`)
 * and turns them into FieldFilters, in key order so equal filters give equal queries. Throws
 * InvalidInput naming the key and the operator.
 */
export function parseFilters(raw: unknown): FieldFilter[] {
  if (raw === undefined) return [];
  return toFieldFilters(parseOrThrow(FiltersSchema, raw, 'filters', 'filters.'));
}

/** FieldFilters from filters already validated by FiltersSchema. */
export function toFieldFilters(filters: Filters | undefined): FieldFilter[] {
  if (!filters) return [];
  return Object.keys(filters)
    .sort()
    .map((key) => {
      const value = filters[key]!;
      if (typeof value !== 'object') return { key, conditions: [{ op: 'eq', value }] };
      const conditions: FilterCondition[] = [];
      if (value.$eq !== undefined) conditions.push({ op: 'eq', value: value.$eq });
      if (value.$ne !== undefined) conditions.push({ op: 'ne', value: value.$ne });
      for (const op of RANGE_OPS) {
        const bound = value[`$${op}`];
        if (bound !== undefined) conditions.push({ op, value: bound });
      }
      if (value.$in !== undefined) conditions.push({ op: 'in', values: value.$in });
      if (value.$nin !== undefined) conditions.push({ op: 'nin', values: value.$nin });
      if (value.$exists !== undefined) conditions.push({ op: 'exists', value: value.$exists });
      return { key, conditions };
    });
}

/** A number in a filter also matches a metadata string holding that number (CSV cells are strings). */
const NUMERIC_TEXT = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/**
 * The numeric value a metadata value has for filtering: JSON numbers as they are, decimal strings
 * parsed, anything else none. `type` is SQLite's json_each type name.
 */
export function filterNumber(type: string, value: unknown): number | null {
  if (type === 'integer' || type === 'real') return typeof value === 'number' ? value : Number(value);
  if (type === 'text' && typeof value === 'string' && NUMERIC_TEXT.test(value)) return Number(value);
  return null;
}
