import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AccessError,
  ApiError,
  ConnectionError,
  KnowledgeClient,
  NotFoundError,
  UserAbortError,
  type Chunk,
} from '../../src/client';
import { failure, localServer, sendError, sendJson, type LocalServer } from './localServer';

const chunk = (i: number): Chunk => ({
  text: `chunk number ${i}`,
  score: 1 - i / 10,
  sourceMetadata: { source: 'a.md', chunkIndex: i },
});
const PARAMS = { listingId: 'lst_1', query: 'anything' };

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function openSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_sse' });
  res.flushHeaders();
}
const event = (name: string, data: unknown, id?: number) =>
  `event: ${name}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
const done = (count: number) => event('done', { listingId: 'lst_1', queryId: 'qry_1', latencyMs: 3, count });

async function readAll(stream: AsyncIterable<Chunk>): Promise<{ chunks: Chunk[]; error: any }> {
  const chunks: Chunk[] = [];
  try {
    for await (const c of stream) chunks.push(c);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks, error: undefined };
}

const clientOf = (s: LocalServer) => new KnowledgeClient({ baseUrl: s.baseUrl, apiKey: 'kbs_test' });

describe('retrieveStream against a misbehaving server', () => {
  it('reads events split at any byte, skips pings and unknown events, and ends at done', async () => {
    const wire =
      ': ping\n\n' +
      event('chunk', chunk(1), 1) +
      event('progress', { x: 1 }) +
      ': ping\n\n' +
      event('chunk', chunk(2), 2) +
      done(2);
    server = await localServer(async (_req, res) => {
      openSse(res);
      for (const byte of Buffer.from(wire)) {
        res.write(Buffer.from([byte]));
        if (byte === 10) await new Promise((r) => setTimeout(r, 1));
      }
      res.end();
    });
    const stream = clientOf(server).retrieveStream(PARAMS);
    const { chunks, error } = await readAll(stream);
    expect(error).toBeUndefined();
    expect(chunks).toEqual([chunk(1), chunk(2)]);
    expect(stream.summary).toEqual({ listingId: 'lst_1', queryId: 'qry_1', latencyMs: 3, count: 2 });
    expect(server.hits[0]!.headers.accept).toBe('text/event-stream');
  });

  it('throws a ConnectionError when the connection is cut mid-way, after the chunks that came', async () => {
    server = await localServer(async (_req, res) => {
      openSse(res);
      res.write(event('chunk', chunk(1), 1) + event('chunk', chunk(2), 2) + 'event: chunk\ndata: {"te');
      await new Promise((r) => setTimeout(r, 50));
      res.socket!.destroy();
    });
    const stream = clientOf(server).retrieveStream(PARAMS);
    const { chunks, error } = await readAll(stream);
    expect(chunks).toEqual([chunk(1), chunk(2)]);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({
      code: 'stream_interrupted',
      requestId: 'req_sse',
      message: expect.stringMatching(/after 2 chunks/),
    });
    expect(stream.summary).toBeUndefined();
  });

  it('throws when the stream ends cleanly but without its done event', async () => {
    server = await localServer((_req, res) => {
      openSse(res);
      res.end(event('chunk', chunk(1), 1));
    });
    const { chunks, error } = await readAll(clientOf(server).retrieveStream(PARAMS));
    expect(chunks).toEqual([chunk(1)]);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toMatch(/without its "done" event/);
  });

  it('throws the error class of an error event', async () => {
    server = await localServer((_req, res, n) => {
      openSse(res);
      const status = n === 0 ? 503 : 403;
      const code = n === 0 ? 'embedding_provider_unavailable' : 'insufficient_balance';
      res.end(
        event('chunk', chunk(1), 1) +
          event('error', { error: { code, message: `${code} now`, status, requestId: 'req_e' } }),
      );
    });
    const client = clientOf(server);
    const first = await readAll(client.retrieveStream(PARAMS));
    expect(first.chunks).toHaveLength(1);
    expect(first.error.constructor).toBe(ApiError);
    expect(first.error).toMatchObject({
      status: 503,
      code: 'embedding_provider_unavailable',
      message: 'embedding_provider_unavailable now',
      requestId: 'req_e',
    });
    const second = await readAll(client.retrieveStream(PARAMS));
    expect(second.error).toBeInstanceOf(AccessError);
    expect(second.error.code).toBe('insufficient_balance');
  });

  it('derives the status of an error event without one from its code', async () => {
    server = await localServer((_req, res, n) => {
      openSse(res);
      const code = ['credential_expired', 'listing_not_found', 'something_new'][n]!;
      res.end(event('error', { error: { code, message: `${code} now`, requestId: 'req_e' } }));
    });
    const client = clientOf(server);
    const expired = await readAll(client.retrieveStream(PARAMS));
    expect(expired.error).toBeInstanceOf(AccessError);
    expect(expired.error).toMatchObject({ code: 'credential_expired', status: 403 });
    const missing = await readAll(client.retrieveStream(PARAMS));
    expect(missing.error).toBeInstanceOf(NotFoundError);
    expect(missing.error.status).toBe(404);
    const unknown = await readAll(client.retrieveStream(PARAMS));
    expect(unknown.error.constructor).toBe(ApiError);
    expect(unknown.error).toMatchObject({ code: 'something_new', status: 500 });
  });

  it('refuses a 200 that is not an event stream as invalid_response naming what came, not as a cut', async () => {
    server = await localServer((_req, res, n) => {
      if (n === 0) sendJson(res, { chunks: [], listingId: 'lst_1', queryId: 'qry_1', latencyMs: 1 });
      else {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-request-id': 'req_html' });
        res.end('<html><body>Sign in to the proxy</body></html>');
      }
    });
    const client = clientOf(server);
    const json = await readAll(client.retrieveStream(PARAMS));
    expect(json.error).not.toBeInstanceOf(ConnectionError);
    expect(json.error).toMatchObject({ code: 'invalid_response', status: 200 });
    expect(json.error.message).toMatch(/text\/event-stream.*"application\/json".*"chunks":\[\]/);
    const html = await failure(client.retrieveStream(PARAMS).withResponse());
    expect(html).toMatchObject({ code: 'invalid_response', requestId: 'req_html' });
    expect(html.message).toMatch(/"text\/html; charset=utf-8": <html><body>Sign in to the proxy/);
    expect(server.hits).toHaveLength(2);
  });

  it('refuses a done event whose count does not match the chunks sent', async () => {
    server = await localServer((_req, res) => {
      openSse(res);
      res.end(event('chunk', chunk(1), 1) + done(3));
    });
    const { error } = await readAll(clientOf(server).retrieveStream(PARAMS));
    expect(error).toMatchObject({
      code: 'invalid_response',
      message: expect.stringMatching(/announced 3 chunks but sent 1/),
    });
  });

  it('closes the connection when the loop breaks; the server sees it', async () => {
    server = await localServer((_req, res) => {
      openSse(res);
      res.write(event('chunk', chunk(1), 1) + event('chunk', chunk(2), 2));
      // then nothing more: a slow server that would keep the connection open
    });
    const got: Chunk[] = [];
    for await (const c of clientOf(server).retrieveStream(PARAMS)) {
      got.push(c);
      break;
    }
    expect(got).toEqual([chunk(1)]);
    await expect(withTimeout(server.clientGone(0), 2000)).resolves.toBe('done');
  });

  it('closes the connection when the caller aborts mid-stream, with a UserAbortError', async () => {
    server = await localServer((_req, res) => {
      openSse(res);
      res.write(event('chunk', chunk(1), 1));
    });
    const controller = new AbortController();
    const stream = clientOf(server).retrieveStream(PARAMS, { signal: controller.signal });
    const chunks: Chunk[] = [];
    const error = await (async () => {
      try {
        for await (const c of stream) {
          chunks.push(c);
          setTimeout(() => controller.abort(), 20);
        }
      } catch (err) {
        return err;
      }
    })();
    expect(chunks).toEqual([chunk(1)]);
    expect(error).toBeInstanceOf(UserAbortError);
    await expect(withTimeout(server.clientGone(0), 2000)).resolves.toBe('done');
  });

  it('stops with a UserAbortError when abort() is called, before or during the loop', async () => {
    server = await localServer((_req, res) => {
      openSse(res);
      res.write(event('chunk', chunk(1), 1));
    });
    const client = clientOf(server);
    const never = client.retrieveStream(PARAMS);
    never.abort();
    expect((await readAll(never)).error).toBeInstanceOf(UserAbortError);
    expect(server.hits).toHaveLength(0);

    const stream = client.retrieveStream(PARAMS);
    const chunks: Chunk[] = [];
    const error = await (async () => {
      try {
        for await (const c of stream) {
          chunks.push(c);
          stream.abort();
        }
      } catch (err) {
        return err;
      }
    })();
    expect(chunks).toEqual([chunk(1)]);
    expect(error).toBeInstanceOf(UserAbortError);
    await expect(withTimeout(server.clientGone(0), 2000)).resolves.toBe('done');
  });

  it('retries a 503 before the stream starts, and gives the response through withResponse()', async () => {
    server = await localServer((_req, res, n) => {
      if (n === 0) return sendError(res, 503, 'embedding_provider_unavailable', { 'retry-after': '0' });
      openSse(res);
      res.end(event('chunk', chunk(1), 1) + done(1));
    });
    const {
      data: stream,
      response,
      requestId,
    } = await clientOf(server).retrieveStream(PARAMS).withResponse();
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(requestId).toBe('req_sse');
    expect((await readAll(stream)).chunks).toEqual([chunk(1)]);
    expect(server.hits).toHaveLength(2);
  });

  it('times out when the stream does not start in time', async () => {
    server = await localServer(() => {});
    const client = new KnowledgeClient({
      baseUrl: server.baseUrl,
      apiKey: 'kbs_test',
      timeoutMs: 150,
      maxRetries: 0,
    });
    const { error } = await readAll(client.retrieveStream(PARAMS));
    expect(error).toMatchObject({ code: 'timeout' });
  });
});

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<'done' | 'timed out'> {
  return Promise.race([
    promise.then(() => 'done' as const),
    new Promise<'timed out'>((r) => setTimeout(() => r('timed out'), ms)),
  ]);
}
