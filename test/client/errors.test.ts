import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessError,
  ApiError,
  AuthenticationError,
  KnowledgeClient,
  NotFoundError,
  RateLimitError,
} from '../../src/client';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { startStudio, type TestStudio } from '../helpers/studio';

/** Every error class from a real response of the embedded server. */
let studio: TestStudio;
let creatorKey: string;
let listingId: string;

beforeAll(async () => {
  studio = await startStudio({ rateLimits: { perKey: 2 } });
  const creator = studio.services.wallets.defaultWallet().address;
  creatorKey = studio.services.apiKeys.create(creator).key;
  listingId = studio.services.listings.create(
    { title: 'Private notes', accessModel: 'one_time', price: 1 },
    creator,
  ).id;
  await studio.services.publishing.publish(listingId);
});
afterAll(() => studio.close());

const clientWith = (apiKey: string) => new KnowledgeClient({ baseUrl: studio.url, apiKey, maxRetries: 0 });
const freshKey = () => studio.services.apiKeys.create(generateKeypair().address).key;

async function caught(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('errors from the embedded server', () => {
  it('401: an unknown key is an AuthenticationError with code, status, message and request id', async () => {
    const err = await caught(clientWith('kbs_notAKeyAtAll000000000000000000').listings.get(listingId));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 'unauthorized',
      status: 401,
      message: expect.stringMatching(/Invalid API key/),
    });
    expect(err.requestId).toBe(err.headers.get('x-request-id'));
    expect(err.name).toBe('AuthenticationError');
  });

  it('403: retrieval by a wallet without a credential is an AccessError (credential_not_found)', async () => {
    const err = await caught(clientWith(freshKey()).retrieve({ listingId, query: 'anything' }));
    expect(err).toBeInstanceOf(AccessError);
    expect(err).toMatchObject({ code: 'credential_not_found', status: 403 });
    expect(err.message).toMatch(/credential/i);
  });

  it('403 before a stream starts throws from the loop', async () => {
    const stream = clientWith(freshKey()).retrieveStream({ listingId, query: 'anything' });
    const err = await caught(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    );
    expect(err).toBeInstanceOf(AccessError);
    expect(err.code).toBe('credential_not_found');
    expect(stream.summary).toBeUndefined();
  });

  it('404: an unknown listing is a NotFoundError (listing_not_found), from get and from verify', async () => {
    const client = clientWith(freshKey());
    const err = await caught(client.listings.get('lst_doesNotExist0000'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'listing_not_found', status: 404 });
    expect(await caught(client.credentials.verify('lst_doesNotExist0000'))).toBeInstanceOf(NotFoundError);
  });

  it('400: an invalid parameter is a plain ApiError naming the field', async () => {
    const err = await caught(clientWith(freshKey()).retrieve({ listingId, query: 'x', topK: 21 }));
    expect(err.constructor).toBe(ApiError);
    expect(err).toMatchObject({
      code: 'invalid_request',
      status: 400,
      message: expect.stringMatching(/^topK/),
    });
  });

  it('429: past the per-key limit a RateLimitError carries retryAfter; the call is not retried by default', async () => {
    const requests: string[] = [];
    const client = new KnowledgeClient({
      baseUrl: studio.url,
      apiKey: creatorKey,
      fetch: (url, init) => (requests.push(url), fetch(url, init)),
    });
    await client.listings.get(listingId);
    const { rateLimit } = await client.listings.get(listingId).withResponse();
    expect(rateLimit).toMatchObject({ limit: 2, remaining: 0 });
    const err = await caught(client.listings.get(listingId));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    expect(err.retryAfter).toBeLessThanOrEqual(60);
    expect(Number(err.headers.get('retry-after'))).toBe(err.retryAfter);
    expect(requests).toHaveLength(3);
  });
});
