import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startStudio, type TestStudio } from '../helpers/studio';
import { PROTO_POLLUTION, deepJson } from './hostile';

/** Inputs the property tests found or that are too costly to generate at random, pinned down. */
let studio: TestStudio;
let key: string;

beforeAll(async () => {
  studio = await startStudio();
  key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
});
afterAll(async () => {
  await studio.close();
});

const studioHeaders = () => ({ 'X-Studio-Token': studio.studioToken, 'Content-Type': 'application/json' });

async function expectError(res: Response, status: number, code: string, message: RegExp) {
  const body = await json(res);
  expect({ status: res.status, ...body.error }).toMatchObject({
    status,
    code,
    message: expect.stringMatching(message),
  });
  expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
}

describe('path parameters that are not valid percent-encoding (found by the property tests: was a 500)', () => {
  it.each(['%', '%E0%A4%A', '%ZZ', '%C3', 'abc%'])(
    'GET /v1/listings/%s is a 400 naming the path',
    async (id) => {
      await expectError(
        await studio.api(`/v1/listings/${id}`, { key }),
        400,
        'invalid_request',
        /^path: a path parameter is not valid percent-encoded UTF-8\.$/,
      );
    },
  );

  it('is a 400 on the studio API too, and on routes with several parameters', async () => {
    for (const path of ['/studio/listings/%E0%A4%A', '/studio/listings/%ZZ/evaluations/run_1']) {
      await expectError(
        await fetch(studio.url + path, { headers: studioHeaders() }),
        400,
        'invalid_request',
        /^path: /,
      );
    }
  });
});

describe('oversized and deep requests', () => {
  it('refuses a gzip bomb body by its inflated size (413), quickly', async () => {
    const inflated = Buffer.concat([
      Buffer.from('{"query":"'),
      Buffer.alloc(64 * 1024 * 1024, 0x61),
      Buffer.from('"}'),
    ]);
    const bomb = gzipSync(inflated, { level: 9 });
    expect(bomb.length).toBeLessThan(200 * 1024);
    const started = performance.now();
    const res = await studio.api('/v1/retrieve', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: bomb,
    });
    await expectError(
      res,
      413,
      'payload_too_large',
      /^body: the request body exceeds the 1048576 byte limit/,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('refuses an unknown Content-Encoding with a 400', async () => {
    const res = await studio.api('/v1/retrieve', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br, zstd, x-unknown' },
      body: '{}',
    });
    expect([400, 415]).toContain(res.status);
    expect((await json(res)).error.message).toMatch(/^body: /);
  });

  it('answers filters nested 100,000 deep with a 400 naming the field, and keeps serving', async () => {
    const body = `{"listingId":"lst_x","query":"hockey","filters":${deepJson(100_000, 'object')}}`;
    const res = await studio.api('/v1/retrieve', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect((await json(res)).error.message).toMatch(/^(filters|listingId|body)\b/);
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
  });

  it('answers a request line over 16 KB with 431 and the error body, then keeps serving', async () => {
    const { status, body, requestId } = await new Promise<{
      status: number;
      body: string;
      requestId: unknown;
    }>((resolve, reject) => {
      const url = new URL(studio.url);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: `/v1/listings?q=${'a'.repeat(20_000)}`,
          headers: { Authorization: `Bearer ${key}` },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body, requestId: res.headers['x-request-id'] }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(431);
    const error = (JSON.parse(body) as { error: { code: string; message: string; requestId: string } }).error;
    expect(error.code).toBe('headers_too_large');
    expect(error.message).toMatch(/^request: .*16 KB/);
    expect(error.requestId).toBe(requestId);
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
  });
});

describe('prototype-pollution keys', () => {
  it('are plain data: a listing body with them is refused naming them, and Object.prototype stays clean', async () => {
    const payload = JSON.parse(PROTO_POLLUTION) as Record<string, unknown>;
    Object.assign(payload, { title: 'Proto', accessModel: 'one_time', price: 1 });
    const res = await fetch(`${studio.url}/studio/listings`, {
      method: 'POST',
      headers: studioHeaders(),
      body: JSON.stringify(payload).replace(
        '{',
        '{"__proto__":{"polluted":1},"access_model":"subscription",',
      ),
    });
    // A listing has no such fields: refused by name, as any unknown field (docs/api.md), not dropped.
    expect(res.status).toBe(400);
    const { error } = await json(res);
    expect(error.message).toMatch(/^body: unknown fields '__proto__', 'constructor'; the fields are title, /);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    // Without them the same body is a listing, its camelCase field winning over the snake_case one.
    const created = await fetch(`${studio.url}/studio/listings`, {
      method: 'POST',
      headers: studioHeaders(),
      body: JSON.stringify({
        title: 'Proto',
        accessModel: 'one_time',
        price: 1,
        access_model: 'subscription',
      }),
    });
    expect(created.status).toBe(201);
    expect((await json(created)).data).toMatchObject({ title: 'Proto', accessModel: 'one_time', price: 1 });
  });
});
