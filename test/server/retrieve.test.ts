import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import express from 'express';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Embedder } from '../../src/core/embed/embedder';
import { offlineGloveEmbedder } from '../../src/core/embed/offlineGlove';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { SqliteSearchRepository } from '../../src/db/repositories/search';
import { openServices, type StudioServices } from '../../src/db/services';
import { createServer, type KbServer } from '../../src/server/createServer';
import { errorHandler } from '../../src/server/middleware/errors';
import { requestId } from '../../src/server/middleware/requestId';
import { defineRoutes } from '../../src/server/route';
import { retrieveRoutes } from '../../src/server/routes/v1/retrieve';
import { SAMPLE_ITEMS } from '../core/retrieve/knowledgeBase';
import { json, tempDir } from '../helpers/studio';

/**
 * The offline model behind a switch: `fail` makes query embedding throw like a provider outage, `hold`
 * keeps it waiting until released (a slow provider), so failures and disconnects can happen mid-query.
 */
const offline = offlineGloveEmbedder();
let behaviour: 'normal' | 'fail' | 'hold' | 'slow' = 'normal';
let release: () => void = () => {};
const switchable: Embedder = {
  model: offline.model,
  dimensions: offline.dimensions,
  async embed(texts, kind) {
    if (kind === 'query' && behaviour === 'fail') throw new Error('connect ECONNREFUSED 10.0.0.1:443');
    if (kind === 'query' && behaviour === 'hold') await new Promise<void>((resolve) => (release = resolve));
    if (kind === 'query' && behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, 40));
    return offline.embed(texts, kind);
  },
};

const dir = tempDir('kbs-retrieve-http-');
let services: StudioServices;
let server: KbServer;
let url: string;
let key: string;
let keyId: string;
let strangerKey: string;
let listingId: string;

beforeAll(async () => {
  services = openServices(join(dir.path, 'data'), { embedderFor: () => switchable });
  server = createServer({ services, studioToken: 'token-0123456789', version: 'test', log: () => {} });
  url = (await server.listen(0, '127.0.0.1')).url;
  const wallet = services.wallets.defaultWallet().address;
  ({ key, id: keyId } = services.apiKeys.create(wallet));
  strangerKey = services.apiKeys.create(services.wallets.create('stranger').address).key;
  listingId = services.listings.create({ title: 'KB', accessModel: 'one_time', price: 1 }, wallet).id;
  const file = join(dir.path, 'items.json');
  writeFileSync(file, JSON.stringify(SAMPLE_ITEMS));
  await services.ingestion.run({ listingId, inputs: [{ path: file }], atomic: true, limits: STUDIO_LIMITS });
});
afterEach(() => {
  behaviour = 'normal';
  vi.restoreAllMocks();
});
afterAll(async () => {
  await server.close();
  services.close();
  dir.remove();
});

