import { Worker } from 'node:worker_threads';
import { countTokens } from './tokenCount.mjs';

interface Pending {
  texts: string[];
  resolve(counts: number[]): void;
}

let worker: Worker | undefined;
let broken = false;
let nextId = 1;
const pending = new Map<number, Pending>();

/**
 * cl100k token counts of many texts, counted on a worker thread so the caller's thread keeps parsing
 * and staging meanwhile (pre-built embedding lines: counting is most of the work on one core). The
 * counts are those of countTokens; if the worker cannot run, the texts are counted here instead.
 * The idle worker does not keep the process alive.
 */
export function countTokensOffThread(texts: string[]): Promise<number[]> {
  const counter = broken ? undefined : (worker ?? start());
  if (!counter) return Promise.resolve(texts.map(countTokens));
  return new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, { texts, resolve });
    counter.ref();
    counter.postMessage({ id, texts });
  });
}

function start(): Worker | undefined {
  try {
    worker = new Worker(new URL('./tokenCount.mjs', import.meta.url), {
      workerData: { role: 'kbstudio-token-counter' },
      // Plain JavaScript: the parent's loaders (tsx) are not needed.
      execArgv: [],
    });
  } catch {
    broken = true;
    return undefined;
  }
  const current = worker;
  current.unref();
  current.on('message', ({ id, counts }: { id: number; counts: number[] }) => {
    const job = pending.get(id);
    if (!job) return;
    pending.delete(id);
    if (pending.size === 0) current.unref();
    job.resolve(counts);
  });
  const fail = () => {
    if (worker !== current) return;
    worker = undefined;
    broken = true;
    // Whatever was sent is counted here, so no caller waits forever.
    for (const [id, job] of pending) {
      pending.delete(id);
      job.resolve(job.texts.map(countTokens));
    }
  };
  current.on('error', fail);
  current.on('exit', fail);
  return current;
}
