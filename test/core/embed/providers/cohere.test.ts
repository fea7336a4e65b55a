import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../../src/core/errors';
import { cohereEmbedder, type CohereEmbedderOptions } from '../../../../src/core/embed/providers/cohere';
import {
  COHERE_TEST_KEY,
  cohereFakeVector,
  startFakeCohere,
  type FakeCohereOptions,
  type FakeServer,
} from '../../../helpers/fakeProviders';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(fake: FakeCohereOptions = {}, options: Partial<CohereEmbedderOptions> = {}) {
  const server = await startFakeCohere(fake);
  servers.push(server);
  const delays: number[] = [];
  const embedder = cohereEmbedder({
    model: 'embed-english-v3.0',
    apiKey: COHERE_TEST_KEY,
    baseUrl: server.url,
    sleep: async (ms) => void delays.push(ms),
    ...options,
  });
  return { server, embedder, delays };
}

async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

type CohereBody = { texts: string[]; input_type: string };

describe('cohereEmbedder', () => {
  it('embeds documents as search_document with the v2 request body and bearer key', async () => {
    const { server, embedder } = await setup();
    expect(embedder.dimensions).toBe(1024);
    const texts = ['Invoices are due in 30 days.', 'Refunds take five business days.'];
    const vectors = await embedder.embed(texts, 'document');

    const [req] = server.requests;
    expect(req!.path).toBe('/v2/embed');
    expect(req!.headers.authorization).toBe(`Bearer ${COHERE_TEST_KEY}`);
    expect(req!.body).toEqual({
      model: 'embed-english-v3.0',
      texts,
      input_type: 'search_document',
      embedding_types: ['float'],
      truncate: 'END',
    });
    texts.forEach((t, i) =>
      expect(Array.from(vectors[i]!)).toEqual(Array.from(cohereFakeVector('search_document', t, 1024))),
    );
  });

  it('embeds queries as search_query, which gives a different vector for the same text', async () => {
    const { server, embedder } = await setup();
    const [asQuery] = await embedder.embed(['when are invoices due?'], 'query');
    const [asDocument] = await embedder.embed(['when are invoices due?'], 'document');
    expect(server.requests.map((r) => (r.body as CohereBody).input_type)).toEqual([
      'search_query',
      'search_document',
    ]);
    expect(Array.from(asQuery!)).toEqual(
      Array.from(cohereFakeVector('search_query', 'when are invoices due?', 1024)),
    );
    expect(Array.from(asQuery!)).not.toEqual(Array.from(asDocument!));
  });

  it('sends at most 96 texts per request and keeps their order', async () => {
    const { server, embedder } = await setup({}, { model: 'embed-multilingual-v3.0' });
    const texts = Array.from({ length: 200 }, (_, i) => `Absatz ${i}: Grüße aus München`);
    const vectors = await embedder.embed(texts, 'document');
    expect(server.requests.map((r) => (r.body as CohereBody).texts.length)).toEqual([96, 96, 8]);
    expect(server.requests.flatMap((r) => (r.body as CohereBody).texts)).toEqual(texts);
    expect(vectors[150]![5]).toBeCloseTo(cohereFakeVector('search_document', texts[150]!, 1024)[5]!, 6);
  });

  it('backs off after a 429 without Retry-After, then succeeds', async () => {
    const { server, embedder, delays } = await setup({}, { baseDelayMs: 200 });
    server.script({
      status: 429,
      body: { message: 'You are using a Trial key, which is limited to 100 API calls / minute.' },
    });
    const [v] = await embedder.embed(['rate limited once'], 'document');
    expect(v![0]).toBeCloseTo(cohereFakeVector('search_document', 'rate limited once', 1024)[0]!, 6);
    expect(server.requests).toHaveLength(2);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(150);
    expect(delays[0]).toBeLessThanOrEqual(200);
  });

  it('quotes Cohere’s message when 5xx answers outlast the retries', async () => {
    const { server, embedder } = await setup({}, { maxRetries: 1 });
    const down = { status: 503, body: { message: 'service unavailable, please try again later' } };
    server.script(down, down);
    const err = await failure(embedder.embed(['x'], 'document'));
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain(
      'Cohere failed (503: service unavailable, please try again later) (gave up after 2 attempts).',
    );
  });

  it("gives up on a query's embedding at its deadline, not after every attempt's timeout", async () => {
    const { server, embedder } = await setup({}, { queryDeadlineMs: 300 });
    server.script('hang', 'hang', 'hang', 'hang', 'hang');
    const err = await failure(embedder.embed(['never'], 'query'));
    expect(err.message).toContain(
      "Cohere did not answer within 0.3 s (a query's embedding gets 0.3 s in all).",
    );
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a refused key, and says where the Cohere key is set', async () => {
    const { server, embedder } = await setup({ apiKey: 'co-other' });
    const err = await failure(embedder.embed(['x'], 'query'));
    expect(err.message).toContain('Cohere refused the API key (401: invalid api token).');
    expect(err.message).toContain('kbstudio settings set cohere.apiKey');
    expect(err.message).toContain('COHERE_API_KEY');
    expect(server.requests).toHaveLength(1);
  });

  it('reports vectors of the wrong size as unavailable', async () => {
    const { embedder } = await setup({ wrongDimensions: 384 });
    const err = await failure(embedder.embed(['x', 'y'], 'document'));
    expect(err.message).toContain("Cohere's embedding 0 has 384 dimensions, but the model has 1024.");
  });

  it('gives blank texts the zero vector without sending them', async () => {
    const { server, embedder } = await setup();
    const vectors = await embedder.embed(['', 'text'], 'document');
    expect((server.requests[0]!.body as CohereBody).texts).toEqual(['text']);
    expect(vectors[0]!.every((x) => x === 0)).toBe(true);
    expect(vectors[0]).toHaveLength(1024);
  });
});
