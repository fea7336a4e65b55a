import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database, { type Statement } from 'better-sqlite3';
import {
  LexicalPostings,
  type LexicalPostingsData,
  type PostingsHit,
} from '../core/retrieve/lexicalPostings';
import { lexicalThread, type PostingsQuery } from '../core/retrieve/lexicalThread';
import { backgroundWorker } from '../core/workers/backgroundPriority';
import { collectGarbage } from '../core/workers/collectGarbage';
import type { Db } from './open';
import { partialFile } from './partialFiles';
import { settledWithin } from './settledWithin';
import { SPARE_BYTES } from './vectorFileCache';

/** Where the postings are worth holding, and how much of them (docs/performance.md, "Full-text search at scale"). */
export interface LexicalIndexTuning {
  /** Below this many chunks FTS5 answers within a few milliseconds: no postings are read. */
  minRows: number;
  /** Token instances (6–8 bytes each in memory) past which the postings are not read. */
  maxInstances: number;
}

export const DEFAULT_LEXICAL_TUNING: LexicalIndexTuning = {
  minRows: 20_000,
  // At most about 500 MB of postings (6 bytes a term-row pair, fewer pairs than instances); the
  // benchmark's 500,000 chunks of dbpedia sentences have 33 million instances, held in 162 MB.
  maxInstances: 80_000_000,
};

export interface LexicalIndexOptions extends Partial<LexicalIndexTuning> {
  /** better-sqlite3's native module for this runtime (Electron's), as openDatabase takes it. */
  nativeBinding?: string;
  /**
   * Whether searches may run on the process's lexical thread beside the dense search (LexicalThread;
   * default true). False: always on the calling thread (benchmarks compare the two).
   */
  thread?: boolean;
  /**
   * Where the postings are saved for the next process (lexicalPostingsFile.mjs): read at its first build,
   * as they are when nothing changed since, else followed from. Undefined: nothing is saved.
   */
  savedFile?: string;
  /** Free space a saved file must leave on its disk (default: SPARE_BYTES). */
  spareBytes?: number;
  /** How long after it starts a read from the saved file queries wait for it (default SAVED_LOAD_WAIT_MS). */
  savedLoadWaitMs?: number;
  /**
   * Postings of at least this many bytes, once let go of, are collected at once (default
   * COLLECT_AFTER_BYTES; see letGo).
   */
  collectAfterBytes?: number;
}

/**
 * Let go of postings this large, the server's thread collects its garbage at once. A full collection
 * holds that thread for as long as it takes to mark what is live (18-23 ms with a 33 MB heap, measured
 * after a 450,000-chunk deletion): worth it for 32 MB of postings (about 100,000 chunks), which a change
 * lets go of at most once per read of the postings, not for every small change.
 */
export const COLLECT_AFTER_BYTES = 32 * 1024 * 1024;

/**
 * The state of every knowledge base: triggers bump a listing's generation whenever a document is written
 * or deleted (chunks change with their documents only), and rows are never deleted, so the sum grows
 * with every change. One row per listing: cheap on every query, however many listings there are.
 */
const GENERATION_KEY_SQL = `SELECT count(*) || ':' || total(generation) FROM knowledge_base_generations`;

/**
 * A change of up to this share of the chunks is followed from the earlier postings (the deleted
 * documents' rows dropped, the new ones tokenized and merged in); a larger one reads everything again.
 */
const MAX_CHANGED_SHARE = 0.25;

/**
 * Postings followed from a change are saved again at most this often (a read of the whole index always
 * is): while an ingestion runs beside searches they are followed every second or so, and each save
 * writes them whole (160 MB at 500,000 chunks). An older file is followed from at the next start.
 */
const SAVE_FOLLOWED_EVERY_MS = 5 * 60_000;

