import type { Embedder } from '../embedder';
import { EmbeddingModelUnavailable, UnsupportedEmbeddingModel } from '../errors';
import { EMBEDDING_MODELS } from '../models';
import { cohereEmbedder } from './cohere';
import type { ProviderRequestOptions } from './http';
import { openAiEmbedder } from './openai';

export { cohereEmbedder, type CohereEmbedderOptions } from './cohere';
export type { ProviderRequestOptions } from './http';
export { onnxEmbedder, type OnnxEmbedderOptions } from './onnx';
export { openAiEmbedder, type OpenAiEmbedderOptions } from './openai';

export type HostedProvider = 'openai' | 'cohere';

/** The spec's hosted models and who serves them. */
export const HOSTED_MODELS: Readonly<Record<string, HostedProvider>> = {
  'text-embedding-3-large': 'openai',
  'text-embedding-3-small': 'openai',
  'embed-english-v3.0': 'cohere',
  'embed-multilingual-v3.0': 'cohere',
};

export const isHostedModel = (model: string): boolean => Object.hasOwn(HOSTED_MODELS, model);

/** The keys and base URLs from the settings table, environment variables already applied (DESIGN §8). */
export interface HostedProviderSettings {
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  cohereApiKey?: string;
  cohereBaseUrl?: string;
}

const MISSING_KEY: Record<HostedProvider, string> = {
  openai:
    'no OpenAI API key is set. Set one with `kbstudio settings set openai.apiKey <key>` or the OPENAI_API_KEY environment variable.',
  cohere:
    'no Cohere API key is set. Set one with `kbstudio settings set cohere.apiKey <key>` or the COHERE_API_KEY environment variable.',
};

/**
 * The embedder for one of the spec's hosted models, calling its provider with the user's key. A
 * missing key fails here, before any text is sent, with where to set it. Each provider sends as many
 * texts per request as its limits allow (OpenAI 2048 and a token budget, Cohere 96).
 */
export function hostedEmbedder(
  model: string,
  settings: HostedProviderSettings,
  options: ProviderRequestOptions = {},
): Embedder {
  const provider = HOSTED_MODELS[model];
  if (!provider) throw new UnsupportedEmbeddingModel(model, Object.keys(EMBEDDING_MODELS));
  const apiKey = (provider === 'openai' ? settings.openaiApiKey : settings.cohereApiKey)?.trim();
  if (!apiKey) throw new EmbeddingModelUnavailable(model, MISSING_KEY[provider]);
  const baseUrl =
    (provider === 'openai' ? settings.openaiBaseUrl : settings.cohereBaseUrl)?.trim() || undefined;
  return provider === 'openai'
    ? openAiEmbedder({ ...options, model, apiKey, baseUrl })
    : cohereEmbedder({ ...options, model, apiKey, baseUrl });
}
