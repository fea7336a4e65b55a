import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { yieldToEventLoop } from '../core/embed/batching';
import { batchedEmbedder, cachedEmbedder } from '../core/embed/cachedEmbedder';
import type { Embedder } from '../core/embed/embedder';
import { EmbeddingModelUnavailable, UnsupportedEmbeddingModel } from '../core/embed/errors';
import { EMBEDDING_MODELS } from '../core/embed/models';
import { OFFLINE_MODEL, offlineGloveEmbedder } from '../core/embed/offlineGlove';
import { HOSTED_MODELS, hostedEmbedder, isHostedModel } from '../core/embed/providers';
import { SealedSettings, sealedKeyMessage } from '../core/sealedSettings';
import { effectiveSettings, type SettingKey, type Settings } from '../core/settings';
import { IngestionService } from '../core/ingest/service';
import { SourceStore } from '../core/ingest/sourceStore';
import { releaseScratch, sharedWithLiveProcess } from '../core/uploads/scratch';
import { authorizeRetrieval } from '../core/retrieve/access';
import { RetrievalService } from '../core/retrieve/service';
import { ApiKeyService } from '../core/keys/apiKeys';
import { WalletSignatureAuth } from '../core/auth/walletSignature';
import { CredentialService } from '../core/marketplace/credentials';
import type { Ledger, PdaDeriver } from '../core/marketplace/ledger/ledger';
import { LocalLedger } from '../core/marketplace/ledger/local';
import { SolanaLedger } from '../core/marketplace/ledger/solana';
import { SwitchingLedger } from '../core/marketplace/ledger/switching';
import { ListingService } from '../core/marketplace/listings';
import { PublishingService } from '../core/marketplace/publishing';
import { SolanaProgramClient } from '../core/marketplace/solana/client';
import { credentialPda, listingPda, resolveProgramId } from '../core/marketplace/solana/pda';
import { UploadService } from '../core/uploads/uploads';
import { plainSecretBox, WalletService, type SecretBox } from '../core/wallets/wallets';
import {
  openDataDir,
  QUERY_LOG_SPILL_FILE,
  SCRATCH_DIR,
  VECTOR_FILES_DIR,
  LEXICAL_POSTINGS_FILE,
  type Db,
  type OpenOptions,
} from './open';
import { SqliteApiKeyRepository } from './repositories/apiKeys';
import { SqliteCredentialRepository } from './repositories/credentials';
import { SqliteEmbeddingCache } from './repositories/embeddingCache';
import {
  recoverInterruptedJobs,
  SqliteIngestJobJournal,
  SqlitePushJobJournal,
} from './repositories/jobJournal';
import { SqliteKnowledgeBaseStore, WRITE_WAIT_MS } from './repositories/knowledgeBase';
import { SqliteLedgerRepository } from './repositories/ledger';
import { SqliteListingRepository } from './repositories/listings';
import { SqliteSearchRepository } from './repositories/search';
import { SqliteSettingsRepository } from './repositories/settings';
import { SqliteUsedSignatureRepository } from './repositories/signatures';
import { SqliteUploadRepository } from './repositories/uploads';
import { SqliteWalletRepository } from './repositories/wallets';

/** Everything the server, the CLI and the Electron main process work with, over one database. */
export interface StudioServices {
  dataDir: string;
  db: Db;
  listings: ListingService;
  apiKeys: ApiKeyService;
  wallets: WalletService;
  /** The settings table; the providers' API keys sealed with `secretBox` (core/sealedSettings.ts). */
  settings: SealedSettings;
  /** The environment overrides this process was started with. */
  environment: Record<string, string | undefined>;
  knowledgeBase: SqliteKnowledgeBaseStore;
  ingestion: IngestionService;
  /** The original bytes of ingested files, by content hash (re-ingestion, push). */
  sources: SourceStore;
  /**
   * Drops kept source files no document refers to any more: after deletions, and once a server has
   * started (the copies of an ingestion killed before its commit). Copies of ingestions still running
   * in this process are kept; while another live process uses the data directory, nothing is dropped.
   */
  pruneSources(): Promise<number>;
  uploads: UploadService;
  /** Studio ingestions while they run, so those a stop interrupted are reported after the restart. */
  ingestJournal: SqliteIngestJobJournal;
  /** Studio pushes while they run, likewise. */
  pushJournal: SqlitePushJobJournal;
  retrieval: RetrievalService;
  /** The marketplace ledger: local (SQLite) by default, the Solana program when `solana.rpcUrl` is set. */
  ledger: Ledger;
  credentials: CredentialService;
  publishing: PublishingService;
  walletAuth: WalletSignatureAuth;
  /** Seals secrets at rest (wallet secrets, saved push keys): the OS keychain in the desktop app. */
  secretBox: SecretBox;
  embedderFor(model: string): Embedder;
  /**
   * Loads the in-memory search codes of large knowledge bases without holding the event loop, and the
   * offline model where a knowledge base uses it, so their first queries are warm; a server calls it
   * once it listens. Resolves with the listings whose codes were loaded.
   */
  warmSearch(): Promise<string[]>;
  close(): void;
}

