import { EMBEDDING_MODEL_LIST, OFFLINE_MODEL } from '../../shared/embeddingModels';

/** Every embedding model a knowledge base may declare, with its dimensions (spec §2 table + the offline default). */
export const EMBEDDING_MODELS: Record<string, number> = Object.fromEntries(
  EMBEDDING_MODEL_LIST.map((m) => [m.id, m.dimensions]),
);

export { OFFLINE_MODEL };
