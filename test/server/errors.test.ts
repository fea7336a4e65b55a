import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startStudio, type TestStudio, json } from '../helpers/studio';

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

  it('malformed JSON is a 400 naming the body', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const err = await expectErrorBody(
      await studio.api('/v1/listings', {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"a":',
      }),
      400,
      'invalid_request',
    );
    expect(err.message).toMatch(/^body: /);
  });

  it('an oversized JSON body is a 413', async () => {
    studio = await startStudio();
    const key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
    const body = JSON.stringify({ query: 'x'.repeat(2 * 1024 * 1024) });
    await expectErrorBody(
      await studio.api('/v1/listings', {
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
});