export interface ServicesOptions extends OpenOptions {
  /** Environment variables that override stored settings (DESIGN §8); the CLI and the app pass process.env. */
  environment?: Record<string, string | undefined>;
  secretBox?: SecretBox;
  now?: () => Date;
  /** Replaces the embedder registry (tests use small deterministic models). */
  embedderFor?: (model: string) => Embedder;
  /**
   * Whether the offline model embeds documents on a thread of its own (embeddingThread.ts). By default
   * KBSTUDIO_EMBED_THREAD (1 or 0) in `environment` decides, else whether the machine has 2 cores or more.
   */
  embeddingThread?: boolean;
}

export function openServices(dataDir: string, options: ServicesOptions = {}): StudioServices {
  const db = openDataDir(dataDir, options);
  const now = options.now ?? (() => new Date());
  const credentialRepo = new SqliteCredentialRepository(db);
  const ledgerEntries = new SqliteLedgerRepository(db);
  const listings = new ListingService(
    new SqliteListingRepository(db),
    now,
    (listingId) => credentialRepo.listAll(listingId).length,
    (listingId) => ledgerEntries.createdOnChain(listingId),
  );
  const knowledgeBase = new SqliteKnowledgeBaseStore(db, options.nativeBinding);
  const settings = new SealedSettings(new SqliteSettingsRepository(db), options.secretBox ?? plainSecretBox);
  const environment = options.environment ?? {};
  const embedderFor =
    options.embedderFor ??
    embedderRegistry(
      db,
      () => effectiveSettings(settings.all(), environment),
      () => settings.unreadable(),
      options.embeddingThread ?? embeddingThreadWanted(environment),
    );
  const sources = new SourceStore(join(dataDir, 'sources'));
  const ingestion = new IngestionService(
    listings,
    knowledgeBase,
    embedderFor,
    join(dataDir, SCRATCH_DIR),
    sources,
  );
  const uploads = new UploadService(new SqliteUploadRepository(db), listings, ingestion, undefined, now);
  const ingestJournal = new SqliteIngestJobJournal(db);
  const pushJournal = new SqlitePushJobJournal(db);
  // Another live process on this data directory (a running `kbstudio serve`) may be processing those
  // uploads and studio jobs right now: only a directory nobody else uses has truly interrupted ones.
  if (!sharedWithLiveProcess(join(dataDir, SCRATCH_DIR))) {
    uploads.recoverInterrupted();
    recoverInterruptedJobs(db);
  }
  const wallets = new WalletService(new SqliteWalletRepository(db), options.secretBox ?? plainSecretBox, now);
  const local = new LocalLedger({
    credentials: credentialRepo,
    entries: ledgerEntries,
    listings,
    pdas: pdaDeriver(() => effectiveSettings(settings.all(), environment)['solana.programId']),
    now,
  });
  // With an RPC URL the program on chain is the ledger (the local one keeps the studio's records);
  // the choice follows the settings, so switching networks in the studio needs no restart.
  let onChain: { key: string; ledger: SolanaLedger } | undefined;
  const ledger: Ledger = new SwitchingLedger(() => {
    const marketplace = effectiveSettings(settings.all(), environment);
    const rpcUrl = marketplace['solana.rpcUrl'];
    if (!rpcUrl) return local;
    const programId = resolveProgramId(marketplace['solana.programId']);
    const key = `${rpcUrl} ${programId.toBase58()}`;
    if (onChain?.key !== key) {
      const client = new SolanaProgramClient({ rpcUrl, programId, now });
      onChain = {
        key,
        ledger: new SolanaLedger({
          client: () => client,
          local,
          credentials: credentialRepo,
          listings,
          signer: wallets,
        }),
      };
    }
    return onChain.ledger;
  });
  const search = new SqliteSearchRepository(
    db,
    {
      lexical: { nativeBinding: options.nativeBinding, savedFile: join(dataDir, LEXICAL_POSTINGS_FILE) },
      vectorFiles: { directory: join(dataDir, VECTOR_FILES_DIR), nativeBinding: options.nativeBinding },
    },
    { spillFile: join(dataDir, QUERY_LOG_SPILL_FILE) },
  );
  const credentials = new CredentialService(credentialRepo, listings, ledger, wallets, now);
  let closed = false;
  return {
    dataDir,
    db,
    listings,
    apiKeys: new ApiKeyService(new SqliteApiKeyRepository(db), now),
    wallets,
    settings,
    environment,
    knowledgeBase,
    ingestion,
    sources,
    pruneSources: async () => {
      // Nothing in the caller's turn (as warmSearch): the server's ready line comes first.
      await yieldToEventLoop();
      // Another process on this data directory (`kbstudio ingest` beside the studio) may be copying
      // files its documents will refer to once it commits: those copies are left for a later prune.
      if (sharedWithLiveProcess(join(dataDir, SCRATCH_DIR))) return 0;
      const hashes = db.prepare(`SELECT DISTINCT content_hash FROM documents`).pluck().all() as string[];
      return sources.prune(new Set(hashes));
    },
    uploads,
    ingestJournal,
    pushJournal,
    warmSearch: async () => {
      // Nothing in the caller's turn: a server says it is ready first (counting 500k chunks from a cold
      // disk held its ready line for seconds).
      await yieldToEventLoop();
      const [warmed] = await Promise.all([search.warmUp(), warmOfflineModel(db, embedderFor)]);
      return warmed;
    },
    retrieval: new RetrievalService(listings, search, embedderFor, {
      now,
      authorize: (listing, viewer) =>
        authorizeRetrieval(listing, viewer, (l, wallet) => credentials.heldAccess(l, wallet)),
      beforeCharge: () => knowledgeBase.writable(WRITE_WAIT_MS),
    }),
    ledger,
    credentials,
    publishing: new PublishingService(listings, ledger, wallets),
    walletAuth: new WalletSignatureAuth(new SqliteUsedSignatureRepository(db), now),
    embedderFor,
    secretBox: options.secretBox ?? plainSecretBox,
    close: () => {
      if (closed) return;
      closed = true;
      ingestJournal.close();
      pushJournal.close();
      knowledgeBase.close();
      search.close();
      db.close();
      // openDataDir claimed the scratch folder for this process: other processes on the data directory
      // may clean up again (releaseScratch).
      releaseScratch(join(dataDir, SCRATCH_DIR));
    },
  };
}

