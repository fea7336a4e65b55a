import { InvalidInput } from '../../errors';
import { countTokensUpTo } from '../../ingest/chunkers/tokenizer';
import { yieldToEventLoop } from '../batching';
import type { EmbedKind, Embedder } from '../embedder';
import { EmbeddingModelUnavailable } from '../errors';
import { EMBEDDING_MODELS } from '../models';
import { postJson, queryDeadline, type ProviderRequestOptions } from './http';
import { embedNonBlank, preview, unitVector } from './vectors';

/** OpenAI's limits for the embeddings endpoint. */
export const OPENAI_MAX_INPUTS = 2048;
export const OPENAI_MAX_INPUT_TOKENS = 8192;
/** Below OpenAI's 300,000 tokens per request, leaving room for a count that differs from theirs by a little. */
export const OPENAI_REQUEST_TOKEN_BUDGET = 250_000;

export const OPENAI_KEY_HINT =
  'Check the key set with `kbstudio settings set openai.apiKey <key>` or the OPENAI_API_KEY environment variable.';

export interface OpenAiEmbedderOptions extends ProviderRequestOptions {
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible server; `/embeddings` is appended. */
  baseUrl?: string;
  /**
   * The vector size. Needed for a model outside the spec's table (an OpenAI-compatible server's
   * model); when given it is also sent as `dimensions`, which shortens text-embedding-3 vectors.
   */
  dimensions?: number;
  /** Inputs per request, at most 2048. */
  batchSize?: number;
  /** Tokens (cl100k) per request. */
  maxTokensPerRequest?: number;
}

/**
 * OpenAI's embeddings API (`POST {baseUrl}/embeddings`). The model is symmetric: documents and queries
 * are embedded alike. Texts are sent in as few requests as OpenAI's input and token limits allow.
 */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const {
    model,
    apiKey,
    baseUrl = 'https://api.openai.com/v1',
    batchSize = OPENAI_MAX_INPUTS,
    maxTokensPerRequest = OPENAI_REQUEST_TOKEN_BUDGET,
  } = options;
  const dimensions = options.dimensions ?? EMBEDDING_MODELS[model];
  if (!dimensions) {
    throw new EmbeddingModelUnavailable(
      model,
      'its vector size is unknown; pass `dimensions` for a model outside the supported list.',
    );
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > OPENAI_MAX_INPUTS) {
    throw new RangeError(`batchSize must be an integer from 1 to ${OPENAI_MAX_INPUTS}, got ${batchSize}.`);
  }
  const url = `${baseUrl.replace(/\/+$/, '')}/embeddings`;

  const request = async (input: string[], kind: EmbedKind): Promise<Float32Array[]> => {
    const json = await postJson(
      {
        provider: 'OpenAI',
        model,
        url,
        apiKey,
        body: {
          model,
          input,
          encoding_format: 'float',
          ...(options.dimensions !== undefined && { dimensions: options.dimensions }),
        },
        errorMessage: openAiErrorMessage,
        keyHint: OPENAI_KEY_HINT,
      },
      options,
      kind === 'query' ? queryDeadline(options) : undefined,
    );
    return orderedVectors(model, json, input.length, dimensions);
  };

  return {
    model,
    dimensions,
    embed: (texts, kind) =>
      embedNonBlank(texts, dimensions, async (present, positions) => {
        const out: Float32Array[] = [];
        for await (const [start, end] of planRequests(present, batchSize, maxTokensPerRequest, (i) =>
          tooLong(model, texts.length, positions[i]!, present[i]!),
        )) {
          out.push(...(await request(present.slice(start, end), kind)));
        }
        return out;
      }),
  };
}

/** Texts tokenized between turns of the event loop (~0.5 ms each), so planning never stalls a server. */
const COUNTS_PER_TURN = 32;

/**
 * Splits texts into consecutive requests of at most `maxInputs` texts and `maxTokens` tokens, one
 * request at a time. A text's UTF-8 byte length bounds its cl100k token count (every token is at least
 * one byte), so texts are tokenized only when that bound cannot settle a question: a text over 8192
 * bytes may exceed the input limit (all are checked before the first request), and a request the
 * bound cuts short may hold more texts by their real counts.
 */
export async function* planRequests(
  texts: string[],
  maxInputs: number,
  maxTokens: number,
  onTooLong: (index: number) => Error,
): AsyncGenerator<[start: number, end: number]> {
  const bytes = texts.map((t) => Buffer.byteLength(t, 'utf8'));
  const exact = new Array<number | undefined>(texts.length);
  let counted = 0;
  const count = async (i: number): Promise<number> => {
    const tokens = countTokensUpTo(texts[i]!, OPENAI_MAX_INPUT_TOKENS);
    if (tokens === false) throw onTooLong(i);
    if (++counted % COUNTS_PER_TURN === 0) await yieldToEventLoop();
    return (exact[i] = tokens);
  };
  for (let i = 0; i < texts.length; i++) if (bytes[i]! > OPENAI_MAX_INPUT_TOKENS) await count(i);

  const fill = async (start: number, exactly: boolean): Promise<number> => {
    let end = start;
    for (let sum = 0; end < texts.length && end - start < maxInputs; end++) {
      const cost = exact[end] ?? (exactly ? await count(end) : bytes[end]!);
      if (sum + cost > maxTokens) break;
      sum += cost;
    }
    return end;
  };
  for (let start = 0; start < texts.length;) {
    let end = await fill(start, false);
    if (end < texts.length && end - start < maxInputs) end = await fill(start, true);
    end = Math.max(end, start + 1);
    yield [start, end];
    start = end;
  }
}

/** OpenAI's `{ error: { message } }`; compatible servers also send `{ error: '…' }` or `{ message }`. */
function openAiErrorMessage(body: unknown): string | undefined {
  const b = body as { error?: { message?: unknown } | string; message?: unknown } | null;
  const candidates = [typeof b?.error === 'object' ? b.error?.message : b?.error, b?.message];
  return candidates.find((m): m is string => typeof m === 'string' && m !== '');
}

function tooLong(model: string, total: number, position: number, text: string): Error {
  return new InvalidInput(
    `Text ${position + 1} of ${total} ("${preview(text)}") has more than ${OPENAI_MAX_INPUT_TOKENS} tokens, the input limit of ${model}; split it into smaller chunks.`,
  );
}

/** `data[].embedding` placed by `data[].index`, each checked; OpenAI does not promise the order. */
function orderedVectors(model: string, json: unknown, count: number, dimensions: number): Float32Array[] {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) {
    throw new EmbeddingModelUnavailable(model, 'OpenAI answered without a `data` list of embeddings.');
  }
  if (data.length !== count) {
    throw new EmbeddingModelUnavailable(
      model,
      `OpenAI returned ${data.length} embeddings for ${count} inputs.`,
    );
  }
  const out = new Array<Float32Array>(count);
  for (const item of data as Array<{ index?: unknown; embedding?: unknown } | null>) {
    const index = item?.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || out[index]) {
      throw new EmbeddingModelUnavailable(
        model,
        `OpenAI returned an embedding with the index ${String(index)}, not one of 0..${count - 1} once each.`,
      );
    }
    out[index] = unitVector(model, item?.embedding, dimensions, `OpenAI's embedding ${index}`);
  }
  return out;
}
