import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { startStudio, tempDir, type TestStudio, json } from '../helpers/studio';

let studio: TestStudio;
beforeAll(async () => {
  studio = await startStudio();
});
afterAll(() => studio.close());

const studioFetch = (path: string, init: RequestInit & { token?: string | null } = {}) => {
  const { token = studio.studioToken, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token) headers.set('X-Studio-Token', token);
  return fetch(studio.url + path, { ...rest, headers });
};

describe('/studio API', () => {
  it("refuses requests without this launch's token", async () => {
    for (const token of [null, 'wrong', `${studio.studioToken}x`]) {
      const res = await studioFetch('/studio/listings', { token });
      expect(res.status).toBe(401);
      expect((await json(res)).error.code).toBe('unauthorized');
    }
  });

  it('refuses another origin even with the token', async () => {
    const res = await studioFetch('/studio/listings', { headers: { Origin: 'http://127.0.0.1:9' } });
    expect(res.status).toBe(403);
    expect((await json(res)).error.message).toContain('http://127.0.0.1:9');
    const same = await studioFetch('/studio/listings', { headers: { Origin: studio.url } });
    expect(same.status).toBe(200);
  });

  it('creates, updates, publishes and lists listings, drafts included', async () => {
    const created = await studioFetch('/studio/listings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        title: 'Maritime law',
        accessModel: 'subscription',
        price: 3,
        subscription_days: 30,
        tags: ['Sea', 'sea', 'law'],
      }),
    });
    expect(created.status).toBe(201);
    const listing = (await json(created)).data;
    expect(listing).toMatchObject({
      title: 'Maritime law',
      status: 'draft',
      subscriptionDays: 30,
      tags: ['sea', 'law'],
    });
    expect(listing.id).toMatch(/^lst_[0-9A-Za-z]{16}$/);

    const patched = await studioFetch(`/studio/listings/${listing.id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ accessModel: 'per_query', price: 0.002 }),
    });
    expect((await json(patched)).data).toMatchObject({
      accessModel: 'per_query',
      price: 0.002,
      subscriptionDays: null,
    });

    const published = await studioFetch(`/studio/listings/${listing.id}/publish`, { method: 'POST' });
    expect((await json(published)).data.status).toBe('published');
    const list = await await json(await studioFetch('/studio/listings'));
    expect(list.data.map((l: { id: string }) => l.id)).toContain(listing.id);
  });

  it('validates listings with messages naming the field', async () => {
    const cases: [object, RegExp][] = [
      [{ title: 'x', accessModel: 'subscription', price: 1 }, /^subscriptionDays: /],
      [{ title: 'x', accessModel: 'per_query', price: 0 }, /^price: /],
      [{ title: 'x', accessModel: 'rent', price: 1 }, /^accessModel: /],
      [{ title: 'x', accessModel: 'one_time', price: -1 }, /^price: /],
      [{ accessModel: 'one_time', price: 1 }, /^title: /],
      [
        { title: 'x', accessModel: 'one_time', price: 1, embeddingModel: 'my-model' },
        /Other models require contacting support/,
      ],
      // In plain words, as Pricing says them (not "Too big: expected string to have <=200 characters").
      [
        { title: 'x'.repeat(201), accessModel: 'one_time', price: 1 },
        /^title: The title can be at most 200 characters\.$/,
      ],
      [
        { title: 'x', accessModel: 'one_time', price: 1e8 },
        /^price: The price can be at most 1,000,000 SOL\.$/,
      ],
      [
        { title: 'x', accessModel: 'one_time', price: 1, domain: 'd'.repeat(101) },
        /^domain: The domain can be at most 100 characters\.$/,
      ],
      // Below a lamport: saved as 0 SOL (1e-10) or rounded (1.0000000019) without a word before.
      ...[1e-10, 1.0000000019].map((price): [object, RegExp] => [
        { title: 'x', accessModel: 'one_time', price },
        /^price: Use at most 9 decimals: 1 lamport is 0\.000000001 SOL\.$/,
      ]),
    ];
    for (const [body, message] of cases) {
      const res = await studioFetch('/studio/listings', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect((await json(res)).error.message).toMatch(message);
    }
    // Edit takes the same rules.
    const created = await studioFetch('/studio/listings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Edit me', accessModel: 'one_time', price: 1 }),
    });
    const { id } = (await json(created)).data;
    const edit = await studioFetch(`/studio/listings/${id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ price: 0.0000000015 }),
    });
    expect(edit.status).toBe(400);
    expect((await json(edit)).error.message).toBe(
      'price: Use at most 9 decimals: 1 lamport is 0.000000001 SOL.',
    );
    // A field a listing does not have was dropped and answered 200, as if it had been applied.
    const unknown = await studioFetch(`/studio/listings/${id}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Renamed', dimensions: 3 }),
    });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error.message).toMatch(
      /^body: unknown field 'dimensions'; the fields are title, description, domain, tags, accessModel, price, /,
    );
    const misspelt = await studioFetch('/studio/listings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'x', accessModel: 'one_time', prize: 1, price: 1 }),
    });
    expect(misspelt.status).toBe(400);
    expect((await json(misspelt)).error.message).toMatch(
      /^body: unknown field 'prize'; the fields are title, /,
    );
    const kept = await json(await studioFetch(`/studio/listings/${id}`));
    expect(kept.data.title).toBe('Edit me');
  });

  it('creates an API key shown once that then works on /v1, and revokes it', async () => {
    const res = await studioFetch('/studio/keys', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'ci' }),
    });
    expect(res.status).toBe(201);
    const { id, key } = (await json(res)).data;
    expect(key).toMatch(/^kbs_[0-9A-Za-z]{32}$/);
    expect(JSON.stringify(await await json(await studioFetch('/studio/keys')))).not.toContain(key);
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
    expect((await studioFetch(`/studio/keys/${id}/revoke`, { method: 'POST' })).status).toBe(200);
    expect((await studio.api('/v1/listings', { key })).status).toBe(401);
    const long = await studioFetch('/studio/keys', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'l'.repeat(101) }),
    });
    expect(long.status).toBe(400);
    expect((await json(long)).error.message).toBe('label: The label can be at most 100 characters.');
  });

  it('refuses a Host it does not serve (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${studio.url}/studio/info`,
        { headers: { Host: 'evil.example:80', 'X-Studio-Token': studio.studioToken } },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});

