import { inBatches } from '../batching';
import type { EmbedKind, Embedder } from '../embedder';
import { EmbeddingModelUnavailable } from '../errors';
import { EMBEDDING_MODELS } from '../models';
import { postJson, queryDeadline, type ProviderRequestOptions } from './http';
import { embedNonBlank, unitVector } from './vectors';

/** Cohere's limit of texts per embed request. */
export const COHERE_MAX_TEXTS = 96;

export const COHERE_KEY_HINT =
  'Check the key set with `kbstudio settings set cohere.apiKey <key>` or the COHERE_API_KEY environment variable.';

const INPUT_TYPE: Record<EmbedKind, string> = { document: 'search_document', query: 'search_query' };

export interface CohereEmbedderOptions extends ProviderRequestOptions {
  model: string;
  apiKey: string;
  /** `/v2/embed` is appended. */
  baseUrl?: string;
  /** The vector size; needed only for a model outside the spec's table. */
  dimensions?: number;
  /** Texts per request, at most 96. */
  batchSize?: number;
}

/**
 * Cohere's v2 embed API (`POST {baseUrl}/v2/embed`). Its v3 models are asymmetric: a document is
 * embedded as `search_document` and a query as `search_query`. Cohere cuts a text longer than the
 * model's context (512 tokens) at the end (`truncate: 'END'`) rather than failing the request.
 */
export function cohereEmbedder(options: CohereEmbedderOptions): Embedder {
  const { model, apiKey, baseUrl = 'https://api.cohere.com', batchSize = COHERE_MAX_TEXTS } = options;
  const dimensions = options.dimensions ?? EMBEDDING_MODELS[model];
  if (!dimensions) {
    throw new EmbeddingModelUnavailable(
      model,
      'its vector size is unknown; pass `dimensions` for a model outside the supported list.',
    );
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > COHERE_MAX_TEXTS) {
    throw new RangeError(`batchSize must be an integer from 1 to ${COHERE_MAX_TEXTS}, got ${batchSize}.`);
  }
  const url = `${baseUrl.replace(/\/+$/, '')}/v2/embed`;

  const request = async (texts: string[], kind: EmbedKind): Promise<Float32Array[]> => {
    const json = await postJson(
      {
        provider: 'Cohere',
        model,
        url,
        apiKey,
        headers: { 'X-Client-Name': 'kb-studio' },
        body: { model, texts, input_type: INPUT_TYPE[kind], embedding_types: ['float'], truncate: 'END' },
        errorMessage: (body) => {
          const message = (body as { message?: unknown } | null)?.message;
          return typeof message === 'string' ? message : undefined;
        },
        keyHint: COHERE_KEY_HINT,
      },
      options,
      kind === 'query' ? queryDeadline(options) : undefined,
    );
    const vectors = (json as { embeddings?: { float?: unknown } } | null)?.embeddings?.float;
    if (!Array.isArray(vectors)) {
      throw new EmbeddingModelUnavailable(model, 'Cohere answered without `embeddings.float` vectors.');
    }
    if (vectors.length !== texts.length) {
      throw new EmbeddingModelUnavailable(
        model,
        `Cohere returned ${vectors.length} embeddings for ${texts.length} texts.`,
      );
    }
    return vectors.map((v, i) => unitVector(model, v, dimensions, `Cohere's embedding ${i}`));
  };

  return {
    model,
    dimensions,
    embed: (texts, kind) =>
      embedNonBlank(texts, dimensions, async (present) => {
        const out: Float32Array[] = [];
        for (const batch of inBatches(present, batchSize)) out.push(...(await request(batch, kind)));
        return out;
      }),
  };
}
