import { Worker } from 'node:worker_threads';

/** What a parser worker script answers for one file (pdfWorker.mjs, docxWorker.mjs). */
export type ParserWorkerReply<T> = ({ ok: true } & T) | { ok: false; name: string; message: string };

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

export interface ParserWorkerPoolOptions {
  /** Heap limit of each worker, MB. */
  maxMemoryMb: number;
  /** Workers at most (files read at the same time). */
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
  timeoutMs: number;
  resolve(reply: unknown): void;
  reject(error: ParserWorkerFailure): void;
  timer?: NodeJS.Timeout;
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
    this.size = options.size ?? 2;
    this.maxFiles = options.maxFilesPerWorker ?? 100;
    this.retireAfterBytes = options.retireAfterBytes ?? 20 * 1024 * 1024;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** Reads one file; `data` is transferred to the worker (the caller keeps its own copy). */
  read<T>(
    data: Uint8Array<ArrayBuffer>,
    extra: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<ParserWorkerReply<T>> {
    return new Promise((resolve, reject) => {
      this.queue.push({
        id: this.nextId++,
        data,
        bytes: data.byteLength,
        extra,
        timeoutMs,
        resolve: resolve as (reply: unknown) => void,
        reject,
      });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === undefined);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      this.dispatch(slot, this.queue.shift()!);
    }
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
      job.timeoutMs,
    );
    slot.worker.postMessage({ ...job.extra, id: job.id, data: job.data }, [job.data.buffer]);
  }

  /** The slot's file is answered: keep the worker for the next one, or retire it. */
  private finish(slot: Slot, job: Job): void {
    clearTimeout(job.timer);
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
      clearTimeout(job.timer);
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
      clearTimeout(slot.job.timer);
      slot.job.reject(new ParserWorkerFailure('exit', 'the reader was stopped.'));
      slot.job = undefined;
    }
    await slot.worker.terminate();
  }
}