/**
 * Queries wait for a read from the saved file for at most this long after it started (savedLoad): at
 * 500,000 chunks it takes about 0.5 s, 2.3 s when it follows a change, while FTS5 answers a query in
 * 0.2–0.6 s (up to 1.8 s). A read that takes longer leaves the later queries to FTS5, as before.
 */
const SAVED_LOAD_WAIT_MS = 2_000;

/** Each document's chunks: least and greatest id, and how many (lexicalIndexWorker.mjs's documentRanges). */
interface DocumentRanges {
  ids: string[];
  first: Float64Array;
  last: Float64Array;
  counts: Float64Array;
}

interface Snapshot {
  key: string;
  postings: LexicalPostings;
  documents: DocumentRanges;
  /** The postings' id on the lexical thread, when shared with it. */
  threadId?: number;
}

/** A quoted phrase without quotes inside: the form lexicalPhrases gives each query word. */
const SINGLE_PHRASE = /^"[^"]*"$/;

/** Query words remembered with their terms, at most. */
const TERM_CACHE_SIZE = 50_000;

interface BuildReply {
  key?: string;
  data?: LexicalPostingsData;
  documents?: DocumentRanges;
  /** Whole from FTS5's index, followed from earlier postings, or the saved ones as they were. */
  read?: 'whole' | 'followed' | 'file';
  /** The earlier postings followed from were the saved ones. */
  followedFromFile?: boolean;
  /** Why the saved postings were not used, when there was a file. */
  fileNotUsed?: string;
  /** Whether the postings were saved; why not, when they could not be. */
  saved?: boolean;
  /** How long saving took (part of the read's time). */
  saveMs?: number;
  notSaved?: string;
  /** Why earlier postings were not followed (read whole instead). */
  notFollowed?: string;
  skipped?: string;
  error?: { message: string };
}

/**
 * The full-text index's postings in memory (LexicalPostings), read on a worker thread and used only while
 * they hold the database's current state: the generations they were read at are compared with the
 * database's on every query, so a document written or deleted by any connection sets them aside until
 * they are read again. Meanwhile, and for knowledge bases too small to need them, FTS5 answers.
 */
export class LexicalIndexCache {
  private current: Snapshot | undefined;
  /** The postings of an earlier state, kept (unused) for the next read to follow the change from. */
  private stale: Snapshot | undefined;
  private building: Promise<boolean> | undefined;
  /** The state the last build was started at: one that failed or was skipped (too large) is not retried. */
  private attemptedKey: string | undefined;
  /** When the last build started and how long it took: builds are at least that far apart. */
  private lastStart = -Infinity;
  private lastMs = 0;
  private readonly keyQuery: Statement;
  private tokenizer: QueryTokenizer | null | undefined;
  private readonly tuning: LexicalIndexTuning;
  private readonly nativeBinding: string | undefined;
  /**
   * Whether searches run on the lexical thread when they can (the `thread` option); benchmarks turn it
   * off for a while to compare. The postings are shared with the thread whenever the option was on.
   */
  threaded: boolean;
  private readonly shareWithThread: boolean;
  private closed = false;
  /** The worker reading the postings now, stopped by close(). */
  private worker: Worker | undefined;
  /** Why the last read of the postings failed, if it did (benchmarks and tests). */
  lastError: string | undefined;
  /**
   * How the postings held were read: whole, followed from the earlier ones, or the saved ones as they were
   * (benchmarks and tests).
   */
  lastRead: 'whole' | 'followed' | 'file' | undefined;
  /** Whether the earlier postings the last read followed were the saved ones. */
  followedFromFile = false;
  /** Why the postings were last not saved (diagnostics, tests). */
  notSaved: string | undefined;
  /** How long the last save took, on the worker before it answered (benchmarks). */
  lastSaveMs: number | undefined;
  /** Why the saved postings were not used at this cache's first read, if there was a file (diagnostics, tests). */
  fileNotUsed: string | undefined;
  private lastSavedAt = -Infinity;
  private readonly savedFile: string | undefined;
  private readonly spareBytes: number;
  private readonly savedLoadWaitMs: number;
  private readonly collectAfterBytes: number;
  /** A collection is scheduled (letGo). */
  private collecting = false;
  /** A read from the saved file under way, and when queries stop waiting for it. */
  private savedLoading: { done: Promise<unknown>; until: number } | undefined;
  /** Why the last read did not follow the earlier postings, when there were some. */
  notFollowed: string | undefined;

