import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walletAuthorization, WALLET_AUTH_WINDOW_MS } from '../../src/core/auth/walletSignature';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
const wallet = generateKeypair();
const other = generateKeypair();

beforeAll(async () => {
  studio = await startStudio();
});
afterAll(() => studio.close());

interface Call {
  method?: string;
  path: string;
  body?: string;
  /** What is signed, when it differs from what is sent. */
  signed?: { method?: string; path?: string; body?: string };
  timestampMs?: number;
  signer?: { address: string; secretKey: Uint8Array };
  header?: string;
}

function call({ method = 'GET', path, body, signed = {}, timestampMs, signer = wallet, header }: Call) {
  const authorization =
    header ??
    walletAuthorization(
      { address: wallet.address, secretKey: signer.secretKey },
      { method: signed.method ?? method, pathWithQuery: signed.path ?? path, body: signed.body ?? body },
      timestampMs,
    );
  return send(method, path, authorization, body);
}

const send = (method: string, path: string, authorization: string, body?: string) =>
  studio.api(path, {
    method,
    headers: { Authorization: authorization, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body,
  });

async function expect401(res: Response, message: RegExp) {
  expect(res.status).toBe(401);
  const body = await json(res);
  expect(body.error).toMatchObject({
    code: 'unauthorized',
    status: 401,
    message: expect.stringMatching(message),
  });
}

describe('wallet-signature authentication', () => {
  it('accepts a signed GET with its query string; the principal is the signing wallet', async () => {
    const res = await call({ path: '/v1/credentials?status=active&limit=5' });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      data: [],
      pagination: { total: 0, limit: 5, offset: 0, hasMore: false },
    });
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });

  it('covers the exact body bytes of a POST', async () => {
    const body = JSON.stringify({ listingId: 'lst_nowhere', query: 'contract law' });
    const ok = await call({ method: 'POST', path: '/v1/retrieve', body });
    // Authenticated: the request reaches the route, which does not know the listing.
    expect(ok.status).toBe(404);
    expect((await json(ok)).error.code).toBe('listing_not_found');
    const tampered = await call({
      method: 'POST',
      path: '/v1/retrieve',
      body: JSON.stringify({ listingId: 'lst_elsewhere', query: 'contract law' }),
      signed: { body },
    });
    await expect401(tampered, /does not verify/);
    // Same JSON value, different bytes: not the signed body.
    const respaced = await call({
      method: 'POST',
      path: '/v1/retrieve',
      body: body.replace(':', ': '),
      signed: { body },
    });
    await expect401(respaced, /does not verify/);
  });

  it('covers a compressed body as it reads decompressed', async () => {
    const body = JSON.stringify({ listingId: 'lst_nowhere', query: 'contract law' });
    const gzipped = (signed: Uint8Array | string) =>
      studio.api('/v1/retrieve', {
        method: 'POST',
        headers: {
          Authorization: walletAuthorization(wallet, {
            method: 'POST',
            pathWithQuery: '/v1/retrieve',
            body: signed,
          }),
          'Content-Type': 'application/json',
          'Content-Encoding': 'gzip',
        },
        body: gzipSync(body),
      });
    const ok = await gzipped(body);
    expect(ok.status).toBe(404);
    expect((await json(ok)).error.code).toBe('listing_not_found');
    await expect401(await gzipped(gzipSync(body)), /does not verify/);
  });

  it('refuses forged signatures: another key, another path, another method', async () => {
    await expect401(await call({ path: '/v1/credentials', signer: other }), /does not verify: it must be/);
    await expect401(
      await call({ path: '/v1/credentials?status=expired', signed: { path: '/v1/credentials' } }),
      /does not verify/,
    );
    await expect401(await call({ path: '/v1/listings', signed: { method: 'POST' } }), /does not verify/);
  });

  it('refuses expired and future-dated signatures', async () => {
    const now = Date.now();
    await expect401(
      await call({ path: '/v1/credentials', timestampMs: now - WALLET_AUTH_WINDOW_MS - 10_000 }),
      /^Wallet signature expired: it was made 31\d s ago; signatures are accepted for 300 s/,
    );
    await expect401(
      await call({ path: '/v1/credentials', timestampMs: now + WALLET_AUTH_WINDOW_MS + 60_000 }),
      /36\d s in the future/,
    );
    expect(
      (await call({ path: '/v1/credentials', timestampMs: now - WALLET_AUTH_WINDOW_MS + 30_000 })).status,
    ).toBe(200);
  });

  it('accepts each signature once', async () => {
    const header = walletAuthorization(wallet, { method: 'GET', pathWithQuery: '/v1/credentials' });
    expect((await send('GET', '/v1/credentials', header)).status).toBe(200);
    await expect401(
      await send('GET', '/v1/credentials', header),
      /already used: each signature is accepted once/,
    );
  });

  it('explains malformed headers', async () => {
    await expect401(
      await call({ path: '/v1/credentials', header: 'Wallet abc' }),
      /Malformed wallet signature header/,
    );
    await expect401(
      await call({ path: '/v1/credentials', header: 'Wallet abc:def:123' }),
      /not a base58 wallet address/,
    );
    await expect401(
      await call({ path: '/v1/credentials', header: `Wallet ${wallet.address}:abc:yesterday` }),
      /not a Unix time in milliseconds/,
    );
    await expect401(
      await call({ path: '/v1/credentials', header: `Wallet ${wallet.address}:0OIl:${Date.now()}` }),
      /not base58/,
    );
    // Seconds, not milliseconds: said so, not "made 55 years ago".
    await expect401(
      await call({ path: '/v1/credentials', timestampMs: Math.floor(Date.now() / 1000) }),
      /is not a Unix time in milliseconds \(it reads as one in seconds: multiply it by 1000\)\.$/,
    );
  });

  it('leaves streamed multipart uploads to API keys', async () => {
    const form = new FormData();
    form.append('config', JSON.stringify({ chunking: 'recursive' }));
    const res = await studio.api('/v1/upload', {
      method: 'POST',
      headers: {
        Authorization: walletAuthorization(wallet, { method: 'POST', pathWithQuery: '/v1/upload' }),
      },
      body: form,
    });
    await expect401(res, /covers JSON bodies only; use an API key/);
  });
});
