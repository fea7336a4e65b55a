import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import type { Embedder } from '../../src/core/embed/embedder';
import { offlineGloveEmbedder } from '../../src/core/embed/offlineGlove';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { openServices, type StudioServices } from '../../src/db/services';
import { createServer, type KbServer } from '../../src/server/createServer';
import type { CreateListingInput, Listing } from '../../src/shared/listings';
import { FIXTURES, json, tempDir } from '../helpers/studio';

const DAY_MS = 86_400_000;
const dir = tempDir('kbs-access-');
const clock = { now: new Date('2030-01-01T00:00:00.000Z') };
const offline = offlineGloveEmbedder();
/**
 * The offline model, with a gate: while `gate.size` is set, query embeddings wait until that many are
 * waiting, so concurrent retrievals all pass the access check before any of them is charged.
 */
const gate = { size: 0, waiting: [] as (() => void)[] };
const embedder: Embedder = {
  model: offline.model,
  dimensions: offline.dimensions,
  async embed(texts, kind) {
    if (kind === 'query' && gate.size > 0) {
      await new Promise<void>((resolve) => {
        gate.waiting.push(resolve);
        if (gate.waiting.length >= gate.size) gate.waiting.splice(0).forEach((release) => release());
      });
    }
    return offline.embed(texts, kind);
  },
};
let services: StudioServices;
let server: KbServer;
let url: string;
let creator: string;
let creatorKey: string;

beforeAll(async () => {
  services = openServices(join(dir.path, 'data'), { now: () => clock.now, embedderFor: () => embedder });
  server = createServer({ services, studioToken: 'token-0123456789', version: 'test', log: () => {} });
  url = (await server.listen(0, '127.0.0.1')).url;
  creator = services.wallets.defaultWallet().address;
  creatorKey = services.apiKeys.create(creator).key;
});
afterAll(async () => {
  await server.close();
  services.close();
  dir.remove();
});

/** A published listing whose knowledge base is the Stanley Cup table of the shared fixtures. */
async function listing(
  input: Pick<CreateListingInput, 'accessModel' | 'price'> & Partial<CreateListingInput>,
) {
  const draft = services.listings.create({ title: 'Stanley Cups', ...input }, creator);
  await services.ingestion.run({
    listingId: draft.id,
    inputs: [{ path: join(FIXTURES, 'stanley-cups.csv') }],
    atomic: true,
    limits: STUDIO_LIMITS,
  });
  return services.publishing.publish(draft.id);
}

/** A buyer this studio does not hold, with an API key of its own. */
function buyer() {
  const address = generateKeypair().address;
  return { address, key: services.apiKeys.create(address).key };
}

const retrieve = (key: string, listingId: string, path = '/v1/retrieve') =>
  fetch(url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ listingId, query: 'Maple Leafs Stanley Cups', topK: 2 }),
  });

async function expect403(res: Response, code: string, message: RegExp) {
  expect(res.status).toBe(403);
  const body = await json(res);
  expect(body.error).toMatchObject({ code, status: 403, message: expect.stringMatching(message) });
}

const balanceOf = (listingId: string, holder: string) =>
  services.db
    .prepare(`SELECT balance_lamports FROM credentials WHERE listing_id = ? AND holder_wallet = ?`)
    .pluck()
    .get(listingId, holder) as number | undefined;

const debits = (listingId: string) =>
  services.db
    .prepare(
      `SELECT wallet, debited_lamports AS debited FROM query_log WHERE listing_id = ? ORDER BY created_at`,
    )
    .all(listingId) as { wallet: string; debited: number }[];

