import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../../src/core/errors';
import {
  postJson,
  retryAfterMs,
  retryDelay,
  type ProviderCall,
} from '../../../../src/core/embed/providers/http';
import { startFakeServer, type FakeServer } from '../../../helpers/fakeProviders';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const policy = {
  maxRetries: 4,
  timeoutMs: 1000,
  baseDelayMs: 500,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};

async function echoServer() {
  const server = await startFakeServer((req) => ({ status: 200, body: { echo: req.body } }));
  servers.push(server);
  const call: ProviderCall = {
    provider: 'Acme',
    model: 'acme-embed',
    url: `${server.url}/embed`,
    apiKey: 'k-1',
    body: { hello: 'world' },
    errorMessage: (b) => (b as { detail?: string }).detail,
    keyHint: 'Set acme.key.',
  };
  return { server, call };
}

describe('postJson', () => {
  it('returns the parsed answer and sends the body as JSON with the bearer key', async () => {
    const { server, call } = await echoServer();
    expect(await postJson({ ...call, headers: { 'X-Extra': 'yes' } })).toEqual({ echo: { hello: 'world' } });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer k-1');
    expect(server.requests[0]!.headers['x-extra']).toBe('yes');
  });

  it('follows an explicit x-should-retry: false on a 500, and quotes a non-JSON error body', async () => {
    const { server, call } = await echoServer();
    server.script({
      status: 500,
      headers: { 'x-should-retry': 'false' },
      body: '<html>upstream exploded</html>',
    });
    const err = (await postJson(call, { sleep: async () => undefined }).catch(
      (e: unknown) => e,
    )) as DomainError;
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toBe(
      "The embedding model 'acme-embed' is unavailable: Acme failed (500: <html>upstream exploded</html>).",
    );
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 409 and a 408, and treats a 2xx body that is not JSON as unavailable', async () => {
    const { server, call } = await echoServer();
    server.script({ status: 409, body: {} }, { status: 408, body: {} }, { status: 200, body: 'not json' });
    const err = (await postJson(call, { sleep: async () => undefined }).catch(
      (e: unknown) => e,
    )) as DomainError;
    expect(err.message).toContain('Acme answered 200 with a body that is not JSON');
    expect(server.requests).toHaveLength(3);
  });

  it('uses the injected fetch', async () => {
    const seen: string[] = [];
    const fetch: typeof globalThis.fetch = async (url) => {
      seen.push(String(url));
      return new Response(JSON.stringify({ ok: 1 }), { status: 200 });
    };
    const call = { ...(await echoServer()).call, url: 'https://example.invalid/embed' };
    expect(await postJson(call, { fetch })).toEqual({ ok: 1 });
    expect(seen).toEqual(['https://example.invalid/embed']);
  });
});

describe('retry timing', () => {
  it('reads retry-after-ms, Retry-After seconds and Retry-After dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250.5' }))).toBe(250.5);
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }))).toBe(3000);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const fromDate = retryAfterMs(new Headers({ 'retry-after': inTenSeconds }))!;
    expect(fromDate).toBeGreaterThan(8_000);
    expect(fromDate).toBeLessThanOrEqual(10_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it('honours a Retry-After within bounds, else backs off exponentially up to the cap', () => {
    expect(retryDelay(1, 2_000, policy)).toBe(2_000);
    expect(retryDelay(1, 0, policy)).toBe(0);
    const noJitter = () => 0;
    const fullJitter = () => 1;
    expect(retryDelay(1, 3_600_000, policy, noJitter)).toBe(500);
    expect(retryDelay(2, undefined, policy, noJitter)).toBe(1000);
    expect(retryDelay(3, -5, policy, noJitter)).toBe(2000);
    expect(retryDelay(10, undefined, policy, noJitter)).toBe(8000);
    expect(retryDelay(10, undefined, policy, fullJitter)).toBe(6000);
  });
});

describe('the API key in errors', () => {
  const KEY = 'sk-FULLSECRET-abc123';

  it('is not quoted from a network error, which may repeat the request header', async () => {
    const { call } = await echoServer();
    const err = (await postJson(
      { ...call, apiKey: KEY },
      {
        maxRetries: 0,
        fetch: async () => {
          throw new TypeError(`fetch failed`, {
            cause: new Error(`socket closed after Authorization: Bearer ${KEY}`),
          });
        },
      },
    ).catch((e: unknown) => e)) as DomainError;
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain('Authorization: [redacted]');
    expect(err.message).not.toContain('FULLSECRET');
  });

  it('is refused before sending when it cannot be a header value, without quoting it or retrying', async () => {
    const { server, call } = await echoServer();
    let calls = 0;
    const err = (await postJson(
      { ...call, apiKey: `${KEY}\nX-Injected: 1` },
      { fetch: (...args) => (calls++, fetch(...args)) },
    ).catch((e: unknown) => e)) as DomainError;
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain('cannot be sent in a request header');
    expect(err.message).toContain('Set acme.key.');
    expect(err.message).not.toContain('FULLSECRET');
    expect(calls).toBe(0);
    expect(server.requests).toHaveLength(0);
  });
});
