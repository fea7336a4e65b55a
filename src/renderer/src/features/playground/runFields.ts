import { TOP_K_MAX } from '../../../../shared/retrieval';

/** A number field as Mantine's NumberInput hands it over: a number, or text ('' or '0.') while typing. */
export type TypedNumber = number | string;

/** A field's value when the query may run with it, else what the field says is wrong. */
export type FieldCheck = { value: number; error?: undefined } | { value?: undefined; error: string };

export const TOP_K_RANGE = `Top k is 1 to ${TOP_K_MAX}`;
export const TOP_K_WHOLE = 'Top k is a whole number of chunks';
export const MIN_SCORE_RANGE = 'Min score is 0 to 1';

const numberOf = (typed: TypedNumber): number =>
  typeof typed === 'number' ? typed : typed.trim() === '' ? Number.NaN : Number(typed);

/**
 * Top k as typed. A value out of range is refused, not put back to a bound, and a decimal is refused,
 * not cut to a whole number: the query runs with the number the field shows or not at all.
 */
export function checkTopK(typed: TypedNumber): FieldCheck {
  const n = numberOf(typed);
  if (Number.isFinite(n) && !Number.isInteger(n)) return { error: TOP_K_WHOLE };
  return Number.isInteger(n) && n >= 1 && n <= TOP_K_MAX ? { value: n } : { error: TOP_K_RANGE };
}

/** Min score as typed; an empty field means none, as 0 does. */
export function checkMinScore(typed: TypedNumber): FieldCheck {
  if (typeof typed === 'string' && typed.trim() === '') return { value: 0 };
  const n = numberOf(typed);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? { value: n } : { error: MIN_SCORE_RANGE };
}

/** What the line beside Run says while a field keeps the query from running; null when none does. */
export function runRefusal(fields: {
  topK: FieldCheck;
  minScore: FieldCheck;
  filtersValid: boolean;
}): string | null {
  const wrong = [
    fields.topK.error !== undefined && 'Top k',
    fields.minScore.error !== undefined && 'Min score',
    !fields.filtersValid && 'the metadata filters',
  ].filter((name): name is string => name !== false);
  if (wrong.length === 0) return null;
  const names = wrong.length === 1 ? wrong[0] : `${wrong.slice(0, -1).join(', ')} and ${wrong.at(-1)}`;
  return `Fix ${names} to run the query.`;
}
