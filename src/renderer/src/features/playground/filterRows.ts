import type { Filters } from '../../../../shared/retrieval';

/** One line of the filter editor: a metadata key, an operator and the value as typed. */
export interface FilterRow {
  id: string;
  key: string;
  op: FilterOp;
  value: string;
}

export const FILTER_OPS = ['=', '≠', '>', '≥', '<', '≤', 'in', 'not in', 'exists'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

const OPERATOR: Record<FilterOp, string> = {
  '=': '$eq',
  '≠': '$ne',
  '>': '$gt',
  '≥': '$gte',
  '<': '$lt',
  '≤': '$lte',
  in: '$in',
  'not in': '$nin',
  exists: '$exists',
};

type Scalar = string | number | boolean;

/**
 * A typed value as JSON would read it: true/false, numbers, else text. Quotes keep text that looks
 * like a number or a boolean as text ("2019").
 */
export function parseScalar(raw: string): Scalar {
  const text = raw.trim();
  const quoted = /^"(.*)"$/s.exec(text);
  if (quoted) return quoted[1]!;
  if (text === 'true' || text === 'false') return text === 'true';
  if (text !== '' && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/** A comma-separated list, each item read as parseScalar reads it. */
export const parseList = (raw: string): Scalar[] =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map(parseScalar);

export interface BuiltFilters {
  /** Undefined when no row is filled in. */
  filters: Filters | undefined;
  /** Row id → what is wrong with it; the filters are only sent when this is empty. */
  errors: Record<string, string>;
}

/**
 * The rows as a /v1/retrieve `filters` object: rows on the same key are ANDed into one operator
 * object; a lone `=` stays an exact value. Blank rows are ignored.
 */
export function buildFilters(rows: readonly FilterRow[]): BuiltFilters {
  const errors: Record<string, string> = {};
  const byKey = new Map<string, Record<string, unknown>>();
  for (const row of rows) {
    const key = row.key.trim();
    const value = row.value.trim();
    if (key === '' && value === '') continue;
    if (key === '') {
      errors[row.id] = 'Name the metadata key.';
      continue;
    }
    const operator = OPERATOR[row.op];
    let parsed: unknown;
    if (row.op === 'exists') {
      if (value !== '' && value !== 'true' && value !== 'false') {
        errors[row.id] = 'Use true or false (empty means true).';
        continue;
      }
      parsed = value !== 'false';
    } else if (value === '') {
      errors[row.id] = `Give a value for ${key}.`;
      continue;
    } else if (row.op === 'in' || row.op === 'not in') {
      parsed = parseList(value);
    } else {
      parsed = parseScalar(value);
      if (['>', '≥', '<', '≤'].includes(row.op) && typeof parsed === 'boolean') {
        errors[row.id] = 'Compare with a number or text (such as an ISO date).';
        continue;
      }
    }
    const ops = byKey.get(key) ?? {};
    if (operator in ops) {
      errors[row.id] = `${key} already has a "${row.op}" condition.`;
      continue;
    }
    ops[operator] = parsed;
    byKey.set(key, ops);
  }
  if (byKey.size === 0) return { filters: undefined, errors };
  const filters: Filters = {};
  for (const [key, ops] of byKey) {
    const only = Object.keys(ops);
    filters[key] = (only.length === 1 && only[0] === '$eq' ? ops.$eq : ops) as Filters[string];
  }
  return { filters, errors };
}

let counter = 0;
export const newFilterRow = (): FilterRow => ({ id: `f${++counter}`, key: '', op: '=', value: '' });