  constructor(
    private readonly db: Db,
    {
      nativeBinding,
      thread = true,
      savedFile,
      spareBytes = SPARE_BYTES,
      savedLoadWaitMs = SAVED_LOAD_WAIT_MS,
      collectAfterBytes = COLLECT_AFTER_BYTES,
      ...tuning
    }: LexicalIndexOptions = {},
  ) {
    this.collectAfterBytes = collectAfterBytes;
    this.tuning = { ...DEFAULT_LEXICAL_TUNING, ...tuning };
    this.savedFile = db.memory ? undefined : savedFile;
    this.spareBytes = spareBytes;
    this.savedLoadWaitMs = savedLoadWaitMs;
    if (this.savedFile) removeStoppedWriters(this.savedFile);
    this.nativeBinding = nativeBinding;
    this.threaded = thread;
    this.shareWithThread = thread;
    this.keyQuery = db.prepare(GENERATION_KEY_SQL).pluck();
  }

  /** Chunks from which the postings are read. */
  get minRows(): number {
    return this.tuning.minRows;
  }

  /**
   * The postings, when they hold the current state of the database; otherwise undefined, and a build
   * is started in the background when the index has `rows` chunks or more (`rows()` is asked only then).
   */
  postings(rows: () => number): LexicalPostings | undefined {
    if (!this.usable()) return undefined;
    const key = this.keyQuery.get() as string;
    if (this.current?.key === key) return this.current.postings;
    // Stale: never used again, only followed from by the next read.
    this.setAside();
    // While documents keep changing (an ingestion), builds are at least one build's time apart.
    const rested = performance.now() - this.lastStart >= this.lastMs;
    if (this.building || key === this.attemptedKey || !rested) return undefined;
    if (rows() >= this.tuning.minRows) void this.build();
    // Too small now (a large listing deleted): the earlier postings are not followed from, so they go.
    else {
      const bytes = snapshotBytes(this.stale);
      this.stale = undefined;
      this.letGo(bytes);
    }
    return undefined;
  }

  /**
   * FTS5's terms of single-word phrases (`"word"`, as lexicalPhrases writes them), in order; undefined
   * when any is not one token, or not such a phrase (left to FTS5's own query syntax).
   */
  terms(phrases: string[]): string[] | undefined {
    const tokenizer = this.queryTokenizer();
    if (!tokenizer || !phrases.every((p) => SINGLE_PHRASE.test(p))) return undefined;
    return tokenizer.terms(phrases.map((p) => p.slice(1, -1)));
  }