const post = (path: string, body: unknown, k: string | null = key, init: RequestInit = {}) =>
  fetch(url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(k ? { Authorization: `Bearer ${k}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });

/** Reads a whole SSE response through a real SSE parser. */
async function readEvents(res: Response) {
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) parser.feed(decoder.decode(chunk, { stream: true }));
  return { events, comments };
}

const queryLogCount = () => services.db.prepare('SELECT count(*) FROM query_log').pluck().get() as number;

describe('POST /v1/retrieve', () => {
  it('returns the retrieval result at the top level and accepts snake_case fields', async () => {
    const res = await post('/v1/retrieve', {
      listing_id: listingId,
      query: 'quick brown fox',
      top_k: 2,
      min_score: 0.05,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['chunks', 'latencyMs', 'listingId', 'queryId']);
    expect(body).toMatchObject({
      listingId,
      queryId: expect.stringMatching(/^qry_/),
      latencyMs: expect.any(Number),
    });
    expect(body.chunks).toHaveLength(2);
    expect(body.chunks[0]).toEqual({
      text: SAMPLE_ITEMS[0]!.text,
      score: expect.any(Number),
      sourceMetadata: expect.objectContaining({ source: 'items.json', topic: 'animals', chunkIndex: 0 }),
    });
    expect(body.chunks.every((c: { score: number }) => c.score >= 0.05 && c.score <= 1)).toBe(true);
  });

  it('says in a Server-Timing header how long embedding the query and ranking took', async () => {
    behaviour = 'slow';
    const res = await post('/v1/retrieve', { listingId, query: 'quick brown fox', topK: 2 });
    expect(res.status).toBe(200);
    const body = await json(res);
    const timing = res.headers.get('server-timing') ?? '';
    const dur = (name: string) =>
      Number(new RegExp(`(?:^|, )${name};dur=([0-9.]+);desc="[^"]+"`).exec(timing)?.[1] ?? NaN);
    expect(dur('embed')).toBeGreaterThanOrEqual(39);
    expect(dur('search')).toBeGreaterThanOrEqual(0);
    expect(dur('embed') + dur('search')).toBeLessThanOrEqual(body.latencyMs + 0.1);

    behaviour = 'normal';
    const lexical = await post('/v1/retrieve', { listingId, query: 'quick brown fox', mode: 'lexical' });
    expect(lexical.headers.get('server-timing')).toMatch(/^embed;dur=0\.\d\d;/);
  });

  it('logs the query with the key, wallet, topK, result count and latency', async () => {
    const body = await json(await post('/v1/retrieve', { listingId, query: 'telescope galaxy', topK: 3 }));
    const row = services.db.prepare('SELECT * FROM query_log WHERE id = ?').get(body.queryId);
    expect(row).toMatchObject({
      listing_id: listingId,
      api_key_id: keyId,
      wallet: services.wallets.defaultWallet().address,
      query: 'telescope galaxy',
      top_k: 3,
      result_count: body.chunks.length,
      latency_ms: body.latencyMs,
      filter_keys: null,
    });
    // The keys a query filtered on, so that a search started again reads their columns ahead.
    const filtered = await json(
      await post('/v1/retrieve', {
        listingId,
        query: 'telescope galaxy',
        filters: { 'author.name': 'x', page: { $gte: 1 } },
      }),
    );
    const keys = services.db.prepare('SELECT filter_keys FROM query_log WHERE id = ?').pluck();
    expect(JSON.parse(keys.get(filtered.queryId) as string)).toEqual(['author.name', 'page']);
  });

  it('answers while a commit holds the write lock; the log rows follow once it is released', async () => {
    // Before: the log row waited the connection's busy timeout, then the retrieval failed with a 500 (for
    // the whole of a pre-built embeddings import, whose commit holds the lock while its lines are read).
    // With a minute to wait, a retrieval that still waited would time the test out.
    services.db.pragma('busy_timeout = 60000');
    const other = new Database(services.db.name);
    other.exec('BEGIN IMMEDIATE');
    let queryIds: string[];
    try {
      const answer = await post('/v1/retrieve', { listingId, query: 'telescope galaxy', topK: 3 });
      expect(answer.status).toBe(200);
      const streamed = await post('/v1/retrieve/stream', { listingId, query: 'quick fox', topK: 2 });
      expect(streamed.status).toBe(200);
      const { events } = await readEvents(streamed);
      expect(events.at(-1)?.event).toBe('done');
      queryIds = [(await json(answer)).queryId, JSON.parse(events.at(-1)!.data).queryId];
      const logged = services.db.prepare('SELECT count(*) FROM query_log WHERE id IN (?, ?)').pluck();
      expect(logged.get(...queryIds)).toBe(0);
      other.exec('COMMIT');
      await vi.waitFor(() => expect(logged.get(...queryIds)).toBe(2));
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      services.db.pragma('busy_timeout = 5000');
    }
  });

  it.each<{ patch: Record<string, unknown>; message: string }>([
    { patch: { topK: 0 }, message: 'topK: ' },
    { patch: { topK: 21 }, message: 'topK: ' },
    { patch: { topK: 2.5 }, message: 'topK: ' },
    { patch: { topK: '5' }, message: 'topK: ' },
    { patch: { top_k: 50 }, message: 'topK: ' },
    { patch: { minScore: -0.1 }, message: 'minScore: ' },
    { patch: { minScore: 1.1 }, message: 'minScore: ' },
    { patch: { minScore: 'high' }, message: 'minScore: ' },
    { patch: { query: '' }, message: 'query: must not be empty' },
    { patch: { query: '   ' }, message: 'query: must not be empty' },
    { patch: { query: 'x'.repeat(8001) }, message: 'query: at most 8,000 characters' },
    { patch: { query: 42 }, message: 'query: ' },
    { patch: { listingId: undefined }, message: 'listingId: ' },
    { patch: { mode: 'semantic' }, message: 'mode: ' },
    { patch: { filters: { topic: { $regex: 'a' } } }, message: "filters.topic: unknown operator '$regex'" },
    { patch: { filters: [] }, message: 'filters: ' },
    {
      patch: { filters: JSON.parse('{"__proto__": {"$regex": "x"}}') as Record<string, unknown> },
      message: "filters.__proto__: a key named '__proto__' cannot be filtered on",
    },
    // Not taken for the snake_case spelling of a field `_Proto__`.
    {
      patch: JSON.parse('{"__proto__": 1}') as Record<string, unknown>,
      message: "body: unknown field '__proto__'",
    },
    { patch: { query: '\u0000 ' }, message: 'query: must not be empty or only white space' },
    {
      patch: { filters: { a: { $in: Array.from({ length: 1001 }, (_, i) => i) } } },
      message: 'filters.a: $in: at most 1000 values',
    },
    // A misspelt field is not dropped for its default.
    {
      patch: { topk: 20, minscore: 0.99 },
      message:
        "body: unknown fields 'topk', 'minscore'; the fields are listingId, query, topK, minScore, filters, mode",
    },
    // Named as sent: a snake_case key that spells no field is not shown as its camelCase form.
    { patch: { foo_bar: 1, top_k: 3 }, message: "body: unknown field 'foo_bar'; the fields are" },
  ])('refuses $patch with 400 naming the field: $message', async ({ patch, message }) => {
    const res = await post('/v1/retrieve', { listingId, query: 'fox', ...patch });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(body.error.message.startsWith(message), body.error.message).toBe(true);
    // The fault said once (an empty query was also "only white space"; unknown fields are one issue).
    expect(body.error.details.issues).toHaveLength(1);
  });

  it('answers 401 without a key, 404 for an unknown listing or another wallet’s draft, 403 without a credential', async () => {
    expect((await post('/v1/retrieve', { listingId, query: 'fox' }, null)).status).toBe(401);
    const unknown = await post('/v1/retrieve', { listingId: 'lst_nope', query: 'fox' });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error.code).toBe('listing_not_found');
    const draft = await post('/v1/retrieve', { listingId, query: 'fox' }, strangerKey);
    expect(draft.status).toBe(404);
    expect((await json(draft)).error.code).toBe('listing_not_found');

    const published = services.listings.create(
      { title: 'Public', accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
    services.listings.publish(published);
    const refused = await post('/v1/retrieve', { listingId: published, query: 'fox' }, strangerKey);
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toMatchObject({
      code: 'credential_not_found',
      message: expect.stringContaining('no credential for this listing'),
    });
    // The creator always may query their own listing, published or not.
    expect((await post('/v1/retrieve', { listingId: published, query: 'fox' })).status).toBe(200);
  });

  it('answers 503 embedding_provider_unavailable when the embedding provider fails; lexical mode needs none', async () => {
    behaviour = 'fail';
    const before = queryLogCount();
    const res = await post('/v1/retrieve', { listingId, query: 'fox' });
    expect(res.status).toBe(503);
    expect((await json(res)).error).toMatchObject({
      code: 'embedding_provider_unavailable',
      message: expect.stringContaining('ECONNREFUSED'),
    });
    expect(queryLogCount()).toBe(before);
    const lexical = await post('/v1/retrieve', { listingId, query: 'fox', mode: 'lexical' });
    expect(lexical.status).toBe(200);
    expect((await json(lexical)).chunks[0].text).toBe(SAMPLE_ITEMS[0]!.text);
  });

  it('neither logs nor charges a plain retrieval whose client hung up before the answer', async () => {
    behaviour = 'hold';
    const search = vi.spyOn(SqliteSearchRepository.prototype, 'lexicalSearch');
    const before = queryLogCount();
    const abort = new AbortController();
    // The request is in and waits for its query's embedding; the client gives up (its timeout).
    const pending = post('/v1/retrieve', { listingId, query: 'fox' }, key, { signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 150));
    abort.abort();
    await expect(pending).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(search).not.toHaveBeenCalled();
    expect(queryLogCount()).toBe(before);
    // The server is fine afterwards.
    behaviour = 'normal';
    expect((await post('/v1/retrieve', { listingId, query: 'fox' })).status).toBe(200);
  });
});

