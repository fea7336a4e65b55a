import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { SAMPLE_ITEMS } from '../core/retrieve/knowledgeBase';
import { json, startStudio, tempDir, type TestStudio } from '../helpers/studio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnowledgeClient } from '../../src/client';
import { createServer } from '../../src/server/createServer';
import { openServices } from '../../src/db/services';

let studio: TestStudio;
let listingId: string;
beforeAll(async () => {
  studio = await startStudio();
  listingId = await ingestSample(studio);
});
afterAll(() => studio.close());

/** A listing of the default wallet filled with the hand-made sample corpus; returns its id. */
async function ingestSample(studio: TestStudio): Promise<string> {
  const { services } = studio;
  const wallet = services.wallets.defaultWallet().address;
  const listingId = services.listings.create(
    { title: 'Sample', accessModel: 'one_time', price: 1 },
    wallet,
  ).id;
  const dir = tempDir('kbs-sample-');
  try {
    const file = join(dir.path, 'items.json');
    writeFileSync(file, JSON.stringify(SAMPLE_ITEMS));
    await services.ingestion.run({
      listingId,
      inputs: [{ path: file }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
  } finally {
    dir.remove();
  }
  return listingId;
}

const studioFetch = (path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('X-Studio-Token', studio.studioToken);
  return fetch(studio.url + path, { ...init, headers });
};

describe('/studio playground key and settings', () => {
  it("gives one in-memory key of the listing's creator that /v1/retrieve accepts", async () => {
    const first = (await json(await studioFetch(`/studio/listings/${listingId}/playground-key`))).data;
    const again = (await json(await studioFetch(`/studio/listings/${listingId}/playground-key`))).data;
    expect(first.apiKey).toMatch(/^kbs_/);
    expect(again.apiKey).toBe(first.apiKey);
    const stored = studio.services.apiKeys.list().find((k) => k.id === first.keyId);
    expect(stored?.label).toBe('studio playground');

    const client = new KnowledgeClient({ baseUrl: `${studio.url}/v1`, apiKey: first.apiKey });
    const result = await client.retrieve({ listingId, query: 'galaxy telescope', topK: 3 });
    expect(result.chunks[0]!.text).toContain('galaxy');
  });

  it('mints a new key once the playground key was revoked', async () => {
    const first = (await json(await studioFetch(`/studio/listings/${listingId}/playground-key`))).data;
    studio.services.apiKeys.revoke(first.keyId);
    const next = (await json(await studioFetch(`/studio/listings/${listingId}/playground-key`))).data;
    expect(next.keyId).not.toBe(first.keyId);
  });

  it('revokes the playground keys of earlier launches when a new launch mints its own, and no other key', async () => {
    const earlier = (await json(await studioFetch(`/studio/listings/${listingId}/playground-key`))).data;
    const mine = studio.services.apiKeys.create(earlier.wallet, 'my script');
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The next launch: another server over the same data.
    const next = createServer({
      services: studio.services,
      studioToken: studio.studioToken,
      version: 'test',
      log: () => {},
    });
    const { url } = await next.listen(0, '127.0.0.1');
    try {
      const res = await fetch(`${url}/studio/listings/${listingId}/playground-key`, {
        headers: { 'X-Studio-Token': studio.studioToken },
      });
      const fresh = (await json(res)).data;
      expect(fresh.keyId).not.toBe(earlier.keyId);
      const keys = new Map(studio.services.apiKeys.list().map((k) => [k.id, k]));
      expect(keys.get(earlier.keyId)?.revokedAt).toEqual(expect.any(String));
      expect(keys.get(fresh.keyId)?.revokedAt).toBeNull();
      expect(keys.get(mine.id)?.revokedAt).toBeNull();
      const active = [...keys.values()].filter((k) => k.label === 'studio playground' && !k.revokedAt);
      expect(active.map((k) => k.id)).toEqual([fresh.keyId]);
    } finally {
      await next.close();
    }
  });

  it('revokes, at the next launch over the same data, the playground keys of every wallet acted as', async () => {
    const dir = tempDir();
    const launch = async () => {
      const services = openServices(dir.path);
      const server = createServer({
        services,
        studioToken: studio.studioToken,
        version: 'test',
        log: () => {},
      });
      const { url } = await server.listen(0, '127.0.0.1');
      const keyOf = async (id: string, wallet?: string) => {
        const query = wallet ? `?wallet=${wallet}` : '';
        const res = await fetch(`${url}/studio/listings/${id}/playground-key${query}`, {
          headers: { 'X-Studio-Token': studio.studioToken },
        });
        expect(res.status).toBe(200);
        return (await json(res)).data as { keyId: string; wallet: string };
      };
      return { services, keyOf, close: async () => (await server.close(), services.close()) };
    };
    try {
      const first = await launch();
      const creator = first.services.wallets.defaultWallet().address;
      const buyer = first.services.wallets.create('buyer1').address;
      const id = first.services.listings.create(
        { title: 'Two launches', accessModel: 'one_time', price: 1 },
        creator,
      ).id;
      const creatorKey = await first.keyOf(id);
      const buyerKey = await first.keyOf(id, buyer);
      expect(buyerKey.wallet).toBe(buyer);
      const mine = first.services.apiKeys.create(buyer, 'my script');
      // A key someone made with the playground's own label is theirs: it stays live.
      const sameLabel = first.services.apiKeys.create(creator, 'studio playground');
      await first.close();
      await new Promise((resolve) => setTimeout(resolve, 5));

      // The next launch acts as the creator only: the buyer's key of the first launch goes too.
      const second = await launch();
      try {
        const fresh = await second.keyOf(id);
        const keys = new Map(second.services.apiKeys.list().map((k) => [k.id, k]));
        expect(keys.get(creatorKey.keyId)?.revokedAt).toEqual(expect.any(String));
        expect(keys.get(buyerKey.keyId)?.revokedAt).toEqual(expect.any(String));
        expect(keys.get(mine.id)?.revokedAt).toBeNull();
        expect(keys.get(sameLabel.id)?.revokedAt).toBeNull();
        expect(keys.get(fresh.keyId)?.revokedAt).toBeNull();
        const live = [...keys.values()].filter(
          (k) => k.label.startsWith('studio playground') && !k.revokedAt,
        );
        expect(live.map((k) => k.id).sort()).toEqual([fresh.keyId, sameLabel.id].sort());
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('answers 404 for an unknown listing', async () => {
    const res = await studioFetch('/studio/listings/lst_nope/playground-key');
    expect(res.status).toBe(404);
  });

  it('stores settings validated, and never sends a secret back', async () => {
    const put = (key: string, value: string) =>
      studioFetch(`/studio/settings/${key}`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ value }),
      });
    const saved = (await json(await put('openai.apiKey', 'sk-test-1234567890abcdef'))).data;
    expect(saved).toMatchObject({ key: 'openai.apiKey', source: 'stored', secret: true });
    expect(saved.value).not.toContain('1234567890');
    expect(saved.value.endsWith('cdef')).toBe(true);

    const bad = await put('cohere.baseUrl', 'ftp://example.com');
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toContain('cohere.baseUrl: must be an http(s) URL');
    const unknown = await put('nope.key', 'x');
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error.message).toContain("'nope.key' is not a setting");

    const all = (await json(await studioFetch('/studio/settings'))).data as { key: string; value: string }[];
    expect(JSON.stringify(all)).not.toContain('sk-test-1234567890abcdef');
    expect(all.find((s) => s.key === 'cohere.baseUrl')).toMatchObject({ source: 'unset', value: null });

    const cleared = (await json(await put('openai.apiKey', ''))).data;
    expect(cleared).toMatchObject({ source: 'unset', value: null });

    // A stored key is not sent to a new base URL: moving the URL clears it (the masked key could not
    // be read back, but the studio would have sent it to whoever answers at the new address).
    await put('openai.apiKey', 'sk-test-1234567890abcdef');
    const moved = await json(await put('openai.baseUrl', 'http://127.0.0.1:9/v1'));
    expect(moved).toMatchObject({ data: { key: 'openai.baseUrl' }, cleared: ['openai.apiKey'] });
    const after = (await json(await studioFetch('/studio/settings'))).data as {
      key: string;
      source: string;
    }[];
    expect(after.find((s) => s.key === 'openai.apiKey')).toMatchObject({ source: 'unset' });
    await put('openai.baseUrl', '');
  });
});
