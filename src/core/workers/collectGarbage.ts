import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/**
 * A full garbage collection of the calling thread's heap, now.
 *
 * For memory that only a collection of this very thread gives back: a SharedArrayBuffer's memory is freed
 * once every thread that held it has collected its last reference, and a thread that seldom allocates
 * may not collect for hours. The full-text postings of a large knowledge base (163 MB at 500,000
 * chunks) stayed in memory after a change replaced them, held as garbage by the lexical thread (which
 * waits in Atomics.wait and allocates next to nothing) and by the server's thread (docs/performance.md,
 * "Memory after a large deletion").
 *
 * Node offers `gc()` only under `--expose-gc`, which neither Electron's main process nor a worker's
 * `execArgv` takes. The flag is set just long enough for a new context to receive the function, then
 * cleared, as Jest's leak detector does; the function collects the whole heap of the thread that calls
 * it, whatever context it came from.
 */
export function collectGarbage(): void {
  collect ??= exposedGc();
  collect();
}

function exposedGc(): () => void {
  // Started with --expose-gc (a test runner, a profiling session): use it, and leave the flag as it is.
  const given = (globalThis as { gc?: unknown }).gc;
  if (typeof given === 'function') return given as () => void;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
