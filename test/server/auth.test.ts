import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudio, type TestStudio, json } from '../helpers/studio';

let studio: TestStudio;
let key: string;
let keyId: string;

beforeAll(async () => {
  studio = await startStudio();
  const created = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address, 'test');
  key = created.key;
  keyId = created.id;
});
afterAll(() => studio.close());

async function expect401(headers: Record<string, string>, message: RegExp) {
  const res = await studio.api('/v1/listings', { headers });
  expect(res.status).toBe(401);
  const body = await json(res);
  expect(body).toEqual({
    error: {
      code: 'unauthorized',
      status: 401,
      message: expect.stringMatching(message),
      requestId: res.headers.get('x-request-id'),
    },
  });
  expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="kbstudio"');
}

describe('API key authentication', () => {
  it('refuses a request without a key', () => expect401({}, /Missing Authorization header/));
  it('refuses malformed headers', async () => {
    await expect401({ Authorization: key }, /Malformed/);
    await expect401({ Authorization: `Basic ${key}` }, /Malformed/);
    await expect401({ Authorization: `Bearer ${key} extra` }, /Malformed/);
    await expect401({ Authorization: 'Bearer' }, /Malformed/);
  });
  it('refuses unknown keys, well-formed or not, saying which', async () => {
    await expect401({ Authorization: `Bearer kbs_${'A'.repeat(32)}` }, /Invalid API key: no such key/);
    await expect401({ Authorization: 'Bearer not-a-key' }, /not in the form of a KB Studio key/);
  });
  it('accepts a valid key, case-insensitive scheme', async () => {
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
    expect((await studio.api('/v1/listings', { headers: { Authorization: `bearer ${key}` } })).status).toBe(
      200,
    );
  });
  it('stores keys only as SHA-256 hashes', () => {
    const rows = studio.services.db.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[];
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
  it('refuses a revoked key at once', async () => {
    const other = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address);
    expect((await studio.api('/v1/listings', { key: other.key })).status).toBe(200);
    studio.services.apiKeys.revoke(other.id);
    await expect401({ Authorization: `Bearer ${other.key}` }, /revoked/);
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
    expect(studio.services.apiKeys.list().find((k) => k.id === keyId)?.lastUsedAt).not.toBeNull();
  });
  it('refuses a malformed wallet signature with a 401 (valid ones are tested in walletAuth.test.ts)', async () => {
    await expect401({ Authorization: 'Wallet' }, /Malformed.*Wallet <address>/);
    await expect401({ Authorization: 'Wallet abc:def:123' }, /./);
  });
});