describe('DELETE /studio/listings/:id', () => {
  const count = (sql: string, ...params: unknown[]): number =>
    (studio.services.db.prepare(sql).get(...params) as { n: number }).n;

  /** A draft listing holding one small Markdown document, ingested and embedded. */
  async function ingestedDraft(title: string, text: string): Promise<string> {
    const { services } = studio;
    const id = services.listings.create(
      { title, accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
    const dir = tempDir('kbs-delete-');
    try {
      const file = join(dir.path, 'notes.md');
      writeFileSync(file, text);
      await services.ingestion.run({
        listingId: id,
        inputs: [{ path: file }],
        atomic: true,
        limits: STUDIO_LIMITS,
      });
    } finally {
      dir.remove();
    }
    return id;
  }

  it('deletes a draft with its documents, chunks, full-text rows and vector table, and nothing else', async () => {
    const doomed = await ingestedDraft(
      'Doomed draft',
      '# Tides\n\nSpring tides follow the new and full moon.\n',
    );
    const kept = await ingestedDraft('Kept draft', '# Glaciers\n\nGlaciers carve U-shaped valleys.\n');
    studio.services.db
      .prepare(
        `INSERT INTO uploads (id, listing_id, status, created_at, updated_at) VALUES ('upl_doomed', ?, 'completed', '', '')`,
      )
      .run(doomed);
    const vecTable = (id: string) =>
      studio.services.db
        .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`)
        .pluck()
        .get(id) as string | undefined;
    const doomedTable = vecTable(doomed)!;
    expect(doomedTable).toBeTruthy();
    expect(count(`SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'tides'`)).toBeGreaterThan(0);

    const res = await studioFetch(`/studio/listings/${doomed}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect((await json(res)).data).toEqual({ id: doomed, deleted: true });

    expect(count(`SELECT count(*) AS n FROM documents WHERE listing_id = ?`, doomed)).toBe(0);
    expect(count(`SELECT count(*) AS n FROM chunks WHERE listing_id = ?`, doomed)).toBe(0);
    expect(count(`SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'tides'`)).toBe(0);
    expect(count(`SELECT count(*) AS n FROM sqlite_master WHERE name = ?`, doomedTable)).toBe(0);
    expect(vecTable(doomed)).toBeUndefined();
    expect(count(`SELECT count(*) AS n FROM uploads WHERE listing_id = ?`, doomed)).toBe(0);
    expect((await studioFetch(`/studio/listings/${doomed}`)).status).toBe(404);

    const keptTable = vecTable(kept)!;
    expect(count(`SELECT count(*) AS n FROM sqlite_master WHERE name = ?`, keptTable)).toBe(1);
    expect(count(`SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'glaciers'`)).toBeGreaterThan(
      0,
    );
    expect((await json(await studioFetch(`/studio/listings/${kept}`))).data).toMatchObject({
      title: 'Kept draft',
      documentCount: 1,
    });
  });

  it('deletes a draft on a worker: the server keeps answering while the deletion waits for the lock', async () => {
    const doomed = await ingestedDraft('Slow draft', '# Dunes\n\nBarchan dunes migrate downwind.\n');
    const raced = await ingestedDraft('Raced draft', '# Deltas\n\nDeltas form where rivers slow.\n');
    // Another writer holds the write lock (another process's commit, say). On the server's thread the
    // deletion's wait for it, and a long deletion itself, stopped every request.
    const other = new Database(studio.services.db.name);
    const waitingFor = async (id: string) => {
      other.exec('BEGIN IMMEDIATE');
      let settled = false;
      const deletion = studioFetch(`/studio/listings/${id}`, { method: 'DELETE' }).finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await studioFetch('/studio/info')).status).toBe(200);
      expect((await studioFetch(`/studio/listings/${id}`)).status).toBe(200);
      expect(settled).toBe(false);
      // In an object: an async function's returned promise would be waited for (the lock is still held).
      return { deletion };
    };
    try {
      const first = await waitingFor(doomed);
      other.exec('COMMIT');
      expect((await first.deletion).status).toBe(200);
      expect(count(`SELECT count(*) AS n FROM chunks WHERE listing_id = ?`, doomed)).toBe(0);
      expect((await studioFetch(`/studio/listings/${doomed}`)).status).toBe(404);

      // Published while the deletion waited: it deletes nothing and answers as for any published listing.
      const second = await waitingFor(raced);
      other.prepare(`UPDATE listings SET status = 'published' WHERE id = ?`).run(raced);
      other.exec('COMMIT');
      const refused = await second.deletion;
      expect(refused.status).toBe(409);
      expect((await json(refused)).error.message).toMatch(/published and may have buyers/);
      expect(count(`SELECT count(*) AS n FROM chunks WHERE listing_id = ?`, raced)).toBeGreaterThan(0);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });

  it('refuses a published listing with 409 and answers 404 for an unknown one', async () => {
    const { services } = studio;
    const id = services.listings.create(
      { title: 'Sold already', accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
    services.listings.publish(id);
    const refused = await studioFetch(`/studio/listings/${id}`, { method: 'DELETE' });
    expect(refused.status).toBe(409);
    const { error } = await json(refused);
    expect(error.code).toBe('conflict');
    expect(error.message).toMatch(/published and may have buyers/);
    expect((await studioFetch(`/studio/listings/${id}`)).status).toBe(200);

    const unknown = await studioFetch('/studio/listings/lst_nope', { method: 'DELETE' });
    expect(unknown.status).toBe(404);
  });
});
