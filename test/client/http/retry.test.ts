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

  it('reads only delta-seconds and IMF-fixdates: anything Date.parse would take for a past date is ignored', () => {
    // Each would have been "a date in the past", so "retry at once"; backoff applies instead.
    for (const nonsense of ['-1', '-0', '+5', '1.5', '0.2', '1e3', '3 s', 'Infinity', 'NaN']) {
      expect(
        retryDelayMs(1, headers(nonsense), () => 0),
        nonsense,
      ).toBe(1000);
    }
    for (const notFixdate of [
      '2030-01-01T00:00:00Z',
      'Sunday, 06-Nov-94 08:49:37 GMT',
      'Sun Nov  6 08:49:37 1994',
      'Mon, 06 Nov 1994 08:49:37 GMT', // 6 November 1994 was a Sunday
      'Sun, 31 Feb 2030 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 +0000',
    ]) {
      expect(
        retryDelayMs(0, headers(notFixdate), () => 0),
        notFixdate,
      ).toBe(500);
    }
    expect(retryDelayMs(0, headers('Sun, 06 Nov 1994 08:49:37 GMT'), () => 0)).toBe(0);
    const inFiveSeconds = new Date(Math.ceil(Date.now() / 1000) * 1000 + 5_000);
    expect(retryDelayMs(0, headers(inFiveSeconds.toUTCString()), () => 0)).toBeGreaterThan(4_000);
  });
});
