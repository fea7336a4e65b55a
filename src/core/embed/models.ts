import { OFFLINE_MODEL } from './offlineGlove';

/** Every embedding model a knowledge base may declare, with its dimensions (spec §2 table + the offline default). */
export const EMBEDDING_MODELS: Record<string, number> = {
  [OFFLINE_MODEL.id]: OFFLINE_MODEL.dimensions,
  'text-embedding-3-large': 3072,
  'text-embedding-3-small': 1536,
  'embed-english-v3.0': 1024,
  'embed-multilingual-v3.0': 1024,
};

export { OFFLINE_MODEL };
