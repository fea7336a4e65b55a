import { KnowledgeClientError } from '../errors';

/**
 * A query parameter's value as the server reads it. The server takes numbers written in decimal digits
 * only (src/shared/queryNumbers.ts), while `String(5e-7)` is `5e-7` and `String(1e21)` is `1e+21`.
 */
export function queryValue(name: string, value: string | number | boolean): string {
  if (typeof value !== 'number') return String(value);
  if (!Number.isFinite(value))
    throw new KnowledgeClientError(`${name} must be a finite number, not ${value}.`);
  return decimalDigits(value);
}

/**
 * `value` in plain decimal digits, with exactly the digits of `String(value)` (the shortest that read
 * back as the same number): only the exponent is written out, so nothing is rounded.
 */
export function decimalDigits(value: number): string {
  const text = String(value);
  const exponential = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exponential) return text;
  const [, sign, first, rest = '', exponent] = exponential;
  const digits = first! + rest;
  // Where the decimal point goes in `digits`: after the first digit, moved by the exponent.
  const point = 1 + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
