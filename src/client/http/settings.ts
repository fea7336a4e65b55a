import { KnowledgeClientError } from '../errors';

/**
 * The longest delay `setTimeout` honours: Node runs a longer one after 1 ms (browsers at once), so a
 * `timeoutMs` of 3e9 used to time every attempt out immediately.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The settings of one call: its own options, else the client's; each checked the same way for both. */
export interface CallSettings {
  timeoutMs: number;
  maxRetries: number;
  retryOn429: boolean;
}

/** Milliseconds above 0; `Infinity` means no timeout. */
export function checkTimeoutMs(value: unknown): number {
  // `> 0` is false for NaN too.
  if (typeof value === 'number' && value > 0) return value;
  throw new KnowledgeClientError(
    `timeoutMs must be a number of milliseconds above 0 (Infinity for no timeout), not ${shown(value)}.`,
  );
}

export function checkMaxRetries(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new KnowledgeClientError(`maxRetries must be a whole number >= 0, not ${shown(value)}.`);
}

export function checkRetryOn429(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  throw new KnowledgeClientError(`retryOn429 must be true or false, not ${shown(value)}.`);
}

/** A value as a message shows it: a string quoted, so `'1000'` does not read as the number 1000. */
export function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
