import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../../src/core/errors';
import { EmbeddingModelUnavailable } from '../../../../src/core/embed/errors';
import {
  openAiEmbedder,
  planRequests,
  type OpenAiEmbedderOptions,
} from '../../../../src/core/embed/providers/openai';
import { countTokens } from '../../../../src/core/ingest/chunkers/tokenizer';
import {
  fakeVector,
  OPENAI_TEST_KEY,
  startFakeOpenAi,
  type FakeOpenAiOptions,
  type FakeServer,
} from '../../../helpers/fakeProviders';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(fake: FakeOpenAiOptions = {}, options: Partial<OpenAiEmbedderOptions> = {}) {
  const server = await startFakeOpenAi(fake);
  servers.push(server);
  const delays: number[] = [];
  const embedder = openAiEmbedder({
    model: 'text-embedding-3-small',
    apiKey: OPENAI_TEST_KEY,
    baseUrl: `${server.url}/v1`,
    sleep: async (ms) => void delays.push(ms),
    ...options,
  });
  return { server, embedder, delays };
}

/** The error a promise rejects with, for assertions on its class, code and message. */
async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

const norm = (v: Float32Array) => Math.hypot(...v);

describe('openAiEmbedder', () => {
  it('sends the key and OpenAI request body, and places vectors by index although they come back reversed', async () => {
    const { server, embedder } = await setup();
    expect(embedder.model).toBe('text-embedding-3-small');
    expect(embedder.dimensions).toBe(1536);

    const texts = ['The cat sat on the mat.', 'Quarterly revenue grew 12%.', 'Photosynthesis needs light.'];
    const vectors = await embedder.embed(texts, 'document');

    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req!.path).toBe('/v1/embeddings');
    expect(req!.headers.authorization).toBe(`Bearer ${OPENAI_TEST_KEY}`);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.body).toEqual({ model: 'text-embedding-3-small', input: texts, encoding_format: 'float' });
    expect(vectors).toHaveLength(3);
    texts.forEach((t, i) => {
      expect(vectors[i]).toBeInstanceOf(Float32Array);
      expect(Array.from(vectors[i]!)).toEqual(Array.from(fakeVector(t, 1536)));
    });
  });

  it('normalizes vectors a compatible server sends at other lengths, and decodes base64 embeddings', async () => {
    const scaled = await setup({ scale: 3 });
    const [v] = await scaled.embedder.embed(['a long memo'], 'query');
    expect(norm(v!)).toBeCloseTo(1, 5);
    expect(v![7]).toBeCloseTo(fakeVector('a long memo', 1536)[7]!, 6);

    const base64 = await setup({ base64: true });
    const [w] = await base64.embedder.embed(['a long memo'], 'query');
    expect(Array.from(w!)).toEqual(Array.from(fakeVector('a long memo', 1536)));
  });

  it('splits a call into requests of at most batchSize inputs, keeping the order across them', async () => {
    const { server, embedder } = await setup({}, { batchSize: 3 });
    const texts = Array.from({ length: 7 }, (_, i) => `passage number ${i}`);
    const vectors = await embedder.embed(texts, 'document');
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([
      texts.slice(0, 3),
      texts.slice(3, 6),
      texts.slice(6),
    ]);
    texts.forEach((t, i) => expect(vectors[i]![0]).toBeCloseTo(fakeVector(t, 1536)[0]!, 6));
  });

  it('keeps each request within the token budget, counting cl100k tokens', async () => {
    const texts = ['cat cat cat cat', 'dog dog dog dog', 'one two three four', 'the quick brown fox', 'cat'];
    expect(texts.map(countTokens)).toEqual([4, 4, 4, 4, 1]);
    const { server, embedder } = await setup({}, { maxTokensPerRequest: 9 });
    const vectors = await embedder.embed(texts, 'document');
    expect(server.requests.map((r) => (r.body as { input: string[] }).input)).toEqual([
      texts.slice(0, 2),
      texts.slice(2),
    ]);
    expect(vectors.map((v) => v[3])).toEqual(texts.map((t) => fakeVector(t, 1536)[3]));
  });

  it('plans by byte length alone when that settles it, and never splits below one text per request', async () => {
    const plan = async (texts: string[], maxTokens: number) => {
      const ranges: Array<[number, number]> = [];
      for await (const range of planRequests(texts, 2048, maxTokens, () => new Error('too long')))
        ranges.push(range);
      return ranges;
    };
    const long = 'lorem ipsum '.repeat(100);
    expect(await plan(['a', 'b', 'c'], 250_000)).toEqual([[0, 3]]);
    expect(await plan([long, long], 10)).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it('refuses a text over 8192 tokens, naming it, before sending anything', async () => {
    const { server, embedder } = await setup();
    const huge = 'word '.repeat(9000);
    const err = await failure(embedder.embed(['fine', huge, 'also fine'], 'document'));
    expect(err.code).toBe('invalid_request');
    expect(err.message).toContain('Text 2 of 3');
    expect(err.message).toContain('"word word word');
    expect(err.message).toContain('more than 8192 tokens');
    expect(server.requests).toHaveLength(0);
  });

  it('gives blank texts the zero vector without sending them (OpenAI rejects empty input)', async () => {
    const { server, embedder } = await setup();
    const vectors = await embedder.embed(['', 'real text', '  \n'], 'document');
    expect((server.requests[0]!.body as { input: string[] }).input).toEqual(['real text']);
    expect(vectors[0]!.every((x) => x === 0)).toBe(true);
    expect(vectors[2]!.every((x) => x === 0)).toBe(true);
    expect(vectors[1]![0]).toBeCloseTo(fakeVector('real text', 1536)[0]!, 6);
    expect(await embedder.embed(['   '], 'query')).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  });

  it('waits as Retry-After or retry-after-ms asks after a 429, then succeeds', async () => {
    const { server, embedder, delays } = await setup();
    const rateLimited = (headers: Record<string, string>) => ({
      status: 429,
      headers,
      body: {
        error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
      },
    });
    server.script(rateLimited({ 'Retry-After': '2' }), rateLimited({ 'retry-after-ms': '150' }));
    const [v] = await embedder.embed(['retry me'], 'document');
    expect(Array.from(v!)).toEqual(Array.from(fakeVector('retry me', 1536)));
    expect(server.requests).toHaveLength(3);
    expect(delays).toEqual([2000, 150]);
  });

  it('backs off exponentially with jitter after 5xx answers, then succeeds', async () => {
    const { server, embedder, delays } = await setup({}, { baseDelayMs: 100 });
    server.script({ status: 500, body: {} }, { status: 503, body: {} }, { status: 502, body: 'Bad gateway' });
    await embedder.embed(['eventually'], 'document');
    expect(server.requests).toHaveLength(4);
    expect(delays).toHaveLength(3);
    [100, 200, 400].forEach((full, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(full * 0.75);
      expect(delays[i]).toBeLessThanOrEqual(full);
    });
  });

  it('fails with the provider message once the retries run out', async () => {
    const { server, embedder, delays } = await setup({}, { maxRetries: 2 });
    const serverError = {
      status: 500,
      body: {
        error: {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          code: null,
        },
      },
    };
    server.script(serverError, serverError, serverError, serverError);
    const err = await failure(embedder.embed(['doomed'], 'document'));
    expect(err).toBeInstanceOf(EmbeddingModelUnavailable);
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain("'text-embedding-3-small' is unavailable");
    expect(err.message).toContain(
      'OpenAI failed (500: The server had an error while processing your request.',
    );
    expect(err.message).toContain('gave up after 3 attempts');
    expect(server.requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  it('does not retry a refused key, and says where the key is set', async () => {
    const server = await startFakeOpenAi();
    servers.push(server);
    const embedder = openAiEmbedder({
      model: 'text-embedding-3-large',
      apiKey: 'sk-wrong',
      baseUrl: `${server.url}/v1`,
      sleep: async () => undefined,
    });
    const err = await failure(embedder.embed(['secret'], 'document'));
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain('OpenAI refused the API key (401: Incorrect API key provided');
    expect(err.message).toContain('kbstudio settings set openai.apiKey');
    expect(err.message).toContain('OPENAI_API_KEY');
    expect(err.message).not.toContain('sk-wrong');
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a request OpenAI rejects (unknown model), quoting its reason', async () => {
    const { server } = await setup();
    const embedder = openAiEmbedder({
      model: 'text-embedding-4-huge',
      dimensions: 64,
      apiKey: OPENAI_TEST_KEY,
      baseUrl: `${server.url}/v1/`,
      sleep: async () => undefined,
    });
    const err = await failure(embedder.embed(['x'], 'document'));
    expect(err.message).toContain(
      'OpenAI rejected the request (404: The model `text-embedding-4-huge` does not exist',
    );
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.path).toBe('/v1/embeddings');
  });

  it('reports vectors of the wrong size, or too few of them, as unavailable', async () => {
    const wrong = await setup({ wrongDimensions: 1535 });
    const err = await failure(wrong.embedder.embed(['a', 'b'], 'document'));
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain('has 1535 dimensions, but the model has 1536');

    const short = await setup({ dropLast: true, reverse: false });
    const err2 = await failure(short.embedder.embed(['a', 'b'], 'document'));
    expect(err2.message).toContain('OpenAI returned 1 embeddings for 2 inputs');
  });

  it('aborts an attempt that gets no answer in time and retries it', async () => {
    // Generous retries for the answering attempts: a loaded CI machine may be slow to serve one.
    const { server, embedder } = await setup({}, { timeoutMs: 300, maxRetries: 3 });
    server.script('hang');
    const [v] = await embedder.embed(['slow start'], 'document');
    expect(v![0]).toBeCloseTo(fakeVector('slow start', 1536)[0]!, 6);
    expect(server.requests.length).toBeGreaterThanOrEqual(2);

    const strict = await setup({}, { timeoutMs: 150, maxRetries: 1 });
    strict.server.script('hang', 'hang');
    const err = await failure(strict.embedder.embed(['never'], 'document'));
    expect(err.message).toContain('OpenAI did not answer within 0.15 s (gave up after 2 attempts)');
    expect(strict.server.requests).toHaveLength(2);
  });

  it("gives a query's embedding a deadline for all its attempts; documents keep the per-attempt policy", async () => {
    // A provider that never answers: the client library gives up on a query after 10 s, so must we.
    const { server, embedder } = await setup({}, { queryDeadlineMs: 400 });
    server.script('hang', 'hang', 'hang', 'hang', 'hang');
    const started = performance.now();
    const err = await failure(embedder.embed(['never'], 'query'));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain(
      "OpenAI did not answer within 0.4 s (a query's embedding gets 0.4 s in all).",
    );
    // Failing fast leaves time for a retry: the first attempt's 503, then an answer, within the deadline.
    const retried = await setup({}, { queryDeadlineMs: 5_000 });
    retried.server.script({ status: 503, body: { error: { message: 'busy' } } });
    expect(await retried.embedder.embed(['soon'], 'query')).toHaveLength(1);
    expect(retried.server.requests).toHaveLength(2);
    // Documents (ingestion, off the request path) are not cut short by it.
    const docs = await setup({}, { queryDeadlineMs: 1, maxRetries: 2 });
    docs.server.script({ status: 503, body: {} }, { status: 503, body: {} });
    expect(await docs.embedder.embed(['later'], 'document')).toHaveLength(1);
    expect(docs.server.requests).toHaveLength(3);
  });

  it('retries network failures and then reports the unreachable address', async () => {
    const { server } = await setup();
    const url = server.url;
    await server.close();
    servers.length = 0;
    const delays: number[] = [];
    const embedder = openAiEmbedder({
      model: 'text-embedding-3-small',
      apiKey: OPENAI_TEST_KEY,
      baseUrl: `${url}/v1`,
      maxRetries: 2,
      sleep: async (ms) => void delays.push(ms),
    });
    const err = await failure(embedder.embed(['offline'], 'document'));
    expect(err.message).toContain(`could not reach OpenAI at ${url}/v1/embeddings: ECONNREFUSED`);
    expect(err.message).toContain('gave up after 3 attempts');
    expect(delays).toHaveLength(2);
  });

  it('sends dimensions for a compatible server’s model and checks the vectors against them', async () => {
    const { server } = await setup({ models: { 'local-embedder': 384 } });
    const embedder = openAiEmbedder({
      model: 'local-embedder',
      dimensions: 32,
      apiKey: OPENAI_TEST_KEY,
      baseUrl: `${server.url}/v1`,
    });
    expect(embedder.dimensions).toBe(32);
    const [v] = await embedder.embed(['compatible'], 'query');
    expect((server.requests[0]!.body as { dimensions?: number }).dimensions).toBe(32);
    expect(Array.from(v!)).toEqual(Array.from(fakeVector('compatible', 32)));

    expect(() => openAiEmbedder({ model: 'local-embedder', apiKey: 'k' })).toThrow(/vector size is unknown/);
    expect(() => openAiEmbedder({ model: 'text-embedding-3-small', apiKey: 'k', batchSize: 4096 })).toThrow(
      /batchSize must be an integer from 1 to 2048/,
    );
  });
});
