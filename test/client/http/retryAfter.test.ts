import { afterEach, describe, expect, it } from 'vitest';
import { KnowledgeClient, RateLimitError } from '../../../src/client';
import { localServer, sendError, sendJson, type LocalServer } from '../localServer';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a Retry-After that is neither delta-seconds nor an HTTP date', () => {
  it('is ignored: the retry waits the backoff, not "a date in the past"', async () => {
    server = await localServer((_req, res, n) =>
      n === 0
        ? sendError(res, 503, 'busy', { 'retry-after': '-1' })
        : sendJson(res, { data: { id: 'lst_1' } }),
    );
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    expect(await client.listings.get('lst_1')).toEqual({ id: 'lst_1' });
    // The first backoff is 0.5 s, less up to a quarter.
    expect(server.hits[1]!.at - server.hits[0]!.at).toBeGreaterThanOrEqual(350);
  });

  it('gives no retryAfter to the error', async () => {
    server = await localServer((_req, res) => sendError(res, 429, 'rate_limited', { 'retry-after': '-1' }));
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const err = await client.listings.get('lst_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfter).toBeUndefined();
  });
});
