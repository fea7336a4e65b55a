import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { backgroundWorker, workerCpuMs } from '../../workers/backgroundPriority';
import { workerStart } from '../../workers/workerScript';
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

/**
 * The depth of the pools of text formats (CSV, HTML, Markdown), whose files are small and many: a worker's
 * next files wait in its inbox while the ingesting thread chunks and embeds (docs/performance.md,
 * nineteenth pass).
 */
export const PARSE_AHEAD_DEPTH = 8;

/**
 * Only files up to this size are sent behind another: those are copied (see dispatch), and a larger one
 * takes long enough to parse that waiting for an idle worker costs it little.
 */
const BEHIND_MAX_BYTES = 1024 * 1024;
/** How long a worker starved of CPU time may take over a file's time limit, at most (startClock). */
const STARVED_LIMIT_FACTOR = 4;
/**
 * When a file's worker has its CPU time first read, at the latest (startClock). Most files are read
 * sooner, and their clock reads nothing: a read costs the server's thread 13–48 µs, the more the busier
 * the cores.
 */
const CPU_PROBE_MS = 1000;

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
  /**
   * Files sent to a worker before it has answered the first of them (default 1). With more, a worker's
   * next file is already in its inbox when it finishes one, instead of waiting until the thread that
   * sends files has handled the answer, which it does only between its own chunking and embedding. Only
   * for scripts that read one message at a time (a synchronous handler). A job behind another cannot
   * be passed by a job of lower rank asked for later.
   */
  depth?: number;
}

interface Slot {
  worker: Worker;
  files: number;
  /** The files sent to the worker and not answered yet, in the order sent: the first is being read. */
  jobs: Job[];
  /** Takes no more files; stopped once it has answered those it has. */
  retiring?: boolean;
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
  /** Aborted after it was sent to a worker behind another file: its answer is dropped. */
  cancelled?: boolean;
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
  private readonly depth: number;

  constructor(
    private readonly script: URL,
    private readonly options: ParserWorkerPoolOptions,
  ) {
    this.size = options.size ?? Math.max(1, availableParallelism() - 1);
    this.maxFiles = options.maxFilesPerWorker ?? 100;
    this.retireAfterBytes = options.retireAfterBytes ?? 20 * 1024 * 1024;
    this.idleMs = options.idleMs ?? 30_000;
    this.depth = Math.max(1, options.depth ?? 1);
  }

