import { randomUUID } from 'node:crypto';
import { fakeVector, startFakeServer, type FakeServer } from './server';

export const COHERE_TEST_KEY = 'co-test-0123456789';

const INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering'];

export interface FakeCohereOptions {
  apiKey?: string;
  models?: Record<string, number>;
  /** Sends vectors of this size whatever the model. */
  wrongDimensions?: number;
}

/**
 * The vector the fake Cohere returns: it depends on the input type as well as the text, as Cohere v3
 * embeds a document and a query differently.
 */
export const cohereFakeVector = (inputType: string, text: string, dimensions: number): Float32Array =>
  fakeVector(`${inputType}\u0000${text}`, dimensions);

/** Cohere's v2 embed endpoint (`POST /v2/embed`) on 127.0.0.1, with its wire format, checks and errors. */
export function startFakeCohere(options: FakeCohereOptions = {}): Promise<FakeServer> {
  const {
    apiKey = COHERE_TEST_KEY,
    models = { 'embed-english-v3.0': 1024, 'embed-multilingual-v3.0': 1024 },
  } = options;
  return startFakeServer((req) => {
    if (req.method !== 'POST' || req.path !== '/v2/embed') {
      return { status: 404, body: { message: `Path ${req.path} not found` } };
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, body: { id: randomUUID(), message: 'invalid api token' } };
    }
    const body = req.body as {
      model?: unknown;
      texts?: unknown;
      input_type?: unknown;
      embedding_types?: unknown;
      truncate?: unknown;
    };
    const size = typeof body?.model === 'string' ? models[body.model] : undefined;
    if (!size) {
      return {
        status: 404,
        body: {
          id: randomUUID(),
          message: `model '${String(body?.model)}' not found, make sure the correct model ID was used and that you have access to the model.`,
        },
      };
    }
    const { texts, input_type: inputType } = body;
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
      return {
        status: 400,
        body: { id: randomUUID(), message: 'invalid request: texts must be a list of strings' },
      };
    }
    if (texts.length > 96) {
      return {
        status: 400,
        body: {
          id: randomUUID(),
          message: `invalid request: total number of texts must be at most 96 - received ${texts.length}`,
        },
      };
    }
    if (typeof inputType !== 'string' || !INPUT_TYPES.includes(inputType)) {
      return {
        status: 400,
        body: {
          id: randomUUID(),
          message: 'invalid request: valid input_type must be provided with the provided model',
        },
      };
    }
    const dims = options.wrongDimensions ?? size;
    return {
      status: 200,
      body: {
        id: randomUUID(),
        embeddings: {
          float: (texts as string[]).map((t) => Array.from(cohereFakeVector(inputType, t, dims))),
        },
        texts,
        meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.length } },
        response_type: 'embeddings_by_type',
      },
    };
  });
}
