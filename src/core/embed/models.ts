import { EMBEDDING_MODEL_LIST, OFFLINE_MODEL } from '../../shared/embeddingModels';
import { UnsupportedEmbeddingModel } from './errors';

/** Every embedding model a knowledge base may declare, with its dimensions (spec §2 table + the offline default). */
export const EMBEDDING_MODELS: Record<string, number> = Object.fromEntries(
  EMBEDDING_MODEL_LIST.map((m) => [m.id, m.dimensions]),
);

/** The dimensions of `model`; UnsupportedEmbeddingModel (listing the supported ones) for any other. */
export function dimensionsOf(model: string): number {
  const dimensions = EMBEDDING_MODELS[model];
  if (dimensions === undefined) throw new UnsupportedEmbeddingModel(model, Object.keys(EMBEDDING_MODELS));
  return dimensions;
}

export { OFFLINE_MODEL };
