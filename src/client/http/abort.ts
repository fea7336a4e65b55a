import { MAX_TIMER_MS } from './settings';

/** Aborts `controller` when `signal` does; returns the unsubscribe. */
export function follow(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * A timer that can be re-armed (an upload re-arms it on progress) until it is cleared for good;
 * `expired` tells a timeout from other aborts. `Infinity` never expires; a time longer than a timer
 * can take is waited for in several timers.
 */
export class Deadline {
  expired = false;
  private cleared = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ms: number,
    private readonly onExpire: () => void,
  ) {}

  arm(): void {
    // A request body still being pulled after the request failed must not start a new timer: it would
    // keep the process alive for the whole timeout after the caller has its answer.
    if (this.cleared) return;
    clearTimeout(this.timer);
    if (this.ms !== Infinity) this.wait(this.ms);
  }

  clear(): void {
    this.cleared = true;
    clearTimeout(this.timer);
  }

  private wait(ms: number): void {
    const step = Math.min(ms, MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      if (ms > step) return this.wait(ms - step);
      this.expired = true;
      this.onExpire();
    }, step);
  }
}

/**
 * Settles as `promise` does, or rejects with the signal's reason as soon as it aborts: for work that
 * cannot be cancelled itself (a wallet's `sign`), so a call still ends when it is aborted or times out.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as unknown);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // Settling after an abort changes nothing, but a rejection is still handled here.
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
