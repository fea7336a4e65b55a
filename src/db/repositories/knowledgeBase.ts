import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { newId } from '../../core/ids';
import { ChunkLimitExceeded, KnowledgeBaseTooLarge } from '../../core/ingest/errors';
import { Conflict } from '../../core/errors';
import type {
  CommitOptions,
  CommitResult,
  CompletedUpload,
  CommitSession,
  ExistingDocument,
  KnowledgeBaseStore,
  StagedChunk,
  StagedDocument,
  StagedDocumentWriter,
  Staging,
} from '../../core/ingest/store';
import { backgroundWorker } from '../../core/workers/backgroundPriority';
import { PAGE_SIZE, vecExtensionPath, type Db } from '../open';
import {
  deleteDocumentRows,
  deleteDraftListingRows,
  type DeletedDocumentRows,
  type DraftListingDeletion,
} from './deleteRows.mjs';
import { completedUploadRow } from './uploads';

const vectorBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** Page cache of a staging database (negative: KiB), 16 MB: the pages being filled stay in memory. */
const STAGING_CACHE_KIB = -16_384;
/** Page cache of the knowledge base's connection during a commit (negative: KiB), 64 MB. */
export const COMMIT_CACHE_KIB = -65_536;

/**
 * Commits of at least this many chunks let FTS5 merge full-text segments 16 at a time instead of 4 (its
 * `automerge` default, restored in the same transaction): fewer merges of ever larger segments while
 * hundreds of thousands of rows go in (docs/performance.md, "sixth pass"). Smaller commits keep the
 * default so an index built by many small ingestions stays compact.
 */
export const BULK_FTS_MIN_CHUNKS = 10_000;
/**
 * ...and writes a full-text segment per 8 MB of pending terms instead of 1 MB: 300,000 rows of 2 KB
 * texts indexed in 42 µs a row instead of 51 (docs/performance.md, "eighth pass").
 */
export const FTS_BULK = { automerge: 16, hashsize: 8 * 1024 * 1024 };
/**
 * How long a commit waits for other writers' transactions (another process's commit included). It waits
 * on the commit's own thread, so nothing else is held up meanwhile.
 */
const COMMIT_BUSY_TIMEOUT_MS = 120_000;
/** A commit worker started ahead and not used within this long is stopped (its thread costs ~10 MB). */
const STANDBY_IDLE_MS = 60_000;

/** Keys the store sets on every chunk's metadata (DESIGN §4); they win over the document's own. */
const RESERVED_KEYS = ['source', 'format', 'documentId', 'chunkIndex'] as const;
/** 1 when the metadata has a key the commit overrides (it then merges them by parsing the JSON). */
const reservedFlag = (metadata: Record<string, unknown>) =>
  RESERVED_KEYS.some((key) => Object.hasOwn(metadata, key)) ? 1 : 0;

/**
 * Staged chunks live in a throw-away SQLite file in the job's work folder: bounded memory for any
 * upload size, and the knowledge base itself is touched only by the final commit.
 */
class SqliteStaging implements Staging {
  private readonly db: Database.Database;
  private readonly file: string;
  private readonly insertDoc: Database.Statement;
  private readonly insertChunk: Database.Statement;
  private readonly finishDoc: Database.Statement;
  private readonly dropChunks: Database.Statement;
  private readonly dropDoc: Database.Statement;
  private docs = 0;
  private chunks = 0;
  private disposed = false;

