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

/** A timer that can be re-armed; `expired` tells a timeout from other aborts. */
export class Deadline {
  expired = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ms: number,
    private readonly onExpire: () => void,
  ) {}

  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.expired = true;
      this.onExpire();
    }, this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}