  /**
   * Reads one file; `data` is transferred to the worker (copied when sent behind another file; the
   * caller keeps its own copy). The time limit counts from when a worker takes the file (startClock), not
   * while it waits; as a function, it is asked then.
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
      this.enqueue(job);
      this.pump();
    });
  }

  /** A rank for the jobs of one document: below every job asked for after it. */
  newRank(): number {
    return this.nextId++;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const slot = this.slotForNext(this.queue[0]!);
      if (!slot) return;
      this.dispatch(slot, this.queue.shift()!);
    }
  }

  /**
   * An idle worker, else a new one, else the least busy one with room in its inbox. A worker is sent no
   * more files than it may read before it is replaced.
   */
  private slotForNext(job: Job): Slot | undefined {
    const open = this.slots.filter((s) => !s.retiring && s.files + s.jobs.length < this.maxFiles);
    const idle = open.find((s) => s.jobs.length === 0);
    if (idle) return idle;
    if (this.slots.length < this.size) return this.spawn();
    if (job.bytes > BEHIND_MAX_BYTES) return undefined;
    let best: Slot | undefined;
    for (const slot of open) {
      if (slot.jobs.length < this.depth && (!best || slot.jobs.length < best.jobs.length)) best = slot;
    }
    return best;
  }

  private abort(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      job.reject(job.signal!.reason);
      return;
    }
    const slot = this.slots.find((s) => s.jobs.includes(job));
    if (!slot) return;
    if (slot.jobs[0] !== job) {
      // Not begun: the worker still reads it when it gets there (it cannot be taken back from the
      // worker's inbox), and its answer is dropped.
      job.cancelled = true;
      this.settle(job);
      job.reject(job.signal!.reason);
      return;
    }
    // The worker cannot be interrupted: it is replaced, and the next file starts on a fresh one.
    this.remove(slot);
    this.requeue(slot.jobs.splice(0).slice(1));
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

  /** Files sent to a worker that stopped before it began them go back to the queue, in rank order. */
  private requeue(jobs: Job[]): void {
    for (const job of jobs) if (!job.cancelled) this.enqueue(job);
  }

  /** Into the queue in rank order, after the jobs of the same rank. */
  private enqueue(job: Job): void {
    const at = this.queue.findIndex((queued) => queued.rank > job.rank);
    this.queue.splice(at === -1 ? this.queue.length : at, 0, job);
  }

  private spawn(): Slot {
    const start = workerStart(this.script);
    const worker = backgroundWorker(
      () =>
        new Worker(start.file, {
          resourceLimits: { maxOldGenerationSizeMb: this.options.maxMemoryMb },
          // Not the parent's loaders (tsx would transform pdfjs again, 2x slower): a script in TypeScript
          // gets tsx for its own modules only (workerStart).
          execArgv: [],
          workerData: start.workerData,
        }),
    );
    const slot: Slot = { worker, files: 0, jobs: [] };
    this.slots.push(slot);
    worker.on('message', (reply: { id: number }) => {
      const at = slot.jobs.findIndex((job) => job.id === reply.id);
      if (at === -1) return;
      // A worker reads its files in order: one that answers a later file has dropped those before it.
      for (let k = 0; k <= at; k++) {
        const job = slot.jobs[0]!;
        this.finish(slot, job);
        if (job.cancelled) continue;
        if (k === at) job.resolve(reply);
        else job.reject(new ParserWorkerFailure('error', 'the reader gave no answer.'));
      }
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
    slot.jobs.push(job);
    slot.worker.ref();
    const message = { ...job.extra, id: job.id, data: job.data };
    if (slot.jobs.length === 1) {
      this.startClock(slot, job);
      slot.worker.postMessage(message, [job.data.buffer]);
    } else {
      // Copied, not moved: should the worker stop before it begins this file, the file is sent again.
      slot.worker.postMessage(message);
    }
  }

  /**
   * The file's time limit starts when the worker takes it: when it is sent to an idle worker, or when the
   * worker's answer to the file before is handled here. A worker is stopped once the limit has passed
   * and it has had at least half of it in CPU time, where that can be read (workerCpuMs), or else once
   * STARVED_LIMIT_FACTOR times the limit has passed. The workers run below the server's thread
   * (backgroundPriority.ts): while other threads or programs keep the cores busy, one may get a small
   * share of a core, and a large file would run out of the clock's time without being any harder to read.
   * One that waits without working is still stopped.
   *
   * The CPU time is first read a little into the file (CPU_PROBE_MS, or a quarter of the limit), and the
   * worker counts as having run all the time until then: the few files that take that long pay for the
   * reads, and the limit errs early by at most that much.
   */
  private startClock(slot: Slot, job: Job): void {
    const limitMs = typeof job.timeoutMs === 'function' ? job.timeoutMs() : job.timeoutMs;
    const startedAt = performance.now();
    let probedMs = 0;
    let cpuAtProbe: number | undefined;
    const check = () => {
      const elapsed = performance.now() - startedAt;
      const cpuNow = cpuAtProbe === undefined ? undefined : workerCpuMs(slot.worker);
      const used =
        cpuNow === undefined || cpuAtProbe === undefined ? limitMs : probedMs + cpuNow - cpuAtProbe;
      // At full speed it would have had half the limit by then.
      const wait = Math.min(limitMs / 2 - used, STARVED_LIMIT_FACTOR * limitMs - elapsed);
      if (wait > 0) job.timer = setTimeout(check, wait);
      else this.fail(slot, new ParserWorkerFailure('timeout', 'out of time'));
    };
    const probe = () => {
      cpuAtProbe = workerCpuMs(slot.worker);
      probedMs = performance.now() - startedAt;
      job.timer = setTimeout(check, Math.max(0, limitMs - probedMs));
    };
    job.timer = setTimeout(probe, Math.min(CPU_PROBE_MS, limitMs / 4));
  }

  /** The slot's first file is answered: go on with its next, keep the worker for later, or retire it. */
  private finish(slot: Slot, job: Job): void {
    this.settle(job);
    slot.jobs.shift();
    slot.files++;
    if (slot.files >= this.maxFiles || job.bytes >= this.retireAfterBytes) slot.retiring = true;
    const next = slot.jobs[0];
    if (next) {
      this.startClock(slot, next);
    } else if (slot.retiring) {
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

  /** The worker failed or ran out of time: its current file is refused, the worker replaced, its next files sent again. */
  private fail(slot: Slot, failure: ParserWorkerFailure): void {
    if (!this.slots.includes(slot)) return;
    this.remove(slot);
    const [job, ...behind] = slot.jobs.splice(0);
    this.requeue(behind);
    void this.retire(slot);
    if (job) {
      this.settle(job);
      if (!job.cancelled) job.reject(failure);
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
    for (const job of slot.jobs.splice(0)) {
      this.settle(job);
      if (!job.cancelled) job.reject(new ParserWorkerFailure('exit', 'the reader was stopped.'));
    }
    await slot.worker.terminate();
  }
}
