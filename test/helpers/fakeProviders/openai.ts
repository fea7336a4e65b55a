import { fakeVector, startFakeServer, type FakeServer, type Reply } from './server';

export const OPENAI_TEST_KEY = 'sk-test-0123456789';

export interface FakeOpenAiOptions {
  apiKey?: string;
  /** Answers this long after each request. */
  delayMs?: number;
  /** Models it serves and their native sizes. */
  models?: Record<string, number>;
  /** Vectors are sent in reverse order (OpenAI promises `index`, not order). Default true. */
  reverse?: boolean;
  /** Lengths vectors by this factor (a compatible server need not normalize). */
  scale?: number;
  /** Sends vectors of this size whatever the model (a broken server). */
  wrongDimensions?: number;
  /** Leaves out the last embedding of every answer. */
  dropLast?: boolean;
  /** Sends each embedding as base64 float32, as for `encoding_format: 'base64'`. */
  base64?: boolean;
}

const openAiError = (status: number, message: string, type: string, code: string | null): Reply => ({
  status,
  body: { error: { message, type, param: null, code } },
});

/**
 * An OpenAI embeddings endpoint (`POST /v1/embeddings`) on 127.0.0.1 speaking OpenAI's wire format and
 * its errors, checking the key, the body and the limits as OpenAI does.
 */
export function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeServer> {
  const {
    apiKey = OPENAI_TEST_KEY,
    models = { 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072 },
    reverse = true,
    scale = 1,
  } = options;
  return startFakeServer((req) => {
    if (req.method !== 'POST' || req.path !== '/v1/embeddings') {
      return openAiError(404, `Invalid URL (${req.method} ${req.path})`, 'invalid_request_error', null);
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return openAiError(
        401,
        'Incorrect API key provided: sk-wr***ng. You can find your API key at https://platform.openai.com/account/api-keys.',
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    const body = req.body as {
      model?: unknown;
      input?: unknown;
      encoding_format?: unknown;
      dimensions?: unknown;
    };
    const size = typeof body?.model === 'string' ? models[body.model] : undefined;
    if (!size) {
      return openAiError(
        404,
        `The model \`${String(body?.model)}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        'model_not_found',
      );
    }
    const input = body.input;
    if (!Array.isArray(input) || input.some((t) => typeof t !== 'string' || t === '')) {
      return openAiError(
        400,
        "'$.input' is invalid. Please check the API reference.",
        'invalid_request_error',
        null,
      );
    }
    if (input.length > 2048) {
      return openAiError(
        400,
        `'$.input' is too long: ${input.length} > 2048.`,
        'invalid_request_error',
        null,
      );
    }
    const dims = options.wrongDimensions ?? (typeof body.dimensions === 'number' ? body.dimensions : size);
    let data = (input as string[]).map((text, index) => {
      const v = fakeVector(text, dims).map((x) => x * scale);
      return {
        object: 'embedding',
        index,
        embedding: options.base64 ? Buffer.from(v.buffer).toString('base64') : Array.from(v),
      };
    });
    if (options.dropLast) data = data.slice(0, -1);
    if (reverse) data.reverse();
    const tokens = (input as string[]).reduce((n, t) => n + t.split(/\s+/).length, 0);
    return {
      status: 200,
      body: {
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
    };
  }, options);
}