/**
 * The offline model loads on its first use: about 0.25 s of the first query after a start (its table
 * read, its vocabulary indexed; docs/performance.md, twenty-second pass). Where a knowledge base with
 * chunks uses it, it is loaded now, with one query embedded. Hosted models have nothing to load.
 */
async function warmOfflineModel(db: Db, embedderFor: (model: string) => Embedder): Promise<void> {
  const used = db
    .prepare(`SELECT 1 FROM listings WHERE embedding_model = ? AND chunk_count > 0 LIMIT 1`)
    .get(OFFLINE_MODEL.id);
  if (used) await embedderFor(OFFLINE_MODEL.id).embed(['warm-up query'], 'query');
}

/**
 * The embedder of each model. Hosted models' document vectors are cached by content hash; the offline
 * model's are computed again (faster than reading them back). Hosted providers read their keys when
 * used, so a key set in Settings takes effect without a restart.
 */
function embedderRegistry(
  db: Db,
  settings: () => Settings,
  unreadable: () => SettingKey[],
  thread: boolean,
): (model: string) => Embedder {
  const cache = new SqliteEmbeddingCache(db);
  const offline = batchedEmbedder(offlineGloveEmbedder({ thread }), { batchSize: 512 });
  return (model) => {
    if (model === OFFLINE_MODEL.id) return offline;
    if (!isHostedModel(model)) throw new UnsupportedEmbeddingModel(model, Object.keys(EMBEDDING_MODELS));
    const s = settings();
    const keySetting: SettingKey = HOSTED_MODELS[model] === 'openai' ? 'openai.apiKey' : 'cohere.apiKey';
    if (!s[keySetting] && unreadable().includes(keySetting)) {
      throw new EmbeddingModelUnavailable(model, sealedKeyMessage(keySetting));
    }
    const inner = hostedEmbedder(model, {
      openaiApiKey: s['openai.apiKey'],
      openaiBaseUrl: s['openai.baseUrl'],
      cohereApiKey: s['cohere.apiKey'],
      cohereBaseUrl: s['cohere.baseUrl'],
    });
    // OpenAI requests are bounded by a token budget; Cohere takes 96 texts per request.
    return cachedEmbedder(inner, cache, { batchSize: HOSTED_MODELS[model] === 'openai' ? 2048 : 96 });
  };
}

/**
 * Whether the offline model's documents are embedded on a thread of their own: where there is a second
 * core. On this project's 2-core benchmark machine it took 2.5-3 s per 100 MB off the ingesting thread
 * (the server's), and the ingestion was no slower for it (docs/performance.md, twenty-first pass).
 */
function embeddingThreadWanted(environment: Record<string, string | undefined>): boolean {
  const chosen = environment.KBSTUDIO_EMBED_THREAD;
  if (chosen === '1' || chosen === '0') return chosen === '1';
  return availableParallelism() >= 2;
}

/** PDAs under the configured program ID, read when used so a changed setting applies at once. */
function pdaDeriver(programId: () => string | undefined): PdaDeriver {
  return {
    listing: (creator, listingId) =>
      listingPda(resolveProgramId(programId()), creator, listingId)[0].toBase58(),
    credential: (listing, holder) =>
      credentialPda(resolveProgramId(programId()), listing, holder)[0].toBase58(),
  };
}