describe('POST /v1/retrieve/stream', () => {
  it('streams one chunk event per chunk in score order, then done', async () => {
    const request = { listingId, query: 'brown dog on a farm', topK: 4 };
    const plain = await json(await post('/v1/retrieve', request));
    const res = await post('/v1/retrieve/stream', request);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('cache-control')).toContain('no-cache');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const { events } = await readEvents(res);
    const chunks = events.filter((e) => e.event === 'chunk');
    expect(chunks.map((e) => e.id)).toEqual(['1', '2', '3', '4']);
    expect(chunks.map((e) => JSON.parse(e.data))).toEqual(plain.chunks);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    const data = JSON.parse(done.data);
    expect(data).toEqual({
      listingId,
      queryId: expect.stringMatching(/^qry_/),
      latencyMs: expect.any(Number),
      count: 4,
    });
    expect(data.queryId).not.toBe(plain.queryId);
    expect(
      services.db.prepare('SELECT result_count FROM query_log WHERE id = ?').pluck().get(data.queryId),
    ).toBe(4);
  });

  it('ends with done and count 0 when nothing matches', async () => {
    const { events } = await readEvents(
      await post('/v1/retrieve/stream', { listingId, query: 'zzqxv', mode: 'lexical' }),
    );
    expect(events.map((e) => e.event)).toEqual(['done']);
    expect(JSON.parse(events[0]!.data).count).toBe(0);
  });

  it('answers failures before the stream as ordinary JSON errors', async () => {
    for (const [body, k, status] of [
      [{ listingId, query: 'fox', topK: 21 }, key, 400],
      [{ listingId: 'lst_nope', query: 'fox' }, key, 404],
      [{ listingId, query: 'fox' }, strangerKey, 404],
      [{ listingId, query: 'fox' }, null, 401],
    ] as const) {
      const res = await post('/v1/retrieve/stream', body, k);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect((await json(res)).error.status).toBe(status);
    }
  });

  it('reports a failure after the stream started as an error event with the error body', async () => {
    behaviour = 'fail';
    const res = await post('/v1/retrieve/stream', { listingId, query: 'fox' });
    expect(res.status).toBe(200);
    const { events } = await readEvents(res);
    expect(events.map((e) => e.event)).toEqual(['error']);
    expect(JSON.parse(events[0]!.data)).toEqual({
      error: {
        code: 'embedding_provider_unavailable',
        message: expect.stringContaining('ECONNREFUSED'),
        status: 503,
        requestId: res.headers.get('x-request-id'),
      },
    });
  });

  it('stops the work when the client disconnects mid-stream', async () => {
    behaviour = 'hold';
    const search = vi.spyOn(SqliteSearchRepository.prototype, 'lexicalSearch');
    const before = queryLogCount();
    const abort = new AbortController();
    const res = await post('/v1/retrieve/stream', { listingId, query: 'fox' }, key, { signal: abort.signal });
    // The headers are out: the stream has started, and the query is waiting for its embedding.
    expect(res.status).toBe(200);
    abort.abort();
    // Time for the server to see the connection close, then the embedding arrives.
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(search).not.toHaveBeenCalled();
    expect(queryLogCount()).toBe(before);
  });
});

