import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { openServices } from '../../src/db/services';
import { createServer } from '../../src/server/createServer';
import type { FakeServer } from '../helpers/fakeProviders';
import {
  ECHOED_COHERE_KEY,
  ECHOED_OPENAI_KEY,
  startKeyEchoingProvider,
} from '../helpers/fakeProviders/keyEcho';
import { tempDir } from '../helpers/studio';

const dir = tempDir('kbs-provider-key-');
const fakes: FakeServer[] = [];
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  dir.remove();
});

const GOOD_KEY = 'the-right-key-0123456789';
const PROVIDERS = [
  {
    name: 'OpenAI',
    provider: 'openai',
    model: 'text-embedding-3-small',
    setting: 'openai.apiKey',
    baseUrl: (url: string) => ({ OPENAI_BASE_URL: `${url}/v1` }),
    badKey: ECHOED_OPENAI_KEY,
  },
  {
    name: 'Cohere',
    provider: 'cohere',
    model: 'embed-english-v3.0',
    setting: 'cohere.apiKey',
    baseUrl: (url: string) => ({ COHERE_BASE_URL: url }),
    badKey: ECHOED_COHERE_KEY,
  },
] as const;

type Provider = (typeof PROVIDERS)[number];

/**
 * A studio on real HTTP whose provider is a local fake accepting only GOOD_KEY (set), with a listing
 * of `p`'s model holding one document and published, and the API key of a buyer holding access.
 */
async function hostedStudio(p: Provider, name: string) {
  const fake = await startKeyEchoingProvider(p.provider, GOOD_KEY);
  fakes.push(fake);
  const services = openServices(join(dir.path, name), { environment: p.baseUrl(fake.url) });
  const server = createServer({ services, studioToken: 'token-0123456789', version: 'test', log: () => {} });
  const close = async () => {
    await server.close();
    services.close();
  };
  try {
    const { url } = await server.listen(0, '127.0.0.1');
    const creator = services.wallets.defaultWallet().address;
    const listing = services.listings.create(
      { title: 'Hosted', accessModel: 'one_time', price: 1, embeddingModel: p.model },
      creator,
    );
    const ingest = async (file: string, text: string) => {
      const path = join(dir.path, `${name}-${file}`);
      writeFileSync(path, text);
      return services.ingestion.run({
        listingId: listing.id,
        inputs: [{ path }],
        atomic: false,
        limits: STUDIO_LIMITS,
      });
    };
    services.settings.set(p.setting, GOOD_KEY);
    expect((await ingest('a.md', '# Invoices\n\nInvoices are due in 30 days.\n')).documents[0]).toMatchObject(
      {
        status: 'ingested',
      },
    );
    await services.publishing.publish(listing.id);
    const buyer = services.wallets.create('buyer').address;
    await services.credentials.grant(listing.id, buyer);
    const buyerKey = services.apiKeys.create(buyer).key;
    const post = (path: string, body: Record<string, unknown>) =>
      fetch(`${url}/v1${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${buyerKey}` },
        body: JSON.stringify({ listingId: listing.id, ...body }),
      });
    return { fake, services, ingest, post, close };
  } catch (err) {
    await close();
    throw err;
  }
}

describe('a hosted provider that quotes a refused API key back', () => {
  for (const p of PROVIDERS) {
    it(`${p.name}: neither a buyer's /v1/retrieve nor the ingestion outcome quotes the key`, async () => {
      const { fake, services, ingest, post, close } = await hostedStudio(p, p.provider);
      try {
        // The key is revoked at the provider; the provider now answers 401 quoting it.
        services.settings.set(p.setting, p.badKey);
        const res = await post('/retrieve', { query: 'when are invoices due?' });
        const text = await res.text();
        expect(res.status).toBe(503);
        expect(JSON.parse(text).error).toMatchObject({ code: 'embedding_provider_unavailable' });
        expect(text).toContain(`${p.name} refused the API key (401: `);
        expect(text).not.toContain('FULLSECRET');

        const outcome = await ingest('b.md', '# Refunds\n\nRefunds take five business days.\n');
        expect(outcome.documents[0]).toMatchObject({ error: { code: 'embedding_provider_unavailable' } });
        const reported = JSON.stringify(outcome);
        expect(reported).toContain(`${p.name} refused the API key (401: `);
        expect(reported).not.toContain('FULLSECRET');
        expect(fake.requests.some((r) => r.headers.authorization === `Bearer ${p.badKey}`)).toBe(true);
      } finally {
        await close();
      }
    });
  }
});

describe('a hosted model whose key is not set', () => {
  it('refuses the stream with the 503 before it opens (no 200 whose first event is the error)', async () => {
    const { services, post, close } = await hostedStudio(PROVIDERS[0], 'no-key');
    try {
      services.settings.set('openai.apiKey', '');
      const stream = (mode: string) => post('/retrieve/stream', { query: 'when are invoices due?', mode });
      const refused = await stream('hybrid');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
        code: 'embedding_provider_unavailable',
        message: expect.stringMatching(/no OpenAI API key is set/),
      });
      // Full-text search needs no embedding: it still streams.
      const lexical = await stream('lexical');
      expect(lexical.status).toBe(200);
      expect(await lexical.text()).toMatch(/event: chunk[\s\S]*Invoices are due[\s\S]*event: done/);
    } finally {
      await close();
    }
  });
});
