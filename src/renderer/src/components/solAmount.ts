/* What the SOL amount fields hold: parsed and shown without any UI (the form logic uses it too). */

/**
 * A decimal number as typed: `12`, `0.5`, `.5`, `-1` (refused by the checks that follow, with their
 * message), and the exponent forms `1e-9` and `2.5E3`. Nothing else: no hex, no `Infinity`, no commas.
 */
const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** The number a SOL amount field holds, or undefined when it is empty or not a number. */
export function parseSolAmount(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const text = value.trim();
  if (!DECIMAL.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

/** A stored amount as the field first shows it: plain decimals to the lamport, never `1e-9`. */
export function solAmountText(value: number | string): string {
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return '';
  return value.toFixed(9).replace(/\.?0+$/, '');
}
