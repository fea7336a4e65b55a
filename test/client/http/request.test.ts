import { openAsBlob, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AccessError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  KnowledgeClient,
  KnowledgeClientError,
  NotFoundError,
  RateLimitError,
  TimeoutError,
  UserAbortError,
  walletAuthMessage,
  type KnowledgeClientOptions,
} from '../../../src/client';
import { generateKeypair, signMessage, verifySignature } from '../../../src/core/wallets/keypair';
import { tempDir } from '../../helpers/studio';
import { failure, localServer, sendError, sendJson, type LocalServer } from '../localServer';

const LISTING = { id: 'lst_1', title: 'A listing' };
let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const clientOf = (s: LocalServer, options: Partial<KnowledgeClientOptions> = {}) =>
  new KnowledgeClient({ baseUrl: s.baseUrl, apiKey: 'kbs_test', ...options });

describe('retries', () => {
  it.each([500, 502, 503])(
    'retries a %i exactly twice with exponential backoff, then throws it',
    async (status) => {
      server = await localServer((_req, res) => sendError(res, status, 'internal_error'));
      const started = performance.now();
      const err = await failure(clientOf(server).listings.get('lst_1'));
      const elapsed = performance.now() - started;
      expect(err.constructor).toBe(ApiError);
      expect(err).toMatchObject({ status, code: 'internal_error', requestId: `req_${status}` });
      expect(server.hits.map((h) => h.url)).toEqual([
        '/v1/listings/lst_1',
        '/v1/listings/lst_1',
        '/v1/listings/lst_1',
      ]);
      // Backoff 0.5 s then 1 s, each less up to a quarter of jitter.
      const [first, second, third] = server.hits.map((h) => h.at) as [number, number, number];
      expect(second - first).toBeGreaterThanOrEqual(350);
      expect(second - first).toBeLessThan(900);
      expect(third - second).toBeGreaterThanOrEqual(730);
      expect(third - second).toBeLessThan(1500);
      expect(elapsed).toBeLessThan(3000);
    },
  );

  it('succeeds when a retry does, and honours maxRetries per call and per client', async () => {
    let failuresLeft = 2;
    server = await localServer((_req, res) =>
      failuresLeft-- > 0
        ? sendError(res, 503, 'embedding_provider_unavailable', { 'retry-after': '0' })
        : sendJson(res, { data: LISTING }),
    );
    expect(await clientOf(server).listings.get('lst_1')).toEqual(LISTING);
    expect(server.hits).toHaveLength(3);

    failuresLeft = 10;
    const once = await failure(clientOf(server).listings.get('lst_1', { maxRetries: 0 }));
    expect(once).toMatchObject({ status: 503, code: 'embedding_provider_unavailable' });
    expect(server.hits).toHaveLength(4);
    await failure(clientOf(server, { maxRetries: 1 }).listings.get('lst_1'));
    expect(server.hits).toHaveLength(6);
  });

  it.each([
    [400, 'invalid_request', ApiError],
    [408, 'request_timeout', ApiError],
    [401, 'unauthorized', AuthenticationError],
    [403, 'credential_expired', AccessError],
    [404, 'listing_not_found', NotFoundError],
    [409, 'conflict', ApiError],
    [429, 'rate_limited', RateLimitError],
  ])('never retries a %i (%s)', async (status, code, kind) => {
    server = await localServer((_req, res) => sendError(res, status, code, { 'retry-after': '0' }));
    const err = await failure(clientOf(server).retrieve({ listingId: 'lst_1', query: 'q' }));
    expect(err.constructor).toBe(kind);
    expect(err).toMatchObject({ status, code, message: `${code} happened` });
    expect(server.hits).toHaveLength(1);
  });

  it('throws a 5xx asking for a longer wait than 60 s at once, with its retryAfter, instead of retrying sooner', async () => {
    server = await localServer((_req, res, n) =>
      n === 0 ? sendError(res, 503, 'busy', { 'retry-after': '120' }) : sendJson(res, { data: LISTING }),
    );
    const started = performance.now();
    const err = await failure(clientOf(server).listings.get('lst_1'));
    expect(err.constructor).toBe(ApiError);
    expect(err).toMatchObject({ status: 503, code: 'busy', retryAfter: 120 });
    expect(server.hits).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(400);
  });

  it('waits as long as Retry-After says', async () => {
    server = await localServer((_req, res, n) =>
      n === 0 ? sendError(res, 503, 'busy', { 'retry-after': '1' }) : sendJson(res, { data: LISTING }),
    );
    const started = performance.now();
    expect(await clientOf(server).listings.get('lst_1')).toEqual(LISTING);
    const waited = server.hits[1]!.at - server.hits[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(1500);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('retries a 429 only when asked to, after its Retry-After, and not when it asks for more than 60 s', async () => {
    server = await localServer((_req, res, n) =>
      n === 0
        ? sendError(res, 429, 'rate_limited', { 'retry-after': '1' })
        : n === 1
          ? sendJson(res, { data: LISTING })
          : sendError(res, 429, 'rate_limited', { 'retry-after': '120' }),
    );
    const client = clientOf(server, { retryOn429: true });
    expect(await client.listings.get('lst_1')).toEqual(LISTING);
    expect(server.hits[1]!.at - server.hits[0]!.at).toBeGreaterThanOrEqual(950);

    const started = performance.now();
    const err = await failure(client.listings.get('lst_1'));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.retryAfter).toBe(120);
    expect(server.hits).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('retries a connection failure, then throws a ConnectionError naming the cause', async () => {
    server = await localServer(() => {});
    const baseUrl = server.baseUrl;
    await server.close();
    server = undefined;
    const attempts: string[] = [];
    const client = new KnowledgeClient({
      baseUrl,
      apiKey: 'kbs_test',
      fetch: (url, init) => (attempts.push(url), fetch(url, init)),
    });
    const err = await failure(client.listings.get('lst_1'));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({
      code: 'connection_error',
      status: undefined,
      message: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(attempts).toHaveLength(3);
  });
});

describe('timeouts and aborts', () => {
  it('times out at the configured value with a TimeoutError', async () => {
    server = await localServer(() => {});
    const started = performance.now();
    const err = await failure(clientOf(server, { timeoutMs: 300, maxRetries: 0 }).listings.get('lst_1'));
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: 'timeout', message: expect.stringMatching(/300 ms/) });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(800);
    await server.clientGone(0);
  });

  it('covers a body that stalls after the headers, and retries a timeout like a connection failure', async () => {
    server = await localServer((_req, res, n) => {
      if (n === 0) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"data": ');
      } else sendJson(res, { data: LISTING });
    });
    const client = clientOf(server, { timeoutMs: 200 });
    expect(await client.listings.get('lst_1', { maxRetries: 1 })).toEqual(LISTING);
    expect(server.hits).toHaveLength(2);
  });

  it('stops at once, without retrying, when the caller aborts', async () => {
    server = await localServer(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const err = await failure(clientOf(server).listings.get('lst_1', { signal: controller.signal }));
    expect(err).toBeInstanceOf(UserAbortError);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(server.hits).toHaveLength(1);
    await server.clientGone(0);
  });

  it('stops waiting between retries when the caller aborts', async () => {
    server = await localServer((_req, res) => sendError(res, 503, 'busy', { 'retry-after': '30' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = performance.now();
    expect(
      await failure(clientOf(server).listings.get('lst_1', { signal: controller.signal })),
    ).toBeInstanceOf(UserAbortError);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('timeout and retry settings', () => {
  it.each([
    ['timeoutMs', 0],
    ['timeoutMs', -5],
    ['timeoutMs', Number.NaN],
    ['timeoutMs', '1000'],
    ['maxRetries', -1],
    ['maxRetries', 1.5],
    ['maxRetries', Infinity],
    ['retryOn429', 'yes'],
  ])(
    'refuses %s: %s from the constructor and from a call alike, before sending anything',
    async (name, value) => {
      server = await localServer((_req, res) => sendJson(res, { data: LISTING }));
      const message = new RegExp(`^${name} must be`);
      expect(() => clientOf(server!, { [name]: value })).toThrow(message);
      const client = clientOf(server);
      const err = await failure(client.listings.get('lst_1', { [name]: value }));
      expect(err).toBeInstanceOf(KnowledgeClientError);
      expect(err.message).toMatch(message);
      const stream = client.retrieveStream({ listingId: 'lst_1', query: 'q' }, { [name]: value });
      expect((await failure(stream.withResponse())).message).toMatch(message);
      expect(server.hits).toHaveLength(0);
    },
  );

  it('waits out a timeout longer than a timer can hold (2^31 - 1 ms), and none at all for Infinity', async () => {
    server = await localServer((_req, res) => {
      setTimeout(() => sendJson(res, { data: LISTING }), 300);
    });
    const client = clientOf(server, { timeoutMs: 3e9, maxRetries: 0 });
    expect(await client.listings.get('lst_1')).toEqual(LISTING);
    expect(await client.listings.get('lst_1', { timeoutMs: Infinity })).toEqual(LISTING);
    expect(await clientOf(server, { timeoutMs: Infinity, maxRetries: 0 }).listings.get('lst_1')).toEqual(
      LISTING,
    );
    expect(server.hits).toHaveLength(3);
  });

  it('refuses a poll interval a timer cannot hold, which would poll every millisecond', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, { data: { uploadId: 'upl_1', status: 'queued' } }),
    );
    const err = await failure(clientOf(server).uploads.wait('upl_1', { pollIntervalMs: 3e9 }));
    expect(err).toBeInstanceOf(KnowledgeClientError);
    expect(err.message).toMatch(/^pollIntervalMs must be/);
    expect(server.hits).toHaveLength(0);
  });
});

describe('retrieval, charged per query', () => {
  const PARAMS = { listingId: 'lst_1', query: 'q' };

  it('is not retried after a timeout: the query may have run and been charged', async () => {
    server = await localServer(() => {});
    const client = clientOf(server, { timeoutMs: 200 });
    expect(await failure(client.retrieve(PARAMS))).toBeInstanceOf(TimeoutError);
    expect(server.hits).toHaveLength(1);
    expect(await failure(client.retrieveStream(PARAMS).withResponse())).toBeInstanceOf(TimeoutError);
    expect(server.hits).toHaveLength(2);
    // A GET is: asking again changes nothing.
    expect(await failure(client.listings.get('lst_1', { maxRetries: 1 }))).toBeInstanceOf(TimeoutError);
    expect(server.hits).toHaveLength(4);
  });

  it('is not retried when the connection breaks after the request was sent', async () => {
    server = await localServer((req) => {
      req.socket.destroy();
    });
    const err = await failure(clientOf(server).retrieve(PARAMS));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.code).toBe('connection_error');
    expect(server.hits).toHaveLength(1);
  });

  it('is retried after a 5xx answer (a failed query is not charged) and when the connection was refused', async () => {
    server = await localServer((_req, res, n) =>
      n === 0
        ? sendError(res, 503, 'embedding_provider_unavailable', { 'retry-after': '0' })
        : sendJson(res, { chunks: [], listingId: 'lst_1', queryId: 'qry_1', latencyMs: 1 }),
    );
    expect(await clientOf(server).retrieve(PARAMS)).toMatchObject({ queryId: 'qry_1' });
    expect(server.hits).toHaveLength(2);

    const baseUrl = server.baseUrl;
    await server.close();
    server = undefined;
    const attempts: string[] = [];
    const client = new KnowledgeClient({
      baseUrl,
      apiKey: 'kbs_test',
      fetch: (url, init) => (attempts.push(url), fetch(url, init)),
    });
    expect(await failure(client.retrieve(PARAMS))).toMatchObject({
      message: expect.stringMatching(/ECONNREFUSED/),
    });
    expect(attempts).toHaveLength(3);
  });
});

describe('requests', () => {
  it('sends the key, JSON body, query string and headers; null removes a default header', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, { data: [], pagination: { total: 0, limit: 5, offset: 10, hasMore: false } }),
    );
    const client = clientOf(server, { defaultHeaders: { 'x-app': 'tests', 'x-drop': 'me' } });
    await client.listings.search(
      { q: 'contract law', accessModel: 'per_query', maxPrice: 0.5, minRating: 4, limit: 5, offset: 10 },
      { headers: { 'x-drop': null, 'x-call': '1' } },
    );
    await client
      .retrieve({
        listingId: 'lst_1',
        query: 'tenancy',
        topK: 3,
        minScore: 0.2,
        filters: { year: { $gte: 2020 } },
      })
      .catch(() => {});
    const [search, retrieve] = server.hits as [any, any];
    expect(search.url).toBe(
      '/v1/listings?q=contract+law&accessModel=per_query&maxPrice=0.5&minRating=4&limit=5&offset=10',
    );
    expect(search.headers).toMatchObject({
      authorization: 'Bearer kbs_test',
      accept: 'application/json',
      'x-app': 'tests',
      'x-call': '1',
    });
    expect(search.headers['x-drop']).toBeUndefined();
    expect(retrieve).toMatchObject({ method: 'POST', url: '/v1/retrieve' });
    expect(retrieve.headers['content-type']).toBe('application/json');
    expect(JSON.parse(retrieve.body.toString())).toEqual({
      listingId: 'lst_1',
      query: 'tenancy',
      topK: 3,
      minScore: 0.2,
      filters: { year: { $gte: 2020 } },
    });
  });

  it('signs each attempt anew with the wallet, over the method, path with query, time and body hash', async () => {
    const wallet = generateKeypair();
    server = await localServer((_req, res, n) =>
      n === 0
        ? sendError(res, 500, 'internal_error', { 'retry-after': '0' })
        : sendJson(res, { data: [], pagination: { total: 0, limit: 20, offset: 0, hasMore: false } }),
    );
    const client = clientOf(server, {
      apiKey: undefined,
      signer: { address: wallet.address, sign: async (m) => signMessage(wallet.secretKey, m) },
    });
    await client.credentials.list({ status: 'active' });
    const headers = server.hits.map((h) => h.headers.authorization!);
    expect(new Set(headers).size).toBe(2);
    for (const header of headers) {
      const [, address, signature, timestamp] = /^Wallet (\w+):(\w+):(\d+)$/.exec(header)!;
      expect(address).toBe(wallet.address);
      const message = await walletAuthMessage(
        { method: 'GET', pathWithQuery: '/v1/credentials?status=active' },
        Number(timestamp),
      );
      expect(
        verifySignature(wallet.address, new TextEncoder().encode(message), bs58.decode(signature!)),
      ).toBe(true);
    }
  });

  it('writes every number in decimal digits, as the server reads them, and refuses one that is not finite', async () => {
    server = await localServer((_req, res) =>
      sendJson(res, { data: [], pagination: { total: 0, limit: 20, offset: 0, hasMore: false } }),
    );
    const client = clientOf(server);
    await client.listings.search({ maxPrice: 0.0000005, minRating: 1e-7 });
    await client.listings.search({ maxPrice: 1e21, minRating: 0.000000001 });
    await client.listings.search({ maxPrice: 1.2345e-7, minRating: -1.5e-9, limit: 100, offset: 0 });
    expect(server.hits.map((h) => h.url)).toEqual([
      '/v1/listings?maxPrice=0.0000005&minRating=0.0000001',
      '/v1/listings?maxPrice=1000000000000000000000&minRating=0.000000001',
      '/v1/listings?maxPrice=0.00000012345&minRating=-0.0000000015&limit=100&offset=0',
    ]);
    for (const value of [Infinity, -Infinity, Number.NaN]) {
      const err = await failure(client.listings.search({ maxPrice: value }));
      expect(err).toBeInstanceOf(KnowledgeClientError);
      expect(err.message).toBe(`maxPrice must be a finite number, not ${value}.`);
    }
    expect(server.hits).toHaveLength(3);
  });

  it('sends an id as one path segment, and refuses an empty one or . and .., which URLs drop, before sending', async () => {
    server = await localServer((_req, res) => sendJson(res, { data: LISTING }));
    const client = clientOf(server);
    await client.listings.get('a/b?c#d');
    await client.listings.get('...');
    await client.credentials.verify('%2E');
    expect(server.hits.map((h) => h.url)).toEqual([
      '/v1/listings/a%2Fb%3Fc%23d',
      '/v1/listings/...',
      '/v1/credentials/%252E',
    ]);
    const calls = {
      'listings.get: id': (id: string) => client.listings.get(id),
      'credentials.verify: listingId': (id: string) => client.credentials.verify(id),
      'uploads.get: id': (id: string) => client.uploads.get(id),
    };
    for (const [what, call] of Object.entries(calls)) {
      for (const id of ['.', '..', '', undefined as unknown as string]) {
        const err = await failure(call(id));
        expect(err).toBeInstanceOf(KnowledgeClientError);
        expect(err).not.toBeInstanceOf(ApiError);
        expect(err.message.startsWith(`${what} `)).toBe(true);
        expect(err.message).toMatch(id === '.' || id === '..' ? /cannot be sent/ : /non-empty string/);
      }
    }
    expect(server.hits).toHaveLength(3);
  });

  it('reports an error body that is not JSON (a proxy page) with its status and an excerpt', async () => {
    server = await localServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    });
    const err = await failure(clientOf(server, { maxRetries: 0 }).listings.get('lst_1'));
    expect(err.constructor).toBe(ApiError);
    expect(err).toMatchObject({
      status: 502,
      code: 'http_502',
      message: expect.stringMatching(/^HTTP 502: .*502 Bad Gateway/),
    });
  });

  it('refuses a success that is not JSON, or not in its envelope, without retrying', async () => {
    server = await localServer((_req, res, n) => {
      if (n === 0) res.writeHead(200).end('<html>');
      else sendJson(res, { listing: LISTING });
    });
    const client = clientOf(server);
    expect(await failure(client.listings.get('lst_1'))).toMatchObject({
      code: 'invalid_response',
      message: expect.stringMatching(/<html>/),
    });
    expect(await failure(client.listings.get('lst_1'))).toMatchObject({
      code: 'invalid_response',
      message: expect.stringMatching(/envelope/),
    });
    expect(server.hits).toHaveLength(2);
  });
});

describe('ApiPromise', () => {
  it('is a real Promise that resolves to the data, with the response on request', async () => {
    server = await localServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-request-id': 'req_42',
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '97',
        'x-ratelimit-reset': '1767225600',
      });
      res.end(JSON.stringify({ data: LISTING }));
    });
    const call = clientOf(server).listings.get('lst_1');
    expect(call).toBeInstanceOf(Promise);
    const [listing, title] = await Promise.all([call, call.then((l) => l.title)]);
    expect(listing).toEqual(LISTING);
    expect(title).toBe('A listing');
    const { data, requestId, rateLimit, response } = await call.withResponse();
    expect(data).toBe(listing);
    expect(requestId).toBe('req_42');
    expect(rateLimit).toEqual({ limit: 100, remaining: 97, reset: 1767225600 });
    expect(response.status).toBe(200);
    expect(server.hits).toHaveLength(1);
  });
});