describe('SSE keep-alive', () => {
  it('sends a `: ping` comment while the stream waits', async () => {
    const app = express();
    app.use(requestId, express.json());
    app.use((req, _res, next) => {
      req.principal = { keyId: 'key_x', wallet: services.wallets.defaultWallet().address };
      next();
    });
    const router = express.Router();
    retrieveRoutes(
      defineRoutes(router, undefined, '/v1'),
      { services, studioToken: 'x', version: 'test' },
      {
        pingIntervalMs: 20,
      },
    );
    app.use('/v1', router);
    app.use(errorHandler(() => {}));
    const local = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => local.once('listening', resolve));
    try {
      behaviour = 'hold';
      setTimeout(() => release(), 150);
      const { port } = local.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/v1/retrieve/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ listingId, query: 'fox', topK: 1 }),
      });
      const { events, comments } = await readEvents(res);
      expect(comments.length).toBeGreaterThanOrEqual(2);
      expect(comments.every((c) => c.trim() === 'ping')).toBe(true);
      expect(events.map((e) => e.event)).toEqual(['chunk', 'done']);
    } finally {
      local.closeAllConnections();
      await new Promise((resolve) => local.close(resolve));
    }
  });
});

describe('OpenAPI', () => {
  it('documents both endpoints with their request, result and SSE content', async () => {
    const doc = await json(await fetch(`${url}/v1/openapi.json`));
    const plain = doc.paths['/v1/retrieve'].post;
    expect(plain.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/RetrieveRequest',
    );
    expect(plain.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/RetrievalResult',
    );
    expect(Object.keys(plain.responses)).toEqual(
      expect.arrayContaining(['400', '401', '403', '404', '429', '503']),
    );
    const stream = doc.paths['/v1/retrieve/stream'].post;
    expect(stream.responses['200'].content).toHaveProperty('text/event-stream');
    const request = doc.components.schemas.RetrieveRequest;
    expect(request.properties.topK).toMatchObject({ minimum: 1, maximum: 20, default: 5 });
    expect(request.properties.minScore).toMatchObject({ minimum: 0, maximum: 1 });
    expect(request.required).toEqual(['listingId', 'query']);
    expect(doc.components.schemas).toHaveProperty('FilterOperators');
  });
});