  /**
   * Reads the postings now (on the worker thread) unless current ones are held; resolves with whether
   * current postings are held afterwards. A server's warm-up and the benchmarks wait on it.
   */
  build(): Promise<boolean> {
    if (!this.usable()) return Promise.resolve(false);
    if (this.building) return this.building;
    const key = this.keyQuery.get() as string;
    if (this.current?.key === key) return Promise.resolve(true);
    this.setAside();
    this.attemptedKey = key;
    this.lastStart = performance.now();
    const earlier = this.stale;
    this.stale = undefined;
    // Only the size: the closures below must not keep the earlier postings alive.
    const earlierBytes = snapshotBytes(earlier);
    // Started now, the thread is ready by the time the postings are read (it loads in well under a second).
    if (this.shareWithThread) lexicalThread();
    const building = this.runWorker(earlier)
      .then((reply) => {
        if (reply.data && reply.documents && reply.key !== undefined && !this.closed) {
          const tokenizer = this.queryTokenizer()!;
          const postings = new LexicalPostings(reply.data, (x) => tokenizer.log(x));
          const threadId = this.shareWithThread ? lexicalThread()?.install(reply.data) : undefined;
          this.current = { key: reply.key, postings, documents: reply.documents, threadId };
          this.lastRead = reply.read;
          this.followedFromFile = reply.followedFromFile === true;
          if (reply.fileNotUsed !== undefined) this.fileNotUsed = reply.fileNotUsed;
          this.notFollowed = reply.notFollowed;
          this.lastError = undefined;
        }
        // Postings taken from the file as they are were saved just as well.
        if (reply.saved || reply.read === 'file') this.lastSavedAt = performance.now();
        if (reply.saved) this.lastSaveMs = reply.saveMs;
        if (reply.saved || reply.notSaved !== undefined) this.notSaved = reply.notSaved;
        return this.current !== undefined && this.current.key === this.keyQuery.get();
      })
      .catch((err: unknown) => {
        // FTS5 keeps answering (the same results, slower); the reason is kept for diagnostics.
        this.lastError = err instanceof Error ? err.message : String(err);
        return false;
      })
      .finally(() => {
        this.lastMs = performance.now() - this.lastStart;
        this.building = undefined;
        // The read followed the change from them, or read everything again: they are let go of.
        this.letGo(earlierBytes);
      });
    this.building = building;
    // The first read of this process, with a saved file to take: the first queries wait for it.
    if (!earlier && this.savedFile && existsSync(this.savedFile)) {
      const loading = { done: building, until: this.lastStart + this.savedLoadWaitMs };
      this.savedLoading = loading;
      void building.finally(() => {
        if (this.savedLoading === loading) this.savedLoading = undefined;
      });
    }
    return building;
  }

  /**
   * While the postings are being taken from the saved file: a promise that settles once they are held, or
   * once the wait allowed for it (savedLoadWaitMs after the read started) is over. Otherwise undefined.
   */
  savedLoad(): Promise<void> | undefined {
    const loading = this.savedLoading;
    const left = loading ? loading.until - performance.now() : 0;
    return loading && left > 0 ? settledWithin(loading.done, left) : undefined;
  }

  /**
   * `postings.search` of the query for the postings held now, started on the lexical thread when they are
   * shared with it (it then runs beside whatever this thread does next), else run at the join; the join
   * returns its hits.
   */
  startSearch(postings: LexicalPostings, query: PostingsQuery): () => PostingsHit[] {
    const threadId = this.threaded && this.current?.postings === postings ? this.current.threadId : undefined;
    // A thread id means the thread took these postings: it exists.
    if (threadId !== undefined) return lexicalThread()!.start(threadId, postings, query);
    return () => postings.search(query.terms, query.listingId, query.limit, query.allowed);
  }

  /** Lets go of the postings and the tokenizer's database, and stops a read under way. */
  close(): void {
    this.setAside();
    this.stale = undefined;
    this.closed = true;
    // A read under way holds a read transaction on the database file: it is stopped, not awaited.
    void this.worker?.terminate();
    this.worker = undefined;
    if (this.tokenizer) this.tokenizer.close();
    this.tokenizer = null;
  }

  /**
   * Postings no longer referenced here (the read that followed from them is over, or they were dropped).
   * Their arrays are in shared memory, which is freed only once every thread has collected its last
   * reference: the lexical thread collects when it drops them (lexicalThreadWorker.ts), the worker that
   * read the next postings exits, and this thread would otherwise keep them until its next full
   * collection, which an idle server may not run for hours. At 500,000 chunks that was 147 MB more
   * resident memory after a large deletion, until then (docs/performance.md, "Memory after a large
   * deletion"). A turn later, so the caller's own references are gone too.
   */
  private letGo(bytes: number): void {
    if (bytes < this.collectAfterBytes || this.collecting || this.closed) return;
    this.collecting = true;
    setTimeout(() => {
      this.collecting = false;
      if (!this.closed) collectGarbage();
    }, 0).unref();
  }