describe('upload bodies', () => {
  it('streams a multipart body with progress, and sends it whole again on a retry', async () => {
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7) % 251);
    server = await localServer((_req, res, n) =>
      n === 0
        ? sendError(res, 503, 'busy', { 'retry-after': '0' })
        : sendJson(res, { data: { uploadId: 'upl_1', status: 'queued' } }, 202),
    );
    const progress: { loaded: number; total: number }[] = [];
    const upload = await clientOf(server).upload(
      new File([bytes], 'kb "one".zip', { type: 'application/zip' }),
      { embeddingModel: 'text-embedding-3-small', chunkSize: 256 },
      { onProgress: (p) => progress.push(p) },
    );
    expect(upload).toEqual({ uploadId: 'upl_1', status: 'queued' });
    expect(server.hits).toHaveLength(2);
    const [first, second] = server.hits as [any, any];
    expect(second.body.equals(first.body)).toBe(true);
    const body: Buffer = second.body;
    const boundary = /boundary=(.+)$/.exec(second.headers['content-type'])![1]!;
    expect(body.toString('latin1')).toContain(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="kb %22one%22.zip"\r\nContent-Type: application/zip\r\n\r\n`,
    );
    expect(body.indexOf(Buffer.from(bytes))).toBeGreaterThan(0);
    // config first (the server checks it before the files arrive), the file last.
    expect(body.toString('latin1')).toContain(
      `name="config"\r\n\r\n{"embedding_model":"text-embedding-3-small","chunk_size":256}\r\n--${boundary}\r\n`,
    );
    expect(body.toString('latin1').endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);

    const total = body.length;
    expect(progress.every((p) => p.total === total)).toBe(true);
    const second_ = progress.slice(progress.findLastIndex((p) => p.loaded === 0));
    expect(second_.length).toBeGreaterThan(3);
    expect(second_.map((p) => p.loaded)).toEqual([...second_.map((p) => p.loaded)].sort((a, b) => a - b));
    expect(second_.at(-1)!.loaded).toBe(total);
  });

  it('leaves no timeout armed after a server cuts uploads mid-body', async () => {
    // The body can still be pulled after its request failed; each piece pulled re-armed the request's
    // cleared timeout, which then kept a CLI alive for the whole timeout after printing its result.
    const sink = createServer((req) => {
      let seen = 0;
      req.on('data', (piece: Buffer) => {
        seen += piece.length;
        if (seen > 16 * 1024) req.socket.destroy();
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const TIMEOUT_MS = 123_457; // tells the request's timers from any other
    const armed = new Set<unknown>();
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    const setSpy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
      fn: () => void,
      ms?: number,
      ...rest: unknown[]
    ) => {
      const timer = (realSet as (...args: unknown[]) => ReturnType<typeof setTimeout>)(fn, ms, ...rest);
      if (ms === TIMEOUT_MS) armed.add(timer);
      return timer;
    }) as typeof setTimeout);
    const clearSpy = vi.spyOn(globalThis, 'clearTimeout').mockImplementation((timer) => {
      armed.delete(timer);
      realClear(timer);
    });
    try {
      const client = new KnowledgeClient({
        baseUrl: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
        apiKey: 'kbs_test',
        timeoutMs: TIMEOUT_MS,
        maxRetries: 0,
      });
      for (let i = 0; i < 10; i++) {
        const err = await failure(client.upload(new File([new Uint8Array(4 * 1024 * 1024)], 'a.zip')));
        expect(err).toBeInstanceOf(ConnectionError);
        await new Promise((resolve) => realSet(resolve, 20));
      }
      expect(armed.size).toBe(0);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
      sink.close();
    }
  });

  it('keeps memory flat while streaming a large file from disk', async () => {
    const dir = tempDir('kbs-client-upload-');
    const size = 128 * 1024 * 1024;
    const file = join(dir.path, 'big.zip');
    writeFileSync(file, new Uint8Array(size).fill(7));
    // A server that counts and drops the bytes, so only the client's own buffers are measured.
    let received = 0;
    const sink = createServer((req, res) => {
      req.on('data', (piece: Buffer) => (received += piece.length));
      req.on('end', () => sendJson(res, { data: { uploadId: 'upl_big' } }, 202));
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const baseline = process.memoryUsage().arrayBuffers;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline);
    }, 10);
    try {
      const client = new KnowledgeClient({
        baseUrl: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
        apiKey: 'kbs_test',
      });
      const upload = await client.upload(new File([await openAsBlob(file)], 'big.zip'));
      expect(upload).toEqual({ uploadId: 'upl_big' });
      expect(received).toBeGreaterThan(size);
      // Buffers sent but not yet collected come and go; keeping what was sent would reach the whole size.
      expect(peak).toBeLessThan(size / 2);
    } finally {
      clearInterval(sampler);
      sink.close();
      dir.remove();
    }
  });
});
