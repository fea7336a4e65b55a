import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, ConnectionError, KnowledgeClient } from '../../../src/client';
import { failure, localServer, sendJson, type LocalServer } from '../localServer';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Redirects every /v1 request to /elsewhere, which answers any method with a JSON body. */
const redirecting = (status: number) =>
  localServer((req, res) => {
    if (req.url!.startsWith('/v1/')) {
      res.writeHead(status, { location: '/elsewhere', 'x-request-id': 'req_moved' });
      res.end();
    } else sendJson(res, { data: { id: 'lst_elsewhere' } });
  });

describe('redirects are never followed', () => {
  it('refuses a 302 to POST /retrieve instead of fetching the new address with a GET', async () => {
    server = await redirecting(302);
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const err = await failure(client.retrieve({ listingId: 'lst_1', query: 'q' }));
    expect(err.constructor).toBe(ApiError);
    expect(err).toMatchObject({ code: 'unexpected_redirect', status: 302, requestId: 'req_moved' });
    expect(err.message).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/v1\/retrieve .*HTTP 302 to \/elsewhere/);
    expect(err.message).toMatch(/baseUrl/);
    // Sent once, and nothing went to the new address.
    expect(server.hits.map((h) => `${h.method} ${h.url}`)).toEqual(['POST /v1/retrieve']);
  });

  it.each([301, 303, 307, 308])(
    'refuses a %i on a GET, a stream and a JSON POST, without retrying',
    async (status) => {
      server = await redirecting(status);
      const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
      const got = await failure(client.listings.get('lst_1'));
      expect(got).toMatchObject({ code: 'unexpected_redirect', status });
      expect(got.message).toContain('to /elsewhere');
      const stream = await failure(client.retrieveStream({ listingId: 'lst_1', query: 'q' }).withResponse());
      expect(stream).toMatchObject({ code: 'unexpected_redirect', status });
      const verified = await failure(client.credentials.verify('lst_1'));
      expect(verified).toMatchObject({ code: 'unexpected_redirect', status });
      expect(server.hits.map((h) => h.url)).toEqual([
        '/v1/listings/lst_1',
        '/v1/retrieve/stream',
        '/v1/credentials/lst_1',
      ]);
    },
  );

  it('refuses a redirected upload at once: the same error, sent once, never a retried ConnectionError', async () => {
    server = await redirecting(307);
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    for (const config of [{}, { listingId: 'lst_1' }]) {
      const err = await failure(
        client.upload(new File([new Uint8Array(64 * 1024).fill(1)], 'kb.zip'), config),
      );
      expect(err).not.toBeInstanceOf(ConnectionError);
      expect(err.constructor).toBe(ApiError);
      expect(err.code).toBe('unexpected_redirect');
      expect(err.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/v1\/upload was answered with a redirect/);
      // Node refuses a streamed upload's redirect outright; a HEAD of the address shows where it goes.
      expect(err).toMatchObject({ status: 307, requestId: 'req_moved' });
      expect(err.message).toContain('HTTP 307 to /elsewhere (as a HEAD of the same address was answered)');
    }
    // The upload sent once each time, then a HEAD without the key; nothing went to the new address.
    expect(server.hits.map((h) => `${h.method} ${h.url}`)).toEqual([
      'POST /v1/upload',
      'HEAD /v1/upload',
      'POST /v1/upload',
      'HEAD /v1/upload',
    ]);
    const keyOf = (method: string) =>
      server!.hits.filter((h) => h.method === method).map((h) => h.headers.authorization);
    expect(keyOf('POST')).toEqual(['Bearer kbs_test', 'Bearer kbs_test']);
    expect(keyOf('HEAD')).toEqual([undefined, undefined]);
  });

  it('says the runtime hid the redirect when a HEAD of the address is not redirected', async () => {
    server = await localServer((req, res) => {
      if (req.method === 'HEAD') {
        res.writeHead(405);
        res.end();
      } else {
        res.writeHead(308, { location: '/elsewhere' });
        res.end();
      }
    });
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const err = await failure(
      client.upload(new File([new Uint8Array(1024)], 'kb.zip'), { listingId: 'lst_1' }),
    );
    expect(err).toMatchObject({ code: 'unexpected_redirect', status: undefined });
    expect(err.message).toContain('a redirect (the runtime does not reveal its status or Location)');
  });
});

describe('the shape of a retrieval result', () => {
  it('refuses a JSON body without chunks as invalid_response, without retrying', async () => {
    server = await localServer((_req, res) => sendJson(res, { data: [{ text: 'not a result' }] }));
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, apiKey: 'kbs_test' });
    const err = await failure(client.retrieve({ listingId: 'lst_1', query: 'q' }));
    expect(err.constructor).toBe(ApiError);
    expect(err).toMatchObject({ code: 'invalid_response', status: 200 });
    expect(err.message).toMatch(/"chunks".*not a result/);
    expect(server.hits).toHaveLength(1);
  });
});
