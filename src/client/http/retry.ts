import { retryAfterMs } from '../errors';

/** The longest `Retry-After` the client waits for; a server asking for more gets backoff (5xx) or the error (429). */
export const MAX_RETRY_AFTER_MS = 60_000;
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/** 408, 5xx, and 429 only when the caller opted in; never any other 4xx (the same request would fail again). */
export function isRetryableStatus(status: number, retryOn429: boolean): boolean {
  return status === 408 || status >= 500 || (status === 429 && retryOn429);
}

/**
 * How long to wait before retry number `retry` (0 for the first), or undefined when the server
 * asked for a 429 wait longer than the cap. `Retry-After` is honoured up to 60 s; otherwise
 * exponential backoff from 0.5 s up to 8 s, less up to a quarter at random so clients that failed
 * together do not retry together.
 */
export function retryDelayMs(
  retry: number,
  status: number | undefined,
  headers: Headers | undefined,
  random: () => number = Math.random,
): number | undefined {
  const asked = headers ? retryAfterMs(headers) : undefined;
  if (asked !== undefined && asked <= MAX_RETRY_AFTER_MS) return asked;
  if (asked !== undefined && status === 429) return undefined;
  const backoff = Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS);
  return backoff * (1 - 0.25 * random());
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
