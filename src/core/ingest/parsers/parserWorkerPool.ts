import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InvalidDocument } from '../errors';
import type { ParsedDocument, ParseInput } from '../types';

/** What a parser worker script answers for one file (pdfWorker.mjs, docxWorker.mjs). */
export type ParserWorkerReply<T> = ({ ok: true } & T) | { ok: false; name: string; message: string };

/** A parser on a pool that can be stopped: an aborted parse leaves nothing queued or running. */
export type CancellableParser = (
  input: ParseInput,
  call?: { signal?: AbortSignal },
) => Promise<ParsedDocument>;

/** Why a file got no answer: its time ran out, the worker ran out of memory, or it stopped. */
export class ParserWorkerFailure extends Error {
  constructor(
    readonly reason: 'timeout' | 'memory' | 'exit' | 'error',
    message: string,
    readonly errorName = 'Error',
  ) {
    super(message);
  }
}

/**
 * The document error for a text parse (HTML, Markdown) that failed on its worker: over its time limit,
 * nested deeper than the parser's recursion allows, out of memory, or crashed. Any other error is
 * returned as it is.
 */
export function textParseFailure(
  error: unknown,
  source: string,
  kind: string,
  errors: { tooLong: () => Error; tooDeep: () => Error },
): unknown {
  if (!(error instanceof ParserWorkerFailure)) return error;
  if (error.reason === 'timeout') return errors.tooLong();
  if (error.errorName === 'RangeError') return errors.tooDeep();
  if (error.reason === 'memory') {
    return new InvalidDocument(source, `reading the ${kind} needed too much memory and was stopped.`);
  }
  return new InvalidDocument(source, `the ${kind} could not be read: ${error.message}`);
}

export interface ParserWorkerPoolOptions {
  /** Heap limit of each worker, MB. */
  maxMemoryMb: number;
  /**
   * Workers at most (files read at the same time). Default: one per core beside the main thread, which
   * chunks and embeds while the workers parse the files ahead (see pipeline.ts); more workers would only
   * take turns on the same cores.
   */
  size?: number;
  /** A worker is replaced after this many files, so what pdfjs keeps between files cannot pile up. */
  maxFilesPerWorker?: number;
  /** A file this large retires its worker afterwards (its heap stays grown). */
  retireAfterBytes?: number;
  /** An idle worker is stopped after this long, giving its memory back. */
  idleMs?: number;
}

interface Slot {
  worker: Worker;
  files: number;
  job?: Job;
  idleTimer?: NodeJS.Timeout;
}

interface Job {
  id: number;
  data: Uint8Array<ArrayBuffer>;
  /** The file's size (the data is detached once transferred). */
  bytes: number;
  /** Sent along with the file's bytes (parser settings). */
  extra: Record<string, unknown>;
  timeoutMs: number | (() => number);
  /** Queue order: lower first, then first come. */
  rank: number;
  signal?: AbortSignal;
  onAbort?: () => void;
  resolve(reply: unknown): void;
  reject(error: unknown): void;
  timer?: NodeJS.Timeout;
}

export interface ParserWorkerReadOptions {
  /**
   * Jobs of a lower rank are sent to a worker first (default: the job's own number, first come first
   * served). A document parsed in pieces passes one rank (newRank()) for all of its pieces, so a piece
   * of an earlier document never waits behind documents started after it.
   */
  rank?: number;
  /** Aborting drops a queued job and terminates the worker of a running one; the read rejects with the reason. */
  signal?: AbortSignal;
}

/**
 * Long-lived parser worker threads (pdfjs, mammoth) shared by every parse of their format: starting a
 * worker and loading pdfjs costs about 0.3 s, more than reading a typical PDF. They also let a file be
 * parsed on the second core while the main thread chunks and embeds the previous one. Each file still has its own time limit: a worker that
 * runs out of time (or memory) is terminated and replaced, so the next file starts clean. Idle workers
 * do not keep the process alive.
 */
