import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { waitForRequest } from '../workers/waitForRequest';
import { workerStart } from '../workers/workerScript';
import type { LexicalPostings, LexicalPostingsData, PostingsHit } from './lexicalPostings';
import { CONTROL, type LexicalThreadMessage } from './lexicalThreadProtocol';

/** Hits a search on the thread returns at most (larger limits search here). */
const MAX_HITS = 1024;

/** The longest a caller waits for the thread's answer before giving the thread up (it is then stuck). */
const DEADLINE_MS = 5_000;

/** What `LexicalPostings.search` is asked: the best `limit` rows of a listing holding any term. */
export interface PostingsQuery {
  terms: string[];
  listingId: string;
  limit: number;
  /** The rows a filter allows (LexicalPostings.mask), when the search is filtered. */
  allowed?: Uint8Array;
}

/** Whether every array of the postings lives in shared memory, so the thread can read it too. */
function isShared(data: LexicalPostingsData): boolean {
  const { ids, lengths, listingOf, termBytes, termOffsets, starts, positions, counts } = data;
  return [ids, lengths, listingOf, termBytes, termOffsets, starts, positions, counts].every(
    (array) => array.buffer instanceof SharedArrayBuffer,
  );
}

/**
 * A second thread for the full-text half of a hybrid query (docs/performance.md, "Hybrid on two
 * cores"): the postings live in shared memory (lexicalIndexWorker.mjs reads them into it), so the thread
 * searches them while the calling thread runs the dense search, and hybrid costs the longer of the two
 * rather than their sum. The answer is the same hits the same search on the calling thread gives (the
 * same code over the same arrays, with the idf computed by the caller).
 *
 * The thread blocks in Atomics.wait between requests and is unref'd, so it never keeps a process alive.
 * Until it is ready, when it fails or misses a deadline, searches run on the calling thread.
 */
export class LexicalThread {
  private readonly control = new Int32Array(new SharedArrayBuffer(CONTROL.SLOTS * 4));
  private readonly results = new Float64Array(new SharedArrayBuffer(MAX_HITS * 2 * 8));
  /** The rows a filtered search allows, copied where the thread reads them. */
  private mask = new Uint8Array(new SharedArrayBuffer(0));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private request = 0;
  private nextId = 1;
  private broken = false;
  /** The join of a search started and not joined yet (its caller threw first). */
  private unjoined: (() => unknown) | undefined;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const start = workerStart(new URL('./lexicalThreadWorker.ts', import.meta.url));
    this.worker = new Worker(start.file, {
      // Not the parent's loaders: a TypeScript worker gets tsx for its own modules only (workerStart).
      execArgv: [],
      workerData: {
        ...start.workerData,
        control: this.control.buffer,
        results: this.results.buffer,
        port: port2,
      },
      transferList: [port2],
    });
    this.worker.unref();
    this.port.unref();
    this.worker.on('error', () => (this.broken = true));
    this.worker.on('exit', () => (this.broken = true));
  }

  /** Whether searches run on the thread now (false until it has started, and once it failed). */
  get ready(): boolean {
    return !this.broken && Atomics.load(this.control, CONTROL.READY) === 1;
  }

  /**
   * Shares postings with the thread and returns the id to search them by; undefined when they cannot
   * be shared (an array not in shared memory) or the thread failed. `drop` lets them go there.
   */
  install(data: LexicalPostingsData): number | undefined {
    if (this.broken || !isShared(data)) return undefined;
    const id = this.nextId++;
    this.post({ kind: 'install', id, data });
    return id;
  }

  drop(id: number): void {
    if (!this.broken) this.post({ kind: 'drop', id });
  }

  /**
   * Starts `postings.search` of the query on the thread, the postings installed as
   * `id`, and returns its join: the hits, waited for. Searches here instead (at the join) while the
   * thread is not ready or fails. One search at a time: a search started before the last was joined
   * waits that one out first.
   */
  start(id: number, postings: LexicalPostings, query: PostingsQuery): () => PostingsHit[] {
    const { terms, listingId, limit, allowed } = query;
    const listing = postings.listingNumber(listingId);
    if (!this.ready || listing === undefined || limit > MAX_HITS)
      return () => postings.search(terms, listingId, limit, allowed);
    this.unjoined?.();
    const weights = postings.weights(terms);
    let mask: Uint8Array | undefined;
    if (allowed) {
      if (this.mask.length < allowed.length)
        this.mask = new Uint8Array(new SharedArrayBuffer(allowed.length));
      mask = this.mask.subarray(0, allowed.length);
      mask.set(allowed);
    }
    const request = this.post({ kind: 'search', id, weights, listing, limit, mask });
    let hits: PostingsHit[] | undefined;
    const join = (): PostingsHit[] => {
      if (hits) return hits;
      if (this.unjoined === join) this.unjoined = undefined;
      hits =
        (this.answered(request) ? this.read() : undefined) ??
        postings.searchWeighted(weights, listing, limit, allowed);
      return hits;
    };
    this.unjoined = join;
    return join;
  }

  /** Stops the thread; searches run on the calling thread from then on. */
  async close(): Promise<void> {
    this.broken = true;
    await this.worker.terminate();
  }

  private post(message: LexicalThreadMessage): number {
    this.port.postMessage(message);
    this.request = (this.request + 1) | 0;
    Atomics.store(this.control, CONTROL.REQUEST, this.request);
    Atomics.notify(this.control, CONTROL.REQUEST);
    return this.request;
  }

  /** Waits until the thread handled `request`; false (and the thread given up) past the deadline. */
  private answered(request: number): boolean {
    if (waitForRequest(this.control, CONTROL.DONE, request, DEADLINE_MS, () => this.broken)) return true;
    this.broken = true;
    void this.worker.terminate();
    return false;
  }

  /** The last search's hits, or undefined when it failed there. */
  private read(): PostingsHit[] | undefined {
    const count = this.control[CONTROL.COUNT]!;
    if (count < 0) return undefined;
    const hits: PostingsHit[] = [];
    for (let i = 0; i < count; i++) hits.push({ id: this.results[2 * i]!, bm25: this.results[2 * i + 1]! });
    return hits;
  }
}

let shared: LexicalThread | null | undefined;

/** The process's lexical thread, started on first use; null where worker threads are unavailable. */
export function lexicalThread(): LexicalThread | null {
  if (shared === undefined) {
    try {
      shared = new LexicalThread();
    } catch {
      shared = null;
    }
  }
  return shared;
}
