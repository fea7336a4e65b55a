import { Worker } from 'node:worker_threads';
import { backgroundWorker } from '../workers/backgroundPriority';
import { workerStart } from '../workers/workerScript';
import type { EmbeddingWorkerReply, EmbeddingWorkerRequest } from './embeddingWorker';
import type { SharedGloveModel } from './offlineGlove';

/** The embedding worker's scratch area in the shared table (area 0 is the thread that loaded the model). */
const WORKER_AREA = 1;

/**
 * A second thread that embeds with the offline model (docs/performance.md, twenty-first pass): the
 * ingesting thread hands it a file's chunks and goes on with the next file's chunking and staging. It
 * sums over the loading thread's table in shared memory, so it costs its vocabulary's tables (12 MB) and
 * a thread, not a second 140 MB table.
 *
 * `embed` answers undefined until the thread is ready (starting it from the sources loads tsx first,
 * 0.3-0.5 s) and after it failed: the caller then embeds on its own thread, with the same result. The
 * thread is unref'd while it has nothing to do, so it never keeps a process alive.
 */
export class EmbeddingThread {
  private readonly worker: Worker;
  private ready = false;
  private failed = false;
  private closed = false;
  private exitCode: number | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (v: Float32Array) => void; reject: (e: Error) => void }
  >();

  constructor(
    model: SharedGloveModel,
    private readonly dimensions: number,
  ) {
    const start = workerStart(new URL('./embeddingWorker.ts', import.meta.url));
    this.worker = backgroundWorker(
      () => new Worker(start.file, { execArgv: [], workerData: start.workerData }),
    );
    this.post({ model, area: WORKER_AREA });
    this.worker.on('message', (reply: EmbeddingWorkerReply) => this.answer(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      this.exitCode = code;
      this.fail(new Error(`the embedding thread stopped (exit code ${code}).`));
    });
    // After the listeners: attaching a 'message' listener refs the worker again.
    this.worker.unref();
  }

  /** Whether it takes texts now: started, and not failed. */
  get usable(): boolean {
    return this.ready && !this.failed;
  }

  /**
   * The texts' vectors, in order, or undefined when the thread cannot take them now (starting, failed).
   * The promise rejects when the thread fails before it answers.
   */
  embed(texts: string[]): Promise<Float32Array[]> | undefined {
    if (!this.usable) return undefined;
    const id = this.nextId++;
    const answered = new Promise<Float32Array>((resolve, reject) =>
      this.pending.set(id, { resolve, reject }),
    );
    this.worker.ref();
    this.post({ id, text: texts.join(''), lengths: Int32Array.from(texts, (t) => t.length) });
    const d = this.dimensions;
    // One array per vector, as the model gives them: a view into one batch's buffer would carry the whole
    // buffer wherever it is copied to (the commit's worker).
    return answered.then((all) => texts.map((_, i) => all.slice(i * d, (i + 1) * d)));
  }

  /**
   * Why the thread stopped on its own, once it has (a crash, running out of memory); undefined while it
   * runs and after `close()`. A new thread can then take its scratch area.
   */
  get stoppedOnItsOwn(): string | undefined {
    if (this.closed || this.exitCode === undefined) return undefined;
    return `exit code ${this.exitCode}`;
  }

  /** Stops the thread (tests; a process's thread otherwise lives as long as it does). */
  async close(): Promise<void> {
    this.closed = true;
    this.failed = true;
    await this.worker.terminate();
  }

  private post(request: EmbeddingWorkerRequest): void {
    this.worker.postMessage(request);
  }

  private answer(reply: EmbeddingWorkerReply): void {
    if ('ready' in reply) {
      this.ready = true;
      return;
    }
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if ('error' in reply) waiting.reject(new Error(reply.error));
    else waiting.resolve(reply.vectors);
  }

  private fail(error: Error): void {
    this.failed = true;
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    this.worker.unref();
  }
}