  constructor(workDir: string, nativeBinding?: string) {
    mkdirSync(workDir, { recursive: true });
    this.file = join(workDir, `staging-${newId('s', 8)}.db`);
    this.db = new Database(this.file, nativeBinding ? { nativeBinding } : {});
    // A private scratch file: no journal file, no syncs, no lock traffic. 16 KB pages hold a chunk's text
    // and a 1024-d vector in one page (with 4 KB pages every row spills into an overflow chain). The
    // journal is kept in memory, so a failed batch still rolls back: better-sqlite3's defensive mode
    // refuses `journal_mode = OFF` without a word, which left a journal file written beside every batch
    // (16,600 writes for a 10 MB corpus, more than to the staging file itself).
    this.db.pragma(`page_size = ${PAGE_SIZE}`);
    this.db.pragma('journal_mode = MEMORY');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('locking_mode = EXCLUSIVE');
    // Rows are appended in rowid order (a WITHOUT ROWID table keyed by document would keep these large
    // rows in an index b-tree); `reserved` is 1 when the metadata has a key the commit overrides.
    this.db.exec(`
      CREATE TABLE docs (id INTEGER PRIMARY KEY, source TEXT NOT NULL, format TEXT NOT NULL, content_hash TEXT NOT NULL,
        bytes INTEGER NOT NULL, metadata TEXT NOT NULL, chunk_count INTEGER NOT NULL DEFAULT 0, finished INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE chunks (id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL, chunk_index INTEGER NOT NULL, text TEXT NOT NULL,
        token_count INTEGER NOT NULL, content_hash TEXT NOT NULL, metadata TEXT NOT NULL, reserved INTEGER NOT NULL,
        vector BLOB NOT NULL);
      CREATE UNIQUE INDEX chunks_doc ON chunks (doc_id, chunk_index);
    `);
    this.insertDoc = this.db.prepare(
      `INSERT INTO docs (source, format, content_hash, bytes, metadata) VALUES (?, ?, ?, ?, ?)`,
    );
    this.insertChunk = this.db
      .prepare(`INSERT INTO chunks (doc_id, chunk_index, text, token_count, content_hash,
      metadata, reserved, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.finishDoc = this.db.prepare(
      `UPDATE docs SET finished = 1, chunk_count = ?, metadata = coalesce(?, metadata),
        content_hash = coalesce(?, content_hash) WHERE id = ?`,
    );
    this.dropChunks = this.db.prepare(`DELETE FROM chunks WHERE doc_id = ?`);
    this.dropDoc = this.db.prepare(`DELETE FROM docs WHERE id = ?`);
    // One transaction from here to seal(): each batch is a savepoint inside it (better-sqlite3 nests
    // transaction functions so), rolled back alone when it fails. Committing every batch and every
    // document row rewrote the file's header and the last pages of each table and index each time: 87 MB
    // written for 20 MB of staged rows (a 10 MB mixed corpus). Now pages reach the file when the cache
    // spills them or at seal(), once each; the savepoints' journal stays in memory.
    this.db.pragma('temp_store = MEMORY');
    this.db.pragma(`cache_size = ${STAGING_CACHE_KIB}`);
    this.db.exec('BEGIN');
  }

  get documentCount() {
    return this.docs;
  }
  get chunkCount() {
    return this.chunks;
  }

  /**
   * Some errors (a full disk, say) make SQLite roll the whole transaction back, not just the statement or
   * savepoint: everything staged before would be gone while the counts still include it.
   */
  private assertIntact(): void {
    if (!this.db.inTransaction) {
      throw new Error(
        'the staging database lost what was staged after a storage error; start the ingestion again.',
      );
    }
  }

  open(document: StagedDocument): StagedDocumentWriter {
    this.assertIntact();
    const { lastInsertRowid } = this.insertDoc.run(
      document.source,
      document.format,
      document.contentHash,
      document.bytes,
      JSON.stringify(document.metadata),
    );
    const docId = Number(lastInsertRowid);
    let next = 0;
    const addBatch = this.db.transaction((batch: StagedChunk[]) => {
      // Counted once the batch is in: a batch that fails is rolled back whole, and its rows not counted.
      let index = next;
      for (const c of batch) {
        const reserved = reservedFlag(c.metadata);
        this.insertChunk.run(
          docId,
          index++,
          c.text,
          c.tokenCount,
          c.contentHash,
          JSON.stringify(c.metadata),
          reserved,
          vectorBlob(c.vector),
        );
      }
      next = index;
    });
    return {
      add: (batch) => {
        this.assertIntact();
        addBatch(batch);
      },
      finish: (metadata, contentHash) => {
        this.assertIntact();
        this.finishDoc.run(next, metadata ? JSON.stringify(metadata) : null, contentHash ?? null, docId);
        this.docs++;
        this.chunks += next;
      },
      discard: () => {
        // Called after a failure: it must not hide that failure with one of its own.
        if (!this.db.inTransaction) return;
        this.dropChunks.run(docId);
        this.dropDoc.run(docId);
      },
    };
  }

  /**
   * Closes the staging database and returns its file, for the commit's own connection to read. Nothing
   * more can be staged; dispose() still removes the file.
   */
  seal(): string {
    if (this.db.open) {
      this.assertIntact();
      this.db.exec('COMMIT');
      this.db.close();
    }
    return this.file;
  }

  dispose() {
    if (this.disposed) return;
    this.disposed = true;
    if (this.db.open) this.db.close();
    rmSync(this.file, { force: true });
  }
}

/**
 * How long a write waits in writable() for the commit this thread feeds (the last documents of an
 * ingestion, the lines of an import) to stop holding the write lock. Past it, the write fails at once
 * with the busy 500 and Retry-After, as it did before writes waited.
 */
export const WRITE_WAIT_MS = 60_000;

export class SqliteKnowledgeBaseStore implements KnowledgeBaseStore {
  /** Commits run one at a time: each waits for the one before it (failed or not). */
  private commits: Promise<unknown> = Promise.resolve();
  /** Commit workers still running (answered, but still checkpointing), by their exit. */
  private readonly workers = new Set<Promise<void>>();
  /** A commit worker started when an ingestion began, ready for its commit (see commitWorker.mjs). */
  private standby: { worker: Worker; idle: NodeJS.Timeout } | undefined;
  /** Commits under way that this thread still feeds, and its connection's busy timeout before the first. */
  private fed = 0;
  private busyTimeoutMs = 0;
  /** Writes waiting for the commits this thread feeds to stop holding the lock (see writable). */
  private readonly writeWaiters = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly nativeBinding?: string,
  ) {}

  documents(listingId: string): ExistingDocument[] {
    const rows = this.db
      .prepare(
        `SELECT id, source, content_hash, chunk_count, document_count, bytes, metadata FROM documents
         WHERE listing_id = ? ORDER BY source`,
      )
      .all(listingId) as {
      id: string;
      source: string;
      content_hash: string;
      chunk_count: number;
      document_count: number;
      bytes: number;
      metadata: string;
    }[];
    return rows.map((r) => ({
      id: r.id,
      source: r.source,
      contentHash: r.content_hash,
      chunkCount: r.chunk_count,
      documentCount: r.document_count,
      bytes: r.bytes,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    }));
  }

  createStaging(workDir: string): Staging {
    const staging = new SqliteStaging(workDir, this.nativeBinding);
    // The commit's thread starts while the files are read, not after: a one-file ingestion took 60-70 ms,
    // 25-30 ms of them starting the worker and loading better-sqlite3 in it.
    this.startStandby();
    return staging;
  }

  /** Whether a commit worker is started and waiting for a commit (diagnostics, tests). */
  get commitWorkerReady(): boolean {
    return this.standby !== undefined;
  }

  /** Stops the commit worker kept ready, if any (commits under way go on). */
  close(): void {
    void this.detachStandby()?.terminate();
  }

  private startStandby(): void {
    if (this.standby || this.db.memory) return;
    let worker: Worker;
    try {
      worker = spawnCommitWorker();
    } catch {
      return; // Started again at the commit, which then reports why it cannot.
    }
    const release = () => (this.standby?.worker === worker ? this.detachStandby() : undefined);
    worker.once('exit', release);
    worker.on('error', release);
    // Kept ready, it does not keep the process alive.
    worker.unref();
    const idle = setTimeout(() => void release()?.terminate(), STANDBY_IDLE_MS);
    idle.unref();
    this.standby = { worker, idle };
  }

  /** The worker kept ready, no longer kept (its listeners stay until a commit takes it). */
  private detachStandby(): Worker | undefined {
    const standby = this.standby;
    this.standby = undefined;
    if (standby) clearTimeout(standby.idle);
    return standby?.worker;
  }

  /** The worker kept ready, else a new one. */
  private takeWorker(): Worker {
    const worker = this.detachStandby();
    if (!worker) return spawnCommitWorker();
    worker.removeAllListeners('exit');
    worker.removeAllListeners('error');
    worker.ref();
    return worker;
  }

  /**
   * Runs the commit transaction on a worker thread with its own connection (commitWorker.mjs): a commit
   * of hundreds of thousands of chunks takes a minute, during which this thread keeps serving (WAL lets
   * its connection read meanwhile; its writes wait for the commit like another process's would).
   */
  commit(listingId: string, staging: Staging, options: CommitOptions): Promise<CommitResult> {
    return this.beginCommit(listingId, staging, options).finish();
  }

  /**
   * Starts the commit's worker once the commits before it are over; documents opened on the session are
   * sent to it in batches and written while the caller prepares the next ones.
   */
  beginCommit(listingId: string, staging: Staging, options: CommitOptions): CommitSession {
    if (!(staging instanceof SqliteStaging)) throw new Error('staging from another store');
    if (this.db.memory)
      throw new Error('commits need a database file (the commit runs on its own connection)');
    const request: CommitRequest = {
      databaseFile: this.db.name,
      stagingFile: staging.seal(),
      nativeBinding: this.nativeBinding,
      vecExtension: vecExtensionPath(),
      listingId,
      model: options.model,
      dimensions: options.dimensions,
      listingModel: options.listingModel ?? null,
      maxChunks: options.maxChunks,
      maxKnowledgeBaseBytes: options.maxKnowledgeBaseBytes,
      documentIds: Array.from({ length: staging.documentCount }, () => newId('doc')),
      newVectorTable: `vec_${newId('', 12).slice(1).toLowerCase()}`,
      now: new Date().toISOString(),
      bulkFtsMinChunks: BULK_FTS_MIN_CHUNKS,
      ftsBulk: FTS_BULK,
      cacheSizeKib: COMMIT_CACHE_KIB,
      busyTimeoutMs: COMMIT_BUSY_TIMEOUT_MS,
    };
    const session = new WorkerCommitSession(request, (feeding) => this.feeding(feeding));
    // Commits run one at a time: this one starts once the one before has answered (or was aborted).
    this.commits = this.commits
      .then(() =>
        session.start(
          () => this.takeWorker(),
          (exited) => this.track(exited),
        ),
      )
      .then(() => session.over);
    return session;
  }

  /**
   * Deletes a document with its chunks, full-text rows and vectors, in one transaction on a worker
   * thread with its own connection (commitWorker.mjs), once the commits before it are over: a document of
   * 450,000 chunks in a knowledge base of 500,000 takes about 9 s to delete (39 s row by row in the
   * vector and full-text indexes; deleteRows.mjs now builds them again from what stays), and on this
   * thread it stopped every request for that long. Meanwhile this thread's connection reads the
   * knowledge base as it was, document included. Resolves with the deleted row and the listing's new
   * totals, or undefined when the document was already gone.
   */
  deleteDocument(documentId: string): Promise<DeletedDocumentRows | undefined> {
    const now = new Date().toISOString();
    return this.deletion({ documentId, now }, (db) => deleteDocumentRows(db, documentId, now) ?? null).then(
      (deleted) => deleted ?? undefined,
    );
  }

  /**
   * Deletes listing `listingId` with its whole knowledge base while it is a draft, as deleteDocument
   * deletes a document: on a worker, after the commits before it (a draft of 500,000 chunks takes about
   * 8 s, 19 s with its full-text rows removed one by one). 'published' or 'missing' when it deleted
   * nothing.
   */
  deleteDraftListing(listingId: string): Promise<DraftListingDeletion> {
    return this.deletion({ listingId }, (db) => deleteDraftListingRows(db, listingId));
  }

  /**
   * Runs a deletion in its own transaction, queued behind the commits and deletions before it: on a
   * commit worker, or on this connection for a database in memory (which a worker cannot open).
   */
  private deletion<T>(what: DeleteRequest['what'], inline: (db: Db) => T): Promise<T> {
    const deletion = this.db.memory
      ? this.commits.then(() => this.db.transaction(() => inline(this.db)).immediate())
      : this.commits.then(() =>
          deleteOnWorker<T>(
            {
              databaseFile: this.db.name,
              nativeBinding: this.nativeBinding,
              vecExtension: vecExtensionPath(),
              what,
              cacheSizeKib: COMMIT_CACHE_KIB,
              busyTimeoutMs: COMMIT_BUSY_TIMEOUT_MS,
            },
            (exited) => this.track(exited),
          ),
        );
    // The next commit or deletion waits for this one, failed or not.
    this.commits = deletion.then(
      () => undefined,
      () => undefined,
    );
    return deletion;
  }

  /**
   * Resolves once every commit started so far is over and its worker has exited, its checkpoint done
   * (benchmarks, tests). A process may exit without it: the WAL keeps what a checkpoint had left.
   */
  async settled(): Promise<void> {
    await this.commits;
    while (this.workers.size > 0) await Promise.all(this.workers);
  }

  /**
   * Resolves true at once when no commit this thread feeds holds the write lock, else once the last such
   * commit has its last document and has ended (or failed), or false after `maxMs`. A request that is about to write
   * waits here instead of failing at once (see feeding); after that, its write waits for the lock as usual
   * (the connection's busy timeout), as behind any other writer.
   */
  writable(maxMs: number): Promise<boolean> {
    if (this.fed === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.writeWaiters.delete(wake);
        resolve(ok);
      };
      const wake = () => done(true);
      // A waiting request does not keep a stopping process alive.
      const timer = setTimeout(() => done(false), maxMs).unref();
      this.writeWaiters.add(wake);
    });
  }

  /**
   * While a commit this thread feeds holds the write lock (pre-built lines, and an ingestion's last
   * documents, are written into it as this thread reads them), a write on this thread's connection
   * cannot get the lock: the commit waits for this very thread. Waiting out the busy timeout would stall
   * the server and the commit 5 s and then fail anyway, so such writes fail at once (a busy 500 with
   * Retry-After) until the commit is finishing. The server's write routes wait in writable() first, so
   * only a write that waited its limit, or one made outside a route, meets this.
   */
  private feeding(on: boolean): void {
    if (on && this.fed++ === 0) {
      this.busyTimeoutMs = this.db.pragma('busy_timeout', { simple: true }) as number;
      this.db.pragma('busy_timeout = 0');
    } else if (!on && --this.fed === 0) {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      // The commit still holds the lock while it ends (its last rows, full-text merges, COMMIT): waiting
      // writes go once it has answered, so none of them blocks this thread in SQLite's busy wait.
      const wakeIfIdle = () => {
        if (this.fed === 0) for (const wake of [...this.writeWaiters]) wake();
      };
      void this.commits.then(wakeIfIdle, wakeIfIdle);
    }
  }

  private track(exited: Promise<void>): void {
    this.workers.add(exited);
    void exited.then(() => this.workers.delete(exited));
  }
}

/** What commitWorker.mjs is given (workerData.request). */
interface CommitRequest {
  databaseFile: string;
  stagingFile: string;
  nativeBinding: string | undefined;
  vecExtension: string;
  listingId: string;
  model: string;
  dimensions: number;
  listingModel: 'same' | 'take' | null;
  maxChunks: number;
  maxKnowledgeBaseBytes: number | null;
  /** The new documents' ids, in the order of their sources. */
  documentIds: string[];
  /** The name of the listing's vector table for the model, if it has none yet. */
  newVectorTable: string;
  now: string;
  bulkFtsMinChunks: number;
  ftsBulk: { automerge: number; hashsize: number };
  cacheSizeKib: number;
  busyTimeoutMs: number;
}

/** What commitWorker.mjs posts back: a batch taken, the result, or the error described. */
type CommitReply =
  | { taken: number }
  | { result: CommitResult }
  | { error: { limit: { limit: 'chunks' | 'bytes'; value: number; max: number } } }
  | { error: { modelConflict: ModelConflict } }
  | { error: { name: string; message: string; code?: string; stack?: string } };

type ErrorReply = Extract<CommitReply, { error: unknown }>['error'];

/**
 * This thread's side of a commit on a worker (commitWorker.mjs). Messages sent before the worker starts
 * (it waits for the commits before it) are kept and sent in order when it does. Each batch's promise
 * resolves once the worker has written it, which bounds how far the caller gets ahead; the first error
 * rejects every batch still waiting, and `finish()`.
 */
class WorkerCommitSession implements CommitSession {
  private worker: Worker | undefined;
  private readonly outbox: { message: unknown; transfer: ArrayBuffer[] }[] = [];
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private state: 'open' | 'finishing' | 'aborted' = 'open';
  private failure: Error | undefined;
  private batches = 0;
  private documentKeys = 0;
  private documents = 0;
  private chunks = 0;
  private readonly answer: Promise<CommitResult>;
  private settle!: { resolve: (result: CommitResult) => void; reject: (err: Error) => void };
  /** Resolves once the commit has answered, or its worker is gone (the next commit may start). */
  readonly over: Promise<void>;
  private markOver!: () => void;
  /** Resolves once the worker has exited, or when it will never start. */
  private readonly exited: Promise<void>;
  private markExited!: () => void;

  /** Whether the worker has started while this thread still feeds it (told to `onFeeding`). */
  private fed = false;

  constructor(
    private readonly request: CommitRequest,
    private readonly onFeeding: (feeding: boolean) => void,
  ) {
    this.answer = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // Awaited by finish()'s caller; a session aborted after a failure must not leave it unhandled.
    this.answer.catch(() => undefined);
    this.over = new Promise((resolve) => (this.markOver = resolve));
    this.exited = new Promise((resolve) => (this.markExited = resolve));
  }

  get documentCount() {
    return this.documents;
  }
  get chunkCount() {
    return this.chunks;
  }

  start(takeWorker: () => Worker, onStart: (exited: Promise<void>) => void): void {
    if (this.state === 'aborted') return;
    let worker: Worker;
    try {
      worker = takeWorker();
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
      this.markExited();
      return;
    }
    this.worker = worker;
    onStart(this.exited);
    worker.on('message', (reply: CommitReply) => this.receive(reply));
    worker.on('error', (err) =>
      this.fail(commitError({ name: err.name, message: err.message, stack: err.stack })),
    );
    worker.on('exit', (code) => {
      this.fail(new Error(`the commit worker exited (code ${code}) without an answer`));
      this.markExited();
    });
    worker.postMessage({ type: 'request', request: this.request });
    for (const { message, transfer } of this.outbox.splice(0)) worker.postMessage(message, transfer);
    if (this.state === 'open' && !this.failure) {
      this.fed = true;
      this.onFeeding(true);
    }
  }

  open(document: StagedDocument): StagedDocumentWriter {
    if (this.state !== 'open') throw new Error('the commit is over; nothing more can be added');
    const key = ++this.documentKeys;
    this.post({
      type: 'open',
      key,
      documentId: newId('doc'),
      source: document.source,
      format: document.format,
      contentHash: document.contentHash,
      bytes: document.bytes,
    });
    let chunks = 0;
    return {
      add: (batch) => {
        const seq = ++this.batches;
        const taken = this.failure
          ? Promise.reject(this.failure)
          : new Promise<void>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
        // Awaited by the caller; an error that also fails the session must not count as unhandled here.
        taken.catch(() => undefined);
        if (!this.failure) {
          const { message, transfer } = batchMessage(key, seq, batch, this.request.dimensions);
          this.post(message, transfer);
          chunks += batch.length;
        }
        return taken;
      },
      finish: (metadata, contentHash) => {
        this.post({
          type: 'finish',
          key,
          metadata: JSON.stringify(metadata ?? document.metadata),
          contentHash: contentHash ?? null,
        });
        this.documents++;
        this.chunks += chunks;
      },
      discard: () => this.post({ type: 'discard', key }),
    };
  }

  finish(upload?: CompletedUpload): Promise<CommitResult> {
    if (this.state === 'aborted') return Promise.reject(new Error('the commit was aborted'));
    if (this.state === 'open') {
      this.state = 'finishing';
      this.post({ type: 'commit', upload: upload && completedUploadRow(upload) });
      this.stopFeeding();
    }
    return this.answer;
  }

  async abort(): Promise<void> {
    if (this.state === 'finishing') {
      // Committed or failed: the worker may still be checkpointing, which nobody needs to wait for.
      await this.answer.catch(() => undefined);
      return;
    }
    if (this.state === 'open') {
      this.state = 'aborted';
      this.fail(new Error('the commit was aborted'));
      if (this.worker) this.worker.postMessage({ type: 'abort' });
      else {
        this.markExited();
        this.markOver();
      }
    }
    await this.exited;
  }

  private post(message: unknown, transfer: ArrayBuffer[] = []) {
    if (this.failure) return;
    if (this.worker) this.worker.postMessage(message, transfer);
    else this.outbox.push({ message, transfer });
  }

  private receive(reply: CommitReply) {
    if ('taken' in reply) {
      this.waiting.get(reply.taken)?.resolve();
      this.waiting.delete(reply.taken);
    } else if ('result' in reply) {
      this.settle.resolve(reply.result);
      this.markOver();
    } else this.fail(commitError(reply.error));
  }

  private stopFeeding() {
    if (!this.fed) return;
    this.fed = false;
    this.onFeeding(false);
  }

  /** The first error fails every batch waiting and the commit; later ones change nothing. */
  private fail(err: Error) {
    // The worker rolls back and no longer holds the lock.
    this.stopFeeding();
    this.failure ??= err;
    for (const { reject } of this.waiting.values()) reject(this.failure);
    this.waiting.clear();
    this.settle.reject(this.failure);
    this.markOver();
  }
}

/** What commitWorker.mjs is given for a deletion (serveDelete): a document, or a draft listing. */
interface DeleteRequest {
  databaseFile: string;
  nativeBinding: string | undefined;
  vecExtension: string;
  what: { documentId: string; now: string } | { listingId: string };
  cacheSizeKib: number;
  busyTimeoutMs: number;
}

/** Runs a deletion on a commit worker of its own; `onStart` is given the worker's exit. */
function deleteOnWorker<T>(
  { what, ...request }: DeleteRequest,
  onStart: (exited: Promise<void>) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = spawnCommitWorker();
    onStart(new Promise((exited) => worker.once('exit', () => exited())));
    worker.once('message', (reply: { deleted: T } | { error: ErrorReply }) => {
      if ('error' in reply) reject(commitError(reply.error));
      else resolve(reply.deleted);
    });
    worker.once('error', (err) =>
      reject(commitError({ name: err.name, message: err.message, stack: err.stack })),
    );
    // Changes nothing once the answer came: a promise settles once.
    worker.once('exit', (code) =>
      reject(new Error(`the commit worker exited (code ${code}) without an answer`)),
    );
    worker.postMessage({ type: 'delete', request: { ...request, ...what } });
  });
}

/** A commit worker, waiting for its request (commitWorker.mjs). */
function spawnCommitWorker(): Worker {
  return backgroundWorker(
    () =>
      new Worker(new URL('./commitWorker.mjs', import.meta.url), {
        workerData: { role: 'kbstudio-commit' },
        // Plain JavaScript: the parent's loaders (tsx) are not needed.
        execArgv: [],
      }),
  );
}

/**
 * A batch as the worker takes it: columns, the vectors back to back in one buffer handed over to the
 * worker (not copied). Metadata is serialized here, as the staging database stores it.
 */
function batchMessage(key: number, seq: number, batch: StagedChunk[], dimensions: number) {
  const vectors = new Float32Array(batch.length * dimensions);
  const reserved = new Uint8Array(batch.length);
  batch.forEach((c, i) => {
    if (c.vector.length !== dimensions) {
      throw new Error(`a vector of ${c.vector.length} dimensions for a ${dimensions}-dimension model`);
    }
    vectors.set(c.vector, i * dimensions);
    reserved[i] = reservedFlag(c.metadata);
  });
  const message = {
    type: 'add',
    key,
    seq,
    texts: batch.map((c) => c.text),
    tokenCounts: batch.map((c) => c.tokenCount),
    contentHashes: batch.map((c) => c.contentHash),
    metadata: batch.map((c) => JSON.stringify(c.metadata)),
    reserved,
    vectors,
  };
  return { message, transfer: [vectors.buffer] };
}

/** commitWorker.mjs's ModelConflict: the listing's model when the commit began, and the commit's. */
interface ModelConflict {
  listingId: string;
  held: string;
  model: string;
  chunks: number;
}

function commitError(error: ErrorReply): Error {
  if ('limit' in error) {
    const { limit, value, max } = error.limit;
    return limit === 'chunks' ? new ChunkLimitExceeded(max, value) : new KnowledgeBaseTooLarge(value, max);
  }
  if ('modelConflict' in error) {
    const { listingId, held, model, chunks } = error.modelConflict;
    return new Conflict(
      chunks > 0
        ? `embedding_model: listing '${listingId}' now holds chunks embedded with ${held}, stored while this ingestion embedded its documents with ${model}; nothing was stored. Ingest them again with ${held}, or into a new listing.`
        : `embedding_model: listing '${listingId}' was changed to ${held} while this ingestion embedded its documents with ${model}; nothing was stored. Ingest them again.`,
    );
  }
  // A SQLite error keeps its code (SQLITE_FULL is a full disk to storageFailure) and the worker's stack.
  return Object.assign(new Error(error.message), {
    name: error.name,
    ...(error.code ? { code: error.code } : {}),
    ...(error.stack ? { stack: error.stack } : {}),
  });
}
