/**
 * Blocks the calling thread until another thread has set `control[slot]` to `request` or past it, for
 * at most `deadlineMs`: the handshake of the helper threads that block in Atomics.wait between requests
 * (the scan helper, the lexical thread). Requests are counted in 32 bits and compared by their
 * difference, which survives the wrap. False when the deadline passed or `broken()` says the other
 * thread is gone (its 'exit' cannot be seen while this thread blocks, so it is asked between waits).
 */
export function waitForRequest(
  control: Int32Array,
  slot: number,
  request: number,
  deadlineMs: number,
  broken: () => boolean,
): boolean {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const done = Atomics.load(control, slot);
    if (((done - request) | 0) >= 0) return true;
    const left = until - Date.now();
    if (left <= 0 || broken()) return false;
    Atomics.wait(control, slot, done, left);
  }
}
