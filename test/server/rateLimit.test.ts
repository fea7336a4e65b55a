import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { keyRateLimit } from '../../src/server/middleware/rateLimit';
import { startStudio, type TestStudio, json } from '../helpers/studio';

let studio: TestStudio | undefined;
afterEach(() => studio?.close());

describe('rate limits', () => {
  it("set up without express-rate-limit's validation warnings", () => {
    // The library logs (console.error) what it finds wrong in the options, such as a key generator that
    // reads the client address without its IPv6 helper: every server start would print a stack.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      keyRateLimit({ perKey: 5, windowMs: 60_000 });
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  it('put X-RateLimit-* on every response and answer 429 past the limit', async () => {
    studio = await startStudio({ rateLimits: { perKey: 3, windowMs: 60_000 } });
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const before = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 3; i++) {
      const res = await studio.api(i === 1 ? '/v1/listings/lst_missing' : '/v1/listings', { key });
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(before + 59);
      expect(reset).toBeLessThanOrEqual(before + 62);
    }
    const limited = await studio.api('/v1/listings', { key });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = await json(limited);
    expect(body.error).toMatchObject({ code: 'rate_limited', status: 429, retryAfter });
    expect(body.error.message).toMatch(/^Rate limit exceeded: 3 requests per 60 s per API key or wallet\./);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('count callers without valid credentials by their address, and say so', async () => {
    studio = await startStudio({ rateLimits: { perKey: 2, windowMs: 60_000 } });
    for (let i = 0; i < 2; i++) expect((await studio.api('/v1/listings')).status).toBe(401);
    const limited = await studio.api('/v1/listings');
    expect(limited.status).toBe(429);
    expect((await json(limited)).error.message).toMatch(
      /^Rate limit exceeded: 2 requests per 60 s per client address without valid credentials\./,
    );
  });

  it('count each key separately', async () => {
    studio = await startStudio({ rateLimits: { perKey: 1, windowMs: 60_000 } });
    const wallet = studio.services.wallets.defaultWallet().address;
    const [a, b] = [studio.services.apiKeys.create(wallet).key, studio.services.apiKeys.create(wallet).key];
    expect((await studio.api('/v1/listings', { key: a })).status).toBe(200);
    expect((await studio.api('/v1/listings', { key: a })).status).toBe(429);
    expect((await studio.api('/v1/listings', { key: b })).status).toBe(200);
  });

  it('default to 100 requests per minute per key: the 101st is refused', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await studio.api('/v1/listings?limit=1', { key })).status);
    expect(statuses.slice(0, 100).every((s) => s === 200)).toBe(true);
    expect(statuses[100]).toBe(429);
  });

  it('count and answer with their headers the requests the HTTP parser refuses (431, 400) by address', async () => {
    studio = await startStudio({ rateLimits: { perKey: 4, windowMs: 60_000 } });
    const { hostname, port } = new URL(studio.url);
    const remaining = (res: { headers: Headers } | { headers: Record<string, unknown> }) =>
      res.headers instanceof Headers
        ? res.headers.get('x-ratelimit-remaining')
        : (res.headers['x-ratelimit-remaining'] as string);
    expect(remaining(await studio.api('/v1/listings'))).toBe('3');
    // A request line over 16 KB: Node refuses it before Express, with a key Express never reads.
    const tooLong = await new Promise<{ status: number; headers: Record<string, unknown> }>(
      (resolve, reject) => {
        const req = request(
          {
            host: hostname,
            port,
            path: `/v1/listings?q=${'a'.repeat(20_000)}`,
            headers: { Authorization: 'Bearer x' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
          },
        );
        req.on('error', reject);
        req.end();
      },
    );
    expect(tooLong.status).toBe(431);
    expect(tooLong.headers['x-ratelimit-limit']).toBe('4');
    expect(remaining(tooLong)).toBe('2');
    const reset = Number(tooLong.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 50);
    // Not HTTP at all: a 400, counted the same way.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write('NOT HTTP\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(raw).toMatch(/\r\nX-RateLimit-Remaining: 1\r\n/);
    expect(remaining(await studio.api('/v1/listings'))).toBe('0');
    expect((await studio.api('/v1/listings')).status).toBe(429);
  });
});