  /** The current postings become the stale ones (followed from by the next read, never searched). */
  private setAside(): void {
    if (!this.current) return;
    if (this.current.threadId !== undefined) lexicalThread()?.drop(this.current.threadId);
    this.stale = this.current;
    this.current = undefined;
  }

  private usable(): boolean {
    return !this.closed && !this.db.memory && this.queryTokenizer() !== null;
  }

  private queryTokenizer(): QueryTokenizer | null {
    if (this.tokenizer === undefined) {
      const sql = this.db
        .prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunks_fts'`)
        .pluck()
        .get() as string | undefined;
      const tokenize = sql ? /tokenize\s*=\s*'([^']*)'/i.exec(sql)?.[1] : undefined;
      try {
        this.tokenizer = tokenize === undefined ? null : new QueryTokenizer(tokenize, this.nativeBinding);
      } catch (err) {
        // No second connection here (a native module that does not load): FTS5 answers every query.
        this.lastError = `the query tokenizer could not start: ${(err as Error).message}`;
        this.tokenizer = null;
      }
    }
    return this.tokenizer;
  }

  /** Reads the postings on a worker thread, following the change from `earlier` when given. */
  private runWorker(earlier: Snapshot | undefined): Promise<BuildReply> {
    const tokenize = this.queryTokenizer()!.tokenizer;
    // The earlier arrays the worker follows the change from are shared or handed over, never copied (they
    // are never searched here again).
    const d = earlier?.postings.data;
    const old = d && {
      data: {
        ids: d.ids,
        lengths: d.lengths,
        termBytes: d.termBytes,
        termOffsets: d.termOffsets,
        starts: d.starts,
        positions: d.positions,
        counts: d.counts,
      },
      documents: earlier.documents,
    };
    // Arrays in shared memory (shared with the lexical thread) are shared, not handed over.
    const transferList = old
      ? Object.values(old.data).flatMap((array) =>
          array.buffer instanceof ArrayBuffer ? [array.buffer] : [],
        )
      : [];
    let worker: Worker;
    try {
      worker = startIndexWorker(
        {
          role: 'kbstudio-lexical-index',
          file: this.db.name,
          keySql: GENERATION_KEY_SQL,
          maxInstances: this.tuning.maxInstances,
          old,
          tokenize,
          maxChangedShare: MAX_CHANGED_SHARE,
          nativeBinding: this.nativeBinding,
          savedFile: this.savedFile,
          saveFollowed: performance.now() - this.lastSavedAt >= SAVE_FOLLOWED_EVERY_MS,
          spareBytes: this.spareBytes,
        },
        transferList,
      );
    } catch (err) {
      // As a worker that failed: FTS5 keeps answering, the reason kept (build).
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    this.worker = worker;
    return this.replyOf(worker);
  }

  /**
   * The worker's reply. Apart from runWorker on purpose: listeners made there would hold its scope, and
   * with it the earlier postings, for as long as the worker lives, and after its exit until this
   * thread's next full collection (see letGo).
   */
  private replyOf(worker: Worker): Promise<BuildReply> {
    return new Promise((resolve, reject) => {
      let settled = false;
      worker.once('message', (reply: BuildReply) => {
        settled = true;
        if (reply.error) reject(new Error(reply.error.message));
        else resolve(reply);
      });
      worker.once('error', (err) => {
        settled = true;
        reject(err);
      });
      worker.once('exit', (code) => {
        if (this.worker === worker) this.worker = undefined;
        if (!settled) reject(new Error(`the full-text postings worker exited with code ${code}`));
      });
    });
  }
}

