import type { z } from 'zod';
import { InvalidInput } from './errors';

/** "topK: Too big: expected number to be <=20" — the first issue, led by the field it concerns. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  fallbackField = 'body',
  prefix = '',
): string {
  const issue = issues[0];
  if (!issue) return `${fallbackField}: invalid`;
  const path = issue.path.map(String).join('.');
  const field = path ? prefix + path : fallbackField;
  return `${field}: ${issue.message}`;
}

/** Parses with a zod schema or throws InvalidInput naming the field (`prefix` + its path). */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  fallbackField = 'body',
  prefix = '',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidInput(describeIssues(result.error.issues, fallbackField, prefix), {
    issues: result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
  });
}
