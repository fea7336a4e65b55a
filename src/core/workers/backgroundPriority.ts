import { readdirSync, readFileSync, stat } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { cpuMsOfStat } from './threadCpu';

/**
 * How much nicer than the thread that starts them (the server's) are the threads that ingest in the
 * background: parsers, the commit, the offline model's embeddings, token counts of pre-built lines. On
 * two cores, three or four busy threads left the server's thread waiting for a core; with the others
 * giving way, its event loop turned half as often again during an ingestion, and its gaps of 30 ms or
 * more were about a third fewer (docs/performance.md, twenty-fourth pass). A thread of lower priority
 * still gets every cycle no other thread wants.
 */
export const BACKGROUND_NICE = 10;

const TASKS = '/proc/self/task';
let poolStarted = false;
/** The task id of each worker started here, for its CPU time. */
const taskIds = new WeakMap<Worker, number>();

/**
 * Starts a worker thread (`create`) at background priority, where the system allows one thread's
 * priority to differ from its process's (Linux: a thread is a task with an id of its own; elsewhere the
 * worker starts as it would have). Call it from the thread that would create the worker anyway.
 */
export function backgroundWorker(create: () => Worker): Worker {
  const before = threadIds();
  if (!before) return create();
  // libuv's thread pool (files, DNS, crypto) is started by the first thread that uses it, and its
  // threads would inherit that thread's priority: make sure it is this one, not a background worker.
  if (!poolStarted) {
    poolStarted = true;
    stat(TASKS, () => undefined);
  }
  const worker = create();
  // Node creates the worker's thread in the constructor. Only this thread creates threads meanwhile
  // (the pool is already there), so the new task id is the worker's; if there is not exactly one, leave
  // them all as they are.
  const created = threadIds()?.filter((id) => !before.includes(id)) ?? [];
  if (created.length === 1) {
    const id = Number(created[0]);
    taskIds.set(worker, id);
    try {
      // Relative, so a studio started with `nice` keeps its threads in the same order (19 is the lowest).
      setPriority(id, Math.min(19, getPriority(id) + BACKGROUND_NICE));
    } catch {
      // Not allowed here (a sandbox): the worker runs at the process's priority, as before.
    }
  }
  return worker;
}

/**
 * The CPU time (user and system, ms, at 10 ms resolution) the thread of a worker started by
 * `backgroundWorker` has used so far, or undefined where it cannot be read (not Linux, thread ended).
 * A time limit on a thread of lower priority can count this instead of the clock: while other
 * threads or programs keep every core busy, it may get a small share of one.
 */
export function workerCpuMs(worker: Worker): number | undefined {
  const id = taskIds.get(worker);
  if (id === undefined) return undefined;
  try {
    return cpuMsOfStat(readFileSync(`${TASKS}/${id}/stat`, 'utf8')) ?? undefined;
  } catch {
    return undefined;
  }
}

function threadIds(): string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readdirSync(TASKS);
  } catch {
    return undefined;
  }
}
