import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { backgroundWorker } from '../../workers/backgroundPriority';
import { countTokens } from './tokenCount.mjs';

interface Pending {
  texts: string[];
  resolve(counts: number[]): void;
}

/**
 * One counter per core, up to two: a pre-built embedding import is bound by counting (gpt-tokenizer
 * counts 10-15 MB/s on one core) while the calling thread only parses and stages lines, so the OS
 * shares both cores between the counters and the caller. More counters than cores would only take turns.
 */
const COUNTERS = Math.max(1, Math.min(2, availableParallelism()));
/** Below this many texts a call is not split: a message round trip costs more than the counting. */
const MIN_SLICE = 64;

const workers: Worker[] = [];
let started = false;
let nextId = 1;
const pending = new Map<number, Pending & { worker: Worker }>();

/**
 * cl100k token counts of many texts, counted on worker threads so the caller's thread keeps parsing
 * and staging meanwhile (pre-built embedding lines: counting is most of the work). A call is split
 * across the counters; the counts are those of countTokens, in order. If a worker cannot run, the
 * texts are counted here instead. Idle workers do not keep the process alive.
 */
export async function countTokensOffThread(texts: string[]): Promise<number[]> {
  const counters = startAll();
  if (counters.length === 0) return texts.map(countTokens);
  const slices = Math.max(1, Math.min(counters.length, Math.floor(texts.length / MIN_SLICE)));
  const size = Math.ceil(texts.length / slices);
  const parts = await Promise.all(
    Array.from({ length: slices }, (_, i) => send(counters[i]!, texts.slice(i * size, (i + 1) * size))),
  );
  return parts.flat();
}

function send(worker: Worker, texts: string[]): Promise<number[]> {
  return new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, { texts, resolve, worker });
    worker.ref();
    worker.postMessage({ id, texts });
  });
}

/** The counters, started on first use; none when worker threads cannot start (counted here then). */
function startAll(): Worker[] {
  if (started) return workers;
  started = true;
  for (let i = 0; i < COUNTERS; i++) {
    try {
      workers.push(start());
    } catch {
      break;
    }
  }
  return workers;
}

function start(): Worker {
  const worker = backgroundWorker(
    () =>
      new Worker(new URL('./tokenCount.mjs', import.meta.url), {
        workerData: { role: 'kbstudio-token-counter' },
        // Plain JavaScript: the parent's loaders (tsx) are not needed.
        execArgv: [],
      }),
  );
  worker.on('message', ({ id, counts }: { id: number; counts: number[] }) => {
    const job = pending.get(id);
    if (!job) return;
    pending.delete(id);
    if (![...pending.values()].some((p) => p.worker === worker)) worker.unref();
    job.resolve(counts);
  });
  const fail = () => {
    const at = workers.indexOf(worker);
    if (at < 0) return;
    workers.splice(at, 1);
    // A counter that died is not restarted; with none left, counting happens on the caller's thread.
    // Whatever it was sent is counted here, so no caller waits forever.
    for (const [id, job] of pending) {
      if (job.worker !== worker) continue;
      pending.delete(id);
      job.resolve(job.texts.map(countTokens));
    }
  };
  worker.on('error', fail);
  worker.on('exit', fail);
  // After the listeners: adding a 'message' listener refs the worker's port again.
  worker.unref();
  return worker;
}