export class ParserWorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private readonly size: number;
  private readonly maxFiles: number;
  private readonly retireAfterBytes: number;
  private readonly idleMs: number;

  constructor(
    private readonly script: URL,
    private readonly options: ParserWorkerPoolOptions,
  ) {
    this.size = options.size ?? Math.max(1, availableParallelism() - 1);
    this.maxFiles = options.maxFilesPerWorker ?? 100;
    this.retireAfterBytes = options.retireAfterBytes ?? 20 * 1024 * 1024;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /**
   * Reads one file; `data` is transferred to the worker (the caller keeps its own copy). The time limit
   * counts from when a worker takes the file, not while it waits in the queue; as a function, it is
   * asked then.
   */
  read<T>(
    data: Uint8Array<ArrayBuffer>,
    extra: Record<string, unknown>,
    timeoutMs: number | (() => number),
    options: ParserWorkerReadOptions = {},
  ): Promise<ParserWorkerReply<T>> {
    return new Promise((resolve, reject) => {
      const { signal } = options;
      if (signal?.aborted) return reject(signal.reason);
      const id = this.nextId++;
      const job: Job = {
        id,
        data,
        bytes: data.byteLength,
        extra,
        timeoutMs,
        rank: options.rank ?? id,
        resolve: resolve as (reply: unknown) => void,
        reject,
      };
      if (signal) {
        job.signal = signal;
        job.onAbort = () => this.abort(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      const at = this.queue.findIndex((queued) => queued.rank > job.rank);
      this.queue.splice(at === -1 ? this.queue.length : at, 0, job);
      this.pump();
    });
  }

  /** A rank for the jobs of one document: below every job asked for after it. */
  newRank(): number {
    return this.nextId++;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === undefined);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      this.dispatch(slot, this.queue.shift()!);
    }
  }

  private abort(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      job.reject(job.signal!.reason);
      return;
    }
    const slot = this.slots.find((s) => s.job === job);
    if (!slot) return;
    // The worker cannot be interrupted: it is replaced, and the next file starts on a fresh one.
    this.remove(slot);
    slot.job = undefined;
    this.settle(job);
    void this.retire(slot);
    job.reject(job.signal!.reason);
    this.pump();
  }

  /** The job gets no more timeouts or abort calls. */
  private settle(job: Job): void {
    clearTimeout(job.timer);
    if (job.onAbort) job.signal!.removeEventListener('abort', job.onAbort);
  }

  private spawn(): Slot {
    const worker = new Worker(this.script, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxMemoryMb },
      // Plain JavaScript: no need for the parent's loaders (tsx would transform pdfjs again, 2x slower).
      execArgv: [],
    });
    const slot: Slot = { worker, files: 0 };
    this.slots.push(slot);
    worker.on('message', (reply: { id: number }) => {
      const job = slot.job;
      if (!job || reply.id !== job.id) return;
      this.finish(slot, job);
      job.resolve(reply);
    });
    // A reply that cannot be deserialised here (a tree nested too deeply) would otherwise wait for the timeout.
    worker.on('messageerror', (error: Error) =>
      this.fail(slot, new ParserWorkerFailure('error', error.message, 'RangeError')),
    );
    worker.on('error', (error: Error & { code?: string }) => {
      const failure =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ParserWorkerFailure('memory', error.message)
          : new ParserWorkerFailure('error', error.message, error.name);
      this.fail(slot, failure);
    });
    worker.on('exit', (code) =>
      this.fail(
        slot,
        new ParserWorkerFailure('exit', `the reader stopped unexpectedly (exit code ${code}).`),
      ),
    );
    return slot;
  }

  private dispatch(slot: Slot, job: Job): void {
    clearTimeout(slot.idleTimer);
    slot.job = job;
    slot.worker.ref();
    job.timer = setTimeout(
      () => this.fail(slot, new ParserWorkerFailure('timeout', 'out of time')),
      typeof job.timeoutMs === 'function' ? job.timeoutMs() : job.timeoutMs,
    );
    slot.worker.postMessage({ ...job.extra, id: job.id, data: job.data }, [job.data.buffer]);
  }

  /** The slot's file is answered: keep the worker for the next one, or retire it. */
  private finish(slot: Slot, job: Job): void {
    this.settle(job);
    slot.job = undefined;
    slot.files++;
    if (slot.files >= this.maxFiles || job.bytes >= this.retireAfterBytes) {
      this.remove(slot);
      void this.retire(slot);
    } else {
      slot.worker.unref();
      slot.idleTimer = setTimeout(() => {
        this.remove(slot);
        void this.retire(slot);
      }, this.idleMs);
      slot.idleTimer.unref();
    }
    this.pump();
  }

  /** The worker failed or ran out of time: its file is refused and the worker replaced. */
  private fail(slot: Slot, failure: ParserWorkerFailure): void {
    if (!this.slots.includes(slot)) return;
    this.remove(slot);
    const job = slot.job;
    slot.job = undefined;
    void this.retire(slot);
    if (job) {
      this.settle(job);
      job.reject(failure);
    }
    this.pump();
  }

  private remove(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    const index = this.slots.indexOf(slot);
    if (index !== -1) this.slots.splice(index, 1);
  }

  private async retire(slot: Slot): Promise<void> {
    clearTimeout(slot.idleTimer);
    slot.worker.removeAllListeners('message');
    slot.worker.removeAllListeners('messageerror');
    slot.worker.removeAllListeners('exit');
    // An 'error' after this point must not crash the process.
    slot.worker.removeAllListeners('error');
    slot.worker.on('error', () => undefined);
    if (slot.job) {
      this.settle(slot.job);
      slot.job.reject(new ParserWorkerFailure('exit', 'the reader was stopped.'));
      slot.job = undefined;
    }
    await slot.worker.terminate();
  }
}
