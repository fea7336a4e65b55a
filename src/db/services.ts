import { join } from 'node:path';
import { cachedEmbedder } from '../core/embed/cachedEmbedder';
import type { Embedder } from '../core/embed/embedder';
import { EmbeddingModelUnavailable } from '../core/embed/errors';
import { OFFLINE_MODEL, offlineGloveEmbedder } from '../core/embed/offlineGlove';
import { IngestionService } from '../core/ingest/service';
import { RetrievalService } from '../core/retrieve/service';
import { ApiKeyService } from '../core/keys/apiKeys';
import { ListingService } from '../core/marketplace/listings';
import { UploadService } from '../core/uploads/uploads';
import { plainSecretBox, WalletService, type SecretBox } from '../core/wallets/wallets';
import { openDataDir, type Db, type OpenOptions } from './open';
import { SqliteApiKeyRepository } from './repositories/apiKeys';
import { SqliteEmbeddingCache } from './repositories/embeddingCache';
import { SqliteKnowledgeBaseStore } from './repositories/knowledgeBase';
import { SqliteListingRepository } from './repositories/listings';
import { SqliteSearchRepository } from './repositories/search';
import { SqliteSettingsRepository } from './repositories/settings';
import { SqliteUploadRepository } from './repositories/uploads';
import { SqliteWalletRepository } from './repositories/wallets';

/** Everything the server, the CLI and the Electron main process work with, over one database. */
export interface StudioServices {
  dataDir: string;
  db: Db;
  listings: ListingService;
  apiKeys: ApiKeyService;
  wallets: WalletService;
  settings: SqliteSettingsRepository;
  knowledgeBase: SqliteKnowledgeBaseStore;
  ingestion: IngestionService;
  uploads: UploadService;
  retrieval: RetrievalService;
  embedderFor(model: string): Embedder;
  close(): void;
}

export interface ServicesOptions extends OpenOptions {
  secretBox?: SecretBox;
  now?: () => Date;
  /** Replaces the embedder registry (tests use small deterministic models). */
  embedderFor?: (model: string) => Embedder;
}

export function openServices(dataDir: string, options: ServicesOptions = {}): StudioServices {
  const db = openDataDir(dataDir, options);
  const now = options.now ?? (() => new Date());
  const listings = new ListingService(new SqliteListingRepository(db), now);
  const knowledgeBase = new SqliteKnowledgeBaseStore(db, options.nativeBinding);
  const embedderFor = options.embedderFor ?? embedderRegistry(db);
  const ingestion = new IngestionService(listings, knowledgeBase, embedderFor, join(dataDir, 'tmp'));
  const uploads = new UploadService(new SqliteUploadRepository(db), listings, ingestion, undefined, now);
  uploads.recoverInterrupted();
  return {
    dataDir,
    db,
    listings,
    apiKeys: new ApiKeyService(new SqliteApiKeyRepository(db), now),
    wallets: new WalletService(new SqliteWalletRepository(db), options.secretBox ?? plainSecretBox, now),
    settings: new SqliteSettingsRepository(db),
    knowledgeBase,
    ingestion,
    uploads,
    retrieval: new RetrievalService(listings, new SqliteSearchRepository(db), embedderFor, { now }),
    embedderFor,
    close: () => db.close(),
  };
}

/** The models this build can embed with; vectors of documents are cached by content hash. */
function embedderRegistry(db: Db): (model: string) => Embedder {
  const cache = new SqliteEmbeddingCache(db);
  const offline = cachedEmbedder(offlineGloveEmbedder(), cache, { batchSize: 512 });
  return (model) => {
    if (model === OFFLINE_MODEL.id) return offline;
    throw new EmbeddingModelUnavailable(
      model,
      'this build cannot call hosted embedding providers yet. Upload pre-built embeddings (JSONL) for this model, or use the offline model.',
    );
  };
}
