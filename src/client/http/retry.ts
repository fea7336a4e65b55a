import { retryAfterMs } from '../errors';

/**
 * The longest `Retry-After` the client waits for. A server asking for more gets its error thrown at
 * once (with `retryAfter`), rather than a retry sooner than it asked or a call that hangs for minutes.
 */
export const MAX_RETRY_AFTER_MS = 60_000;
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/**
 * 5xx, and 429 only when the caller opted in. Never another 4xx, 408 included (DESIGN §7): the same
 * request would fail the same way.
 */
export function isRetryableStatus(status: number, retryOn429: boolean): boolean {
  return status >= 500 || (status === 429 && retryOn429);
}

/**
 * How long to wait before retry number `retry` (0 for the first), or undefined for no retry. A
 * readable `Retry-After` is waited for exactly, never less, when it is at most 60 s; longer, and
 * there is no retry. Without one: exponential backoff from 0.5 s up to 8 s, less up to a quarter at
 * random so clients that failed together do not retry together.
 */
export function retryDelayMs(
  retry: number,
  headers: Headers | undefined,
  random: () => number = Math.random,
): number | undefined {
  const asked = headers ? retryAfterMs(headers) : undefined;
  if (asked !== undefined) return asked <= MAX_RETRY_AFTER_MS ? asked : undefined;
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
