import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudio, type TestStudio, json } from '../helpers/studio';

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
