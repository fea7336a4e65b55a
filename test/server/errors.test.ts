import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { walletAuthorization } from '../../src/core/auth/walletSignature';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { startStudio, tempDir, type TestStudio, json } from '../helpers/studio';

let studio: TestStudio | undefined;
afterEach(() => studio?.close());

const expectErrorBody = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  const body = await json(res);
  expect(body.error).toMatchObject({ code, status, requestId: res.headers.get('x-request-id') });
  expect(typeof body.error.message).toBe('string');
  return body.error as { message: string };
};

describe('error bodies', () => {
  it('unknown routes under /v1 are 404 not_found', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const err = await expectErrorBody(await studio.api('/v1/nothing-here', { key }), 404, 'not_found');
    expect(err.message).toContain('/v1/nothing-here');
    await expectErrorBody(await studio.api('/v1/listings', { key, method: 'DELETE' }), 404, 'not_found');
  });

  it('another API version, or a method outside /v1 and /studio, is the JSON 404 of the API, never the page', async () => {
    const rendererDir = tempDir('kbs-errors-ui-');
    writeFileSync(
      join(rendererDir.path, 'index.html'),
      '<!doctype html><html><head></head><body></body></html>',
    );
    studio = await startStudio({ rendererDir: rendererDir.path });
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    for (const [method, path] of [
      ['GET', '/v2/listings'],
      ['GET', '/v2'],
      ['GET', '/v1.1/listings'],
      ['GET', '/v2/openapi.json'],
      ['POST', '/v2/retrieve'],
      ['POST', '/anything'],
    ] as const) {
      const err = await expectErrorBody(await studio.api(path, { key, method }), 404, 'not_found');
      expect(err.message).toBe(`No route ${method} ${path}. See /v1/openapi.json for the API.`);
    }
    // The studio's own client-side routes are still the page.
    const page = await studio.api('/listings/lst_x');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    await studio.close();
    studio = undefined;
    rendererDir.remove();
  });

  it('malformed JSON is a 400 naming the body, from a route that reads one', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const send = (path: string, method: string) =>
      studio!.api(path, { key, method, headers: { 'Content-Type': 'application/json' }, body: '{"a":' });
    const err = await expectErrorBody(await send('/v1/retrieve', 'POST'), 400, 'invalid_request');
    expect(err.message).toMatch(/^body: /);
    // No route takes a POST there: a 404, as without the body (it was a 400 for the body).
    await expectErrorBody(await send('/v1/listings', 'POST'), 404, 'not_found');
    // A GET reads no body. (Sent with node:http: fetch sends none with a GET.)
    const { hostname, port } = new URL(studio.url);
    const getStatus = await new Promise<number>((resolve, reject) => {
      const headers = {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        'Content-Length': '5',
      };
      const req = request({ host: hostname, port, path: '/v1/listings', headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end('{"a":');
    });
    expect(getStatus).toBe(200);
    // A JSON content type without a body (curl -X POST -H ...) says there was none, not to send the
    // header that came.
    const empty = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write(
          `POST /v1/retrieve HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n` +
            'Content-Type: application/json\r\nConnection: close\r\n\r\n',
        ),
      );
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(empty).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(empty.slice(empty.indexOf('{'))).error.message).toBe(
      'body: the request has none; send a JSON object with "Content-Type: application/json".',
    );
    // With a Content-Length of 0 (fetch) the body is read as {}: the first field is named.
    const zero = await json(
      await studio.api('/v1/retrieve', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
      }),
    );
    expect(zero.error.message).toMatch(/^listingId: /);
    // Without a key, still a 401 first.
    const anonymous = await studio.api('/v1/retrieve', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":',
    });
    expect(anonymous.status).toBe(401);
  });

  it('a body that cannot be decompressed is a 400 naming the body and its encoding, not a 500', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const valid = gzipSync(JSON.stringify({ listingId: 'lst_x', query: 'q' }));
    const bodies: [string, Uint8Array][] = [
      ['gzip', new TextEncoder().encode('not gzip at all')],
      ['gzip', valid.subarray(0, valid.length - 12)],
      ['deflate', new TextEncoder().encode('not deflate')],
      ['br', gzipSync('{}')],
    ];
    for (const [encoding, body] of bodies) {
      const res = await studio.api('/v1/retrieve', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
        body,
      });
      const err = await expectErrorBody(res, 400, 'invalid_request');
      expect(err.message).toMatch(
        new RegExp(
          `^body: the request body could not be decompressed \\(Content-Encoding: ${encoding}\\): .+\\.$`,
        ),
      );
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    }
    // A good compressed body still works.
    const ok = await studio.api('/v1/listings', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
      body: brotliCompressSync('{"title":"Compressed"}'),
    });
    expect(ok.status).not.toBe(400);
    expect(ok.status).toBeLessThan(500);
  });

  it('a bad body is answered after authentication and the key limit, with their headers', async () => {
    // Unauthenticated requests count per address, with the same limit.
    studio = await startStudio({ rateLimits: { perKey: 3, windowMs: 60_000 } });
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const bad = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{bad' };
    const gzipBad = {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: 'not gzip',
    };
    const big = {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: 'x'.repeat(1_200_000) }),
    };
    // Without credentials: 401, whatever the body.
    for (const init of [bad, gzipBad, big]) {
      const res = await studio.api('/v1/retrieve', init);
      await expectErrorBody(res, 401, 'unauthorized');
      expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    }
    // With a key: the body's error, counted against the key.
    const first = await studio.api('/v1/retrieve', { ...bad, key });
    expect((await expectErrorBody(first, 400, 'invalid_request')).message).toMatch(/^body: /);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    await expectErrorBody(await studio.api('/v1/retrieve', { ...big, key }), 413, 'payload_too_large');
    await expectErrorBody(await studio.api('/v1/retrieve', { ...gzipBad, key }), 400, 'invalid_request');
    // Past the limit a bad body is a 429 like any request.
    await expectErrorBody(await studio.api('/v1/retrieve', { ...gzipBad, key }), 429, 'rate_limited');
  });

  it('a wallet-signed request whose body cannot be read hears of the body', async () => {
    studio = await startStudio();
    const signer = generateKeypair();
    const res = await studio.api('/v1/retrieve', {
      method: 'POST',
      headers: {
        Authorization: walletAuthorization(signer, { method: 'POST', pathWithQuery: '/v1/retrieve' }),
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
      },
      body: 'not gzip',
    });
    expect((await expectErrorBody(res, 400, 'invalid_request')).message).toMatch(/decompressed/);
  });

  it('a JSON scalar body is a 400 saying an object is expected', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const err = await expectErrorBody(
      await studio.api('/v1/retrieve', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: 'null',
      }),
      400,
      'invalid_request',
    );
    expect(err.message).toBe('body: must be a JSON object, not null.');
  });

  it('OPTIONS gets the JSON answer of a method no route serves', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    for (const path of ['/v1/listings', '/v1/retrieve', '/v1/openapi.json']) {
      const res = await studio.api(path, { key, method: 'OPTIONS' });
      const err = await expectErrorBody(res, 404, 'not_found');
      expect(err.message).toContain(`OPTIONS ${path}`);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      await expectErrorBody(await studio.api(path, { method: 'OPTIONS' }), 401, 'unauthorized');
    }
  });

  it('an oversized JSON body is a 413', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const body = JSON.stringify({ query: 'x'.repeat(2 * 1024 * 1024) });
    await expectErrorBody(
      await studio.api('/v1/retrieve', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      }),
      413,
      'payload_too_large',
    );
  });

  it('a failure inside the server is a 500 with no stack trace', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
    // Break only the listings table: authentication still works, the search then fails inside SQLite.
    studio.services.db.exec('ALTER TABLE listings RENAME TO listings_gone');
    const res = await studio.api('/v1/listings', { key });
    const err = await expectErrorBody(res, 500, 'internal_error');
    expect(err.message).toContain(res.headers.get('x-request-id')!);
    expect(JSON.stringify(err)).not.toMatch(/at .*\.ts|SqliteError|listings_gone/);
    studio.services.db.exec('ALTER TABLE listings_gone RENAME TO listings');
  });

  it('a write that waits past the busy timeout for another writer is a 500 saying so, with Retry-After', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    studio.services.db.pragma('busy_timeout = 50');
    // Another connection holds the write lock, as a commit on its worker thread does.
    const other = new Database(studio.services.db.name);
    other.exec('BEGIN IMMEDIATE');
    try {
      // A request authenticated by a key is served: the key's last use is written later, not waited for
      // (every poll of a large upload's progress failed so while its commit held the lock).
      expect((await studio.api('/v1/listings', { key })).status).toBe(200);
      const res = await studio.api('/studio/listings', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Studio-Token': studio.studioToken },
        body: JSON.stringify({ title: 'Busy', accessModel: 'one_time', price: 1 }),
      });
      const err = await expectErrorBody(res, 500, 'internal_error');
      expect(err.message).toMatch(/database is busy.*nothing of this request was saved.*Retry/);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(err).toMatchObject({ retryAfter: 5 });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(
      studio.services.db.prepare(`SELECT count(*) FROM listings WHERE title = 'Busy'`).pluck().get(),
    ).toBe(0);
  });

  it('a write to a data directory that became read-only is a 500 naming the directory', async () => {
    studio = await startStudio();
    // What SQLite answers once the directory is read-only (a remount, a permissions change): SQLITE_READONLY.
    studio.services.db.pragma('query_only = 1');
    try {
      const res = await studio.api('/studio/listings', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Studio-Token': studio.studioToken },
        body: JSON.stringify({ title: 'Read-only', accessModel: 'one_time', price: 1 }),
      });
      const err = await expectErrorBody(res, 500, 'internal_error');
      expect(err.message).toContain(
        `The data directory ${studio.services.dataDir} cannot be written (SQLITE_READONLY`,
      );
    } finally {
      studio.services.db.pragma('query_only = 0');
    }
  });
});
