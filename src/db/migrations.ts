import type Database from 'better-sqlite3';

export interface Migration {
  version: number;
  name: string;
  up: string;
}

/**
 * Numbered, append-only. The applied version is PRAGMA user_version; each migration runs in its own
 * transaction, so a failure leaves the database at the previous version.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'settings, wallets, api keys, listings and their full-text index',
    up: `
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );

      CREATE TABLE wallets (
        name TEXT PRIMARY KEY,
        address TEXT NOT NULL UNIQUE,
        sealed_secret BLOB NOT NULL,
        encrypted INTEGER NOT NULL,
        is_default INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX wallets_one_default ON wallets (is_default) WHERE is_default = 1;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '',
        wallet TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_wallet ON api_keys (wallet);

      CREATE TABLE listings (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        domain TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '[]',
        access_model TEXT NOT NULL CHECK (access_model IN ('one_time', 'subscription', 'per_query')),
        price_lamports INTEGER NOT NULL CHECK (price_lamports >= 0),
        subscription_days INTEGER,
        rating REAL NOT NULL DEFAULT 0,
        rating_count INTEGER NOT NULL DEFAULT 0,
        creator_wallet TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('draft', 'published')),
        retrieval_rate_limit INTEGER NOT NULL DEFAULT 60,
        embedding_model TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        pda_address TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX listings_status ON listings (status, creator_wallet);

      -- External-content FTS5 index over the searchable text, kept in step by triggers.
      CREATE VIRTUAL TABLE listings_fts USING fts5 (
        title, description, domain, tags,
        content = 'listings', content_rowid = 'seq', tokenize = 'porter unicode61'
      );
      CREATE TRIGGER listings_fts_insert AFTER INSERT ON listings BEGIN
        INSERT INTO listings_fts (rowid, title, description, domain, tags)
        VALUES (new.seq, new.title, new.description, new.domain, new.tags);
      END;
      CREATE TRIGGER listings_fts_delete AFTER DELETE ON listings BEGIN
        INSERT INTO listings_fts (listings_fts, rowid, title, description, domain, tags)
        VALUES ('delete', old.seq, old.title, old.description, old.domain, old.tags);
      END;
      CREATE TRIGGER listings_fts_update AFTER UPDATE OF title, description, domain, tags ON listings BEGIN
        INSERT INTO listings_fts (listings_fts, rowid, title, description, domain, tags)
        VALUES ('delete', old.seq, old.title, old.description, old.domain, old.tags);
        INSERT INTO listings_fts (rowid, title, description, domain, tags)
        VALUES (new.seq, new.title, new.description, new.domain, new.tags);
      END;
    `,
  },
  {
    version: 2,
    name: 'knowledge bases (documents, chunks, vectors), credentials, ledger, query log, uploads',
    up: `
      -- Counters kept by ingestion so listings never count 500,000 chunks on a read.
      ALTER TABLE listings ADD COLUMN document_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE listings ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 0;

      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        format TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        chunk_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (listing_id, source)
      );

      CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        listing_id TEXT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
        document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        token_count INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        UNIQUE (document_id, chunk_index)
      );
      CREATE INDEX chunks_listing ON chunks (listing_id);

      CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        text, content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61'
      );
      CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
      END;
      CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
      END;

      -- The float vectors of record. sqlite-vec vec0 indexes are built from these per listing and
      -- model (their dimension differs per model, so they are created when a listing first needs one).
      CREATE TABLE embeddings (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
      );
      CREATE TABLE vector_indexes (
        listing_id TEXT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        table_name TEXT NOT NULL UNIQUE,
        PRIMARY KEY (listing_id, model)
      );
      -- Re-ingesting unchanged text never re-embeds it.
      CREATE TABLE embedding_cache (
        content_hash TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (content_hash, model)
      );

      CREATE TABLE credentials (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
        holder_wallet TEXT NOT NULL,
        access_model TEXT NOT NULL,
        expires_at TEXT,
        balance_lamports INTEGER NOT NULL DEFAULT 0 CHECK (balance_lamports >= 0),
        pda_address TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (listing_id, holder_wallet)
      );
      CREATE INDEX credentials_holder ON credentials (holder_wallet);

      -- Every instruction the local ledger accepted, with the signature it was accepted on.
      CREATE TABLE ledger_entries (
        id INTEGER PRIMARY KEY,
        instruction TEXT NOT NULL CHECK (instruction IN
          ('create_listing', 'purchase_access', 'verify_access', 'revoke_access', 'withdraw_earnings')),
        listing_id TEXT,
        wallet TEXT NOT NULL,
        amount_lamports INTEGER NOT NULL DEFAULT 0,
        signature TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX ledger_entries_listing ON ledger_entries (listing_id);

      CREATE TABLE query_log (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL,
        api_key_id TEXT,
        wallet TEXT,
        query TEXT NOT NULL,
        top_k INTEGER NOT NULL,
        result_count INTEGER NOT NULL,
        latency_ms REAL NOT NULL,
        debited_lamports INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      );
      CREATE INDEX query_log_listing ON query_log (listing_id, created_at);

      CREATE TABLE uploads (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL,
        wallet TEXT,
        status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
        config TEXT NOT NULL DEFAULT '{}',
        progress TEXT NOT NULL DEFAULT '{}',
        results TEXT NOT NULL DEFAULT '[]',
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );

      -- Wallet-signature authentication accepts each signature once.
      CREATE TABLE used_signatures (
        signature TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'marketplace ledger: test grants, signed messages, listing earnings',
    up: `
      -- Test grants are signed by the listing's creator and paid by nobody: their debits earn nothing.
      ALTER TABLE credentials ADD COLUMN test_grant INTEGER NOT NULL DEFAULT 0;

      -- The canonical message each signature covers, so every entry can be verified again later;
      -- a signed instruction is accepted once.
      ALTER TABLE ledger_entries ADD COLUMN message TEXT;
      CREATE UNIQUE INDEX ledger_entries_signature ON ledger_entries (signature) WHERE signature IS NOT NULL;

      -- What each listing has earned (paid purchases + per-query debits) and paid out to its creator.
      CREATE TABLE listing_earnings (
        listing_id TEXT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE,
        earned_lamports INTEGER NOT NULL DEFAULT 0 CHECK (earned_lamports >= 0),
        withdrawn_lamports INTEGER NOT NULL DEFAULT 0
          CHECK (withdrawn_lamports >= 0 AND withdrawn_lamports <= earned_lamports)
      );

      CREATE INDEX used_signatures_expiry ON used_signatures (expires_at);
    `,
  },
  {
    version: 4,
    name: 'studio evaluation runs',
    up: `
      -- Retrieval evaluations run from the studio, kept to compare settings side by side. The report
      -- (metrics, per-question results, score distribution, settings used) is one JSON document.
      CREATE TABLE eval_runs (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        report TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX eval_runs_listing ON eval_runs (listing_id, created_at);
    `,
  },
  {
    version: 5,
    name: 'per-listing weight of the dense part in hybrid retrieval',
    up: `
      -- NULL: the measured default (docs/retrieval.md).
      ALTER TABLE listings ADD COLUMN retrieval_dense_weight REAL
        CHECK (retrieval_dense_weight IS NULL OR (retrieval_dense_weight >= 0 AND retrieval_dense_weight <= 1));
    `,
  },
  {
    version: 6,
    name: 'binary codes of chunk vectors and a knowledge-base generation, for dense search at scale',
    up: `
      -- The sign bits of each chunk's vector (bit i set when component i is positive), written with the
      -- vector: the first pass of dense search scans them in memory (docs/performance.md). Small rows kept
      -- apart from the 4 KB float blobs, so loading 500,000 of them reads 64 MB, not 2 GB.
      CREATE TABLE vector_codes (
        listing_id TEXT NOT NULL,
        model TEXT NOT NULL,
        chunk_id INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
        code BLOB NOT NULL,
        PRIMARY KEY (listing_id, model, chunk_id)
      ) WITHOUT ROWID;
      CREATE INDEX vector_codes_chunk ON vector_codes (chunk_id);

      -- Moves whenever a listing's documents change (any connection, any process): in-memory search
      -- structures built from the knowledge base are rebuilt when it has moved.
      CREATE TABLE knowledge_base_generations (
        listing_id TEXT PRIMARY KEY,
        generation INTEGER NOT NULL
      );
      CREATE TRIGGER documents_generation_insert AFTER INSERT ON documents BEGIN
        INSERT INTO knowledge_base_generations (listing_id, generation) VALUES (new.listing_id, 1)
          ON CONFLICT (listing_id) DO UPDATE SET generation = generation + 1;
      END;
      CREATE TRIGGER documents_generation_delete AFTER DELETE ON documents BEGIN
        INSERT INTO knowledge_base_generations (listing_id, generation) VALUES (old.listing_id, 1)
          ON CONFLICT (listing_id) DO UPDATE SET generation = generation + 1;
      END;
    `,
  },
  {
    version: 7,
    name: 'full-text rows of new chunks written in bulk by the knowledge-base commit',
    up: `
      -- The commit inserts each new document's rows into chunks_fts in one statement after its chunks
      -- (SqliteKnowledgeBaseStore.commit): about twice as fast as this per-row trigger, which was half of
      -- the commit's time. Deletions still go through chunks_fts_delete.
      DROP TRIGGER chunks_fts_insert;
    `,
  },
  {
    version: 8,
    name: 'a journal of running studio jobs, so those a stop interrupted are reported',
    up: `
      -- A row per studio ingestion or push while it runs (src/db/repositories/jobJournal.ts); the
      -- next start turns the rows it finds running into reports of interrupted jobs, kept until
      -- dismissed. 'given' is what the job was given (JSON): an ingestion's source names, a push's
      -- target and plan. 'progress' is how far it got, where its sort records that (JSON: a push's
      -- parts as each one ends).
      CREATE TABLE studio_jobs (
        id TEXT PRIMARY KEY,
        listing_id TEXT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('ingest', 'reingest', 'push')),
        state TEXT NOT NULL CHECK (state IN ('running', 'interrupted')),
        given TEXT NOT NULL DEFAULT '{}',
        started_at TEXT NOT NULL,
        progress TEXT,
        changed_documents INTEGER
      );
      CREATE INDEX studio_jobs_listing ON studio_jobs (listing_id);
    `,
  },
  {
    version: 9,
    name: 'the metadata keys each logged query filtered on',
    up: `
      -- A JSON array of the keys, NULL for a query without filters. A search started again reads the
      -- columns of the keys a listing's recent queries filtered on ahead of the next filter
      -- (src/db/filterColumns.ts), instead of answering its first filter on each key in SQL.
      ALTER TABLE query_log ADD COLUMN filter_keys TEXT;
    `,
  },
  {
    version: 10,
    name: "each item of a JSON array is one of the spec's documents",
    up: `
      -- How many of the spec's documents a row holds: 1, or the items of a JSON array file that gave
      -- chunks (spec §2: "Each top-level item is one document"). The row stays the file the studio keeps,
      -- re-ingests, deletes and pushes; the API shows each item as document '<row id>.<item>', whose
      -- chunks are numbered from 0 (src/db/repositories/commitWorker.mjs). Listing counts sum this.
      ALTER TABLE documents ADD COLUMN document_count INTEGER NOT NULL DEFAULT 1;

      -- JSON files ingested before: their chunks told the file's id and their place in the file.
      CREATE TEMP TABLE json_chunks AS
        SELECT c.id, c.document_id || '.' || json_extract(c.metadata, '$.item') AS item_document,
          row_number() OVER (PARTITION BY c.document_id, json_extract(c.metadata, '$.item')
            ORDER BY c.chunk_index) - 1 AS item_index
        FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE d.format = 'json' AND json_type(c.metadata, '$.item') = 'integer';
      UPDATE chunks SET metadata = json_set(chunks.metadata, '$.documentId', j.item_document,
          '$.chunkIndex', j.item_index)
        FROM json_chunks j WHERE j.id = chunks.id;
      DROP TABLE json_chunks;
      UPDATE documents SET document_count = max(1, (
          SELECT count(DISTINCT json_extract(c.metadata, '$.item')) FROM chunks c
          WHERE c.document_id = documents.id AND json_type(c.metadata, '$.item') = 'integer'))
        WHERE format = 'json';
      UPDATE listings SET document_count = (
        SELECT coalesce(sum(document_count), 0) FROM documents WHERE documents.listing_id = listings.id);
    `,
  },
  {
    version: 11,
    name: 'which ledger executed each ledger entry',
    up: `
      -- 'solana': the instruction ran on chain and the entry is the studio's record of it; 'local': the
      -- embedded ledger ran it. Money that moved on chain is never counted as embedded-ledger money
      -- (earnings, wallet balances), and a listing created on chain keeps the terms it has there
      -- (docs/marketplace.md, "Two ledgers, one set of records").
      ALTER TABLE ledger_entries ADD COLUMN ledger TEXT NOT NULL DEFAULT 'local'
        CHECK (ledger IN ('local', 'solana'));
    `,
  },
  {
    version: 12,
    name: "the studio's own playground keys marked apart from keys people make",
    up: `
      -- 'playground': minted by the studio's playground, whose plaintext lives only in the process that
      -- minted it, so the next launch revokes it. NULL: made by someone (studio, CLI, API), whatever
      -- its label; a key labelled "studio playground" by hand is theirs and stays live.
      ALTER TABLE api_keys ADD COLUMN purpose TEXT CHECK (purpose IN ('playground'));
      -- Keys from before this migration are known only by their label: the playground's two.
      UPDATE api_keys SET purpose = 'playground'
        WHERE label IN ('studio playground', 'studio playground (test buyer)');
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function migrate(db: Database.Database, to: number = LATEST_VERSION): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > LATEST_VERSION) {
    throw new Error(
      `This database was written by a newer KB Studio (schema ${current}; this build knows up to ${LATEST_VERSION}). Update KB Studio to open it.`,
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current || migration.version > to) continue;
    db.transaction(() => {
      db.exec(migration.up);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
  return db.pragma('user_version', { simple: true }) as number;
}
