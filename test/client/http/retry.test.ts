import { describe, expect, it } from 'vitest';
import { isRetryableStatus, MAX_RETRY_AFTER_MS, retryDelayMs } from '../../../src/client/http/retry';

const headers = (retryAfter: string) => new Headers({ 'retry-after': retryAfter });

describe('retry policy', () => {
  it('retries 5xx and, only on request, 429; never another 4xx, not even 408', () => {
    expect(
      [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504].filter((s) => isRetryableStatus(s, false)),
    ).toEqual([500, 502, 503, 504]);
    expect(isRetryableStatus(429, true)).toBe(true);
    expect(isRetryableStatus(408, true)).toBe(false);
    expect(isRetryableStatus(404, true)).toBe(false);
  });

  it('backs off exponentially from 0.5 s to 8 s, less up to a quarter of jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((retry) => retryDelayMs(retry, undefined, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(retryDelayMs(1, undefined, () => 1)).toBe(750);
    expect(retryDelayMs(0, undefined, () => 0.5)).toBe(437.5);
  });

  it('honours Retry-After in seconds or as an HTTP date, up to 60 s, whatever the backoff would be', () => {
    expect(retryDelayMs(0, headers('3'), () => 0)).toBe(3000);
    expect(retryDelayMs(0, headers('0'), () => 0)).toBe(0);
    expect(retryDelayMs(4, headers('0.2'), () => 1)).toBe(200);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(retryDelayMs(0, headers(inTenSeconds), () => 0)).toBeGreaterThan(8_000);
    expect(retryDelayMs(0, headers(inTenSeconds), () => 0)).toBeLessThanOrEqual(10_000);
    expect(retryDelayMs(0, headers(String(MAX_RETRY_AFTER_MS / 1000)), () => 0)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('gives up on a Retry-After longer than 60 s rather than retrying sooner; backs off on nonsense', () => {
    expect(retryDelayMs(2, headers('61'), () => 0)).toBeUndefined();
    expect(retryDelayMs(0, headers('120'), () => 0)).toBeUndefined();
    expect(retryDelayMs(0, headers(new Date(Date.now() + 3_600_000).toUTCString()), () => 0)).toBeUndefined();
    expect(retryDelayMs(0, headers('soon'), () => 0)).toBe(500);
  });
});