/** Starts lexicalIndexWorker.mjs at background priority; it does not keep the process alive. */
function startIndexWorker(workerData: Record<string, unknown>, transferList: ArrayBuffer[]): Worker {
  const worker = backgroundWorker(
    () =>
      new Worker(new URL('./lexicalIndexWorker.mjs', import.meta.url), {
        workerData,
        transferList,
        execArgv: [],
      }),
  );
  worker.unref();
  return worker;
}

/** Bytes of a snapshot's postings arrays (0 for none). */
function snapshotBytes(snapshot: Snapshot | undefined): number {
  if (!snapshot) return 0;
  const d = snapshot.postings.data;
  return [d.ids, d.lengths, d.listingOf, d.termBytes, d.termOffsets, d.starts, d.positions, d.counts].reduce(
    (sum, array) => sum + array.byteLength,
    0,
  );
}

/**
 * Deletes the partial files of saved postings whose writer's process has stopped (a write is cut short
 * when its process exits first); a running process's are left to it.
 */
function removeStoppedWriters(savedFile: string): void {
  let names: string[];
  try {
    names = readdirSync(dirname(savedFile));
  } catch {
    return; // No folder yet.
  }
  for (const name of names) {
    const partial = partialFile(name);
    if (partial?.stopped && partial.target === basename(savedFile))
      rmSync(join(dirname(savedFile), name), { force: true });
  }
}

/**
 * FTS5's own tokenizer, in a private in-memory database, for the words of queries: each word's term is
 * what FTS5 stored for it (case folded, diacritics removed, stemmed), so the postings are looked up by
 * exactly the term MATCH would look for.
 */
class QueryTokenizer {
  private readonly db: Database.Database;
  private readonly cache = new Map<string, string | null>();
  private readonly ln: Statement;

  /** `tokenizer`: the full-text table's `tokenize` option, e.g. 'porter unicode61'. */
  constructor(
    readonly tokenizer: string,
    nativeBinding: string | undefined,
  ) {
    this.db = new Database(':memory:', nativeBinding ? { nativeBinding } : {});
    this.db.exec(`CREATE VIRTUAL TABLE words USING fts5 (text, tokenize = '${tokenizer.replace(/'/g, "''")}');
      CREATE VIRTUAL TABLE word_tokens USING fts5vocab(words, 'instance')`);
    this.ln = this.db.prepare(`SELECT ln(?)`).pluck();
  }

  close(): void {
    this.db.close();
  }

  /** C's log(), which FTS5's bm25() calls for its idf (see LexicalPostings). */
  log(x: number): number {
    return this.ln.get(x) as number;
  }

  terms(words: string[]): string[] | undefined {
    // Room for every word of this query first: clearing later would drop some of its words again.
    if (this.cache.size + words.length > TERM_CACHE_SIZE) this.cache.clear();
    const missing = [...new Set(words.filter((w) => !this.cache.has(w)))];
    if (missing.length > 0) this.tokenize(missing);
    const terms: string[] = [];
    for (const word of words) {
      const term = this.cache.get(word);
      if (term === null || term === undefined) return undefined;
      terms.push(term);
    }
    return terms;
  }

  private tokenize(words: string[]): void {
    const found = new Map<number, string[]>();
    this.db.transaction(() => {
      this.db.exec(`DELETE FROM words`);
      const insert = this.db.prepare(`INSERT INTO words (rowid, text) VALUES (?, ?)`);
      words.forEach((word, i) => insert.run(i + 1, word));
      for (const [doc, term] of this.db
        .prepare(`SELECT doc, term FROM word_tokens`)
        .raw()
        .iterate() as Iterable<[number, string]>) {
        const list = found.get(doc) ?? [];
        list.push(term);
        found.set(doc, list);
      }
    })();
    // A word FTS5 splits into several tokens (or none) is a phrase query: left to FTS5.
    words.forEach((word, i) => {
      const terms = found.get(i + 1);
      this.cache.set(word, terms?.length === 1 ? terms[0]! : null);
    });
  }
}