describe('access to /v1/retrieve', () => {
  let one: Listing;
  beforeAll(async () => {
    one = await listing({ accessModel: 'one_time', price: 1 });
  });

  it("lets the listing's creator query without a credential, and charges nothing", async () => {
    const res = await retrieve(creatorKey, one.id);
    expect(res.status).toBe(200);
    expect((await json(res)).chunks[0].text).toContain('Maple Leafs');
  });

  it('refuses a wallet without a credential: 403 credential_not_found, on both endpoints', async () => {
    const b = buyer();
    await expect403(
      await retrieve(b.key, one.id),
      'credential_not_found',
      /you hold no credential for this listing \('lst_/,
    );
    await expect403(
      await retrieve(b.key, one.id, '/v1/retrieve/stream'),
      'credential_not_found',
      /Purchase access to query it/,
    );
  });

  it('one_time: active until revoked, then not found', async () => {
    const b = buyer();
    await services.credentials.grant(one.id, b.address);
    expect((await retrieve(b.key, one.id)).status).toBe(200);
    clock.now = new Date(clock.now.getTime() + 3650 * DAY_MS);
    expect((await retrieve(b.key, one.id)).status).toBe(200);
    await services.credentials.revoke(one.id, b.address);
    await expect403(await retrieve(b.key, one.id), 'credential_not_found', /no credential/);
  });

  it('subscription: active until expiresAt, credential_expired once the clock crosses it, active after renewal', async () => {
    const sub = await listing({ accessModel: 'subscription', price: 0.1, subscriptionDays: 30 });
    const b = buyer();
    const end = new Date(clock.now.getTime() + 2 * DAY_MS).toISOString();
    await services.credentials.grant(sub.id, b.address, { expiresAt: end });
    expect((await retrieve(b.key, sub.id)).status).toBe(200);
    clock.now = new Date(Date.parse(end) - 1);
    expect((await retrieve(b.key, sub.id, '/v1/retrieve/stream')).status).toBe(200);
    clock.now = new Date(end);
    await expect403(
      await retrieve(b.key, sub.id),
      'credential_expired',
      new RegExp(`expired at ${end}. Renew it`),
    );
    await expect403(await retrieve(b.key, sub.id, '/v1/retrieve/stream'), 'credential_expired', /Renew it/);
    const verification = await json(
      await fetch(`${url}/v1/credentials/${sub.id}`, { headers: { Authorization: `Bearer ${b.key}` } }),
    );
    expect(verification.data).toMatchObject({ valid: false, status: 'expired', expiresAt: end });
    await services.credentials.grant(sub.id, b.address);
    expect((await retrieve(b.key, sub.id)).status).toBe(200);
  });

  it('per_query: each retrieval debits one price with its query log row; below one price it is insufficient_balance', async () => {
    const metered = await listing({ accessModel: 'per_query', price: 0.002 });
    const b = buyer();
    await services.credentials.grant(metered.id, b.address, { balance: 0.005 });
    expect((await retrieve(b.key, metered.id)).status).toBe(200);
    expect(balanceOf(metered.id, b.address)).toBe(3_000_000);
    const stream = await retrieve(b.key, metered.id, '/v1/retrieve/stream');
    expect(await stream.text()).toContain('event: done');
    expect(balanceOf(metered.id, b.address)).toBe(1_000_000);
    await expect403(
      await retrieve(b.key, metered.id),
      'insufficient_balance',
      /prepaid balance for listing '.*' is 0\.001 SOL, below the price of one query \(0\.002 SOL\)/,
    );
    await expect403(
      await retrieve(b.key, metered.id, '/v1/retrieve/stream'),
      'insufficient_balance',
      /Top it up/,
    );
    expect(balanceOf(metered.id, b.address)).toBe(1_000_000);
    expect(debits(metered.id)).toEqual([
      { wallet: b.address, debited: 2_000_000 },
      { wallet: b.address, debited: 2_000_000 },
    ]);
    // The creator's own queries are free.
    expect((await retrieve(creatorKey, metered.id)).status).toBe(200);
    expect(debits(metered.id).at(-1)).toEqual({ wallet: creator, debited: 0 });
    // A test grant's balance was never paid: spending it earns nothing.
    expect((await services.publishing.earnings(metered.id)).earned).toBe(0);
  });

  it('per_query: 50 concurrent retrievals on a balance of 7 queries — exactly 7 succeed, the balance ends at 0', async () => {
    const metered = await listing({ accessModel: 'per_query', price: 0.003 });
    const shopper = services.wallets.create('shopper');
    const key = services.apiKeys.create(shopper.address).key;
    await services.credentials.purchase(metered.id, shopper.address, { deposit: 0.021 });
    gate.size = 50;
    const responses = await Promise.all(Array.from({ length: 50 }, () => retrieve(key, metered.id))).finally(
      () => (gate.size = 0),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 403)).toHaveLength(43);
    const refusals = await Promise.all(responses.filter((r) => r.status === 403).map(json));
    expect(new Set(refusals.map((b) => b.error.code))).toEqual(new Set(['insufficient_balance']));
    expect(balanceOf(metered.id, shopper.address)).toBe(0);
    expect(debits(metered.id)).toHaveLength(7);
    expect(debits(metered.id).every((d) => d.debited === 3_000_000)).toBe(true);
    // Paid queries are the creator's earnings, and withdrawing moves exactly them.
    expect(await services.publishing.earnings(metered.id)).toEqual({
      listingId: metered.id,
      earned: 0.021,
      withdrawn: 0,
      withdrawable: 0.021,
    });
    expect(await services.publishing.withdraw(metered.id)).toMatchObject({ amount: 0.021 });
    expect((await services.publishing.earnings(metered.id)).withdrawable).toBe(0);
  });
});

