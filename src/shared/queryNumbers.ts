import { z } from 'zod';

/**
 * Numbers in query strings. `z.coerce.number()` reads them with `Number()`, which takes `0x10` as 16,
 * `1e1` as 10, ` 5 ` as 5 and an empty value as 0 (so `?maxPrice=` kept only free listings): a
 * parameter is now a number written in decimal digits or a 400 naming it. The schema inside stays a
 * number, so the OpenAPI document still says integer or number.
 */
const INTEGER = /^[0-9]+$/;
const DECIMAL = /^-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)$/;

const written = (pattern: RegExp) => (value: unknown) =>
  typeof value === 'string' && pattern.test(value) ? Number(value) : value;

/** A whole number in decimal digits (`0`..`9` only), then `build`'s checks. */
export function queryInteger(build: (n: z.ZodNumber) => z.ZodNumber = (n) => n) {
  const base = z.number({ error: typeOnly('must be a whole number written in decimal digits') }).int();
  return z.preprocess(written(INTEGER), build(base));
}

/** A decimal number (`12`, `0.5`, `-1`; no exponent, no hex, not empty), then `build`'s checks. */
export function queryDecimal(build: (n: z.ZodNumber) => z.ZodNumber = (n) => n) {
  const base = z.number({ error: typeOnly('must be a number written in decimal digits, like 0.5') });
  return z.preprocess(written(DECIMAL), build(base));
}

/**
 * The message for a value that is not a number at all; other checks keep their own messages. Digits
 * past what a double holds (`1` and 400 zeros) read as Infinity, which is not "not written in digits".
 */
function typeOnly(message: string) {
  return (issue: { code?: string; input?: unknown }) =>
    issue.code !== 'invalid_type' ? undefined : issue.input === Infinity ? 'is too large a number' : message;
}
