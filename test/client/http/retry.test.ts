import { describe, expect, it } from 'vitest';
import { isRetryableStatus, MAX_RETRY_AFTER_MS, retryDelayMs } from '../../../src/client/http/retry';

const headers = (retryAfter: string) => new Headers({ 'retry-after': retryAfter });

describe('retry policy', () => {
  it('retries 408, 5xx and, only on request, 429', () => {
    expect(
      [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504].filter((s) => isRetryableStatus(s, false)),
    ).toEqual([408, 500, 502, 503, 504]);
    expect(isRetryableStatus(429, true)).toBe(true);
    expect(isRetryableStatus(404, true)).toBe(false);
  });

  it('backs off exponentially from 0.5 s to 8 s, less up to a quarter of jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((retry) => retryDelayMs(retry, 503, undefined, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(retryDelayMs(1, 503, undefined, () => 1)).toBe(750);
    expect(retryDelayMs(0, undefined, undefined, () => 0.5)).toBe(437.5);
  });

  it('honours Retry-After in seconds or as an HTTP date, up to 60 s', () => {
    expect(retryDelayMs(0, 503, headers('3'), () => 0)).toBe(3000);
    expect(retryDelayMs(0, 503, headers('0'), () => 0)).toBe(0);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(retryDelayMs(0, 503, headers(inTenSeconds), () => 0)).toBeGreaterThan(8_000);
    expect(retryDelayMs(0, 503, headers(inTenSeconds), () => 0)).toBeLessThanOrEqual(10_000);
    expect(retryDelayMs(0, 503, headers(String(MAX_RETRY_AFTER_MS / 1000)), () => 0)).toBe(
      MAX_RETRY_AFTER_MS,
    );
  });

  it('falls back to backoff for a 5xx asking too long or nonsense, and gives up on such a 429', () => {
    expect(retryDelayMs(2, 503, headers('600'), () => 0)).toBe(2000);
    expect(retryDelayMs(0, 503, headers('soon'), () => 0)).toBe(500);
    expect(retryDelayMs(0, 429, headers('61'), () => 0)).toBeUndefined();
  });
});