describe('the per-credential retrieval rate limit', () => {
  it("allows the listing's retrievalRateLimit per minute per credential, with headers and a 429", async () => {
    const limited = await listing({ accessModel: 'one_time', price: 1, retrievalRateLimit: 3 });
    const [a, b] = [buyer(), buyer()];
    await services.credentials.grant(limited.id, a.address);
    await services.credentials.grant(limited.id, b.address);
    for (let i = 0; i < 3; i++) {
      const res = await retrieve(a.key, limited.id);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    }
    const refused = await retrieve(a.key, limited.id, '/v1/retrieve/stream');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await json(refused)).error).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfter,
      message: expect.stringMatching(/allows 3 retrievals per 60 s per credential/),
    });
    // Another credential has its own count; the creator is held to the key limit only.
    expect((await retrieve(b.key, limited.id)).headers.get('x-ratelimit-remaining')).toBe('2');
    for (let i = 0; i < 4; i++) {
      const own = await retrieve(creatorKey, limited.id);
      expect(own.status).toBe(200);
      expect(own.headers.get('x-ratelimit-limit')).toBe('100');
    }
    // Other endpoints of the same key only show the key limit.
    const listings = await fetch(`${url}/v1/listings`, { headers: { Authorization: `Bearer ${a.key}` } });
    expect(listings.headers.get('x-ratelimit-limit')).toBe('100');
  });

  it("counts only retrievals by a credential's holder: a refused body or a caller without one uses none of it", async () => {
    const limited = await listing({ accessModel: 'one_time', price: 1, retrievalRateLimit: 2 });
    const [holder, stranger] = [buyer(), buyer()];
    await services.credentials.grant(limited.id, holder.address);
    const post = (k: string, body: string, contentType = 'application/json') =>
      fetch(`${url}/v1/retrieve`, {
        method: 'POST',
        headers: { 'Content-Type': contentType, Authorization: `Bearer ${k}` },
        body,
      });
    const refusedBodies = [
      JSON.stringify({ listingId: limited.id, query: 'Flyers', topK: 99 }),
      JSON.stringify({ listing_id: limited.id, query: '' }),
      JSON.stringify({ listingId: limited.id, query: 'Flyers', topk: 2 }),
      `{"listingId":"${limited.id}","query":`,
    ];
    for (const body of refusedBodies) {
      const res = await post(holder.key, body);
      expect(res.status, body).toBe(400);
      // Only the key limit applies, and its headers are the ones shown.
      expect(res.headers.get('x-ratelimit-limit'), body).toBe('100');
    }
    const asText = await post(
      holder.key,
      JSON.stringify({ listingId: limited.id, query: 'Flyers' }),
      'text/plain',
    );
    expect([asText.status, asText.headers.get('x-ratelimit-limit')]).toEqual([400, '100']);
    // A path that is no retrieval route is a 404 that counts for nothing either (a prefix did count it).
    for (const path of ['/v1/retrieve/typo', '/v1/retrieve/stream/extra', '/v1/retrieve/typo']) {
      const missing = await retrieve(holder.key, limited.id, path);
      expect([missing.status, missing.headers.get('x-ratelimit-limit')], path).toEqual([404, '100']);
    }
    for (let i = 0; i < 3; i++) {
      const res = await retrieve(stranger.key, limited.id);
      await expect403(res, 'credential_not_found', /you hold no credential/);
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    }
    // The holder's allowance is whole: two retrievals, then the 429.
    for (let i = 0; i < 2; i++) {
      const res = await retrieve(holder.key, limited.id);
      expect(res.status).toBe(200);
      expect([res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')]).toEqual([
        '2',
        String(1 - i),
      ]);
    }
    expect((await retrieve(holder.key, limited.id)).status).toBe(429);
  });

  it('shows the key limit when it has fewer requests left than the retrieval limit', async () => {
    const tight = createServer({
      services,
      studioToken: 'token-0123456789',
      version: 'test',
      log: () => {},
      rateLimits: { perKey: 2 },
    });
    const tightUrl = (await tight.listen(0, '127.0.0.1')).url;
    try {
      const limited = await listing({ accessModel: 'one_time', price: 1, retrievalRateLimit: 5 });
      const a = buyer();
      await services.credentials.grant(limited.id, a.address);
      const call = () =>
        fetch(`${tightUrl}/v1/retrieve`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${a.key}` },
          body: JSON.stringify({ listing_id: limited.id, query: 'Flyers' }),
        });
      const first = await call();
      expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual([
        '2',
        '1',
      ]);
      const second = await call();
      expect([second.headers.get('x-ratelimit-limit'), second.headers.get('x-ratelimit-remaining')]).toEqual([
        '2',
        '0',
      ]);
      const third = await call();
      expect(third.status).toBe(429);
      expect((await json(third)).error.message).toMatch(/per API key/);
    } finally {
      await tight.close();
    }
  });
});
