import type { WithResponse } from './response';

/**
 * The promise every call returns: awaiting it gives the parsed result; `withResponse()` gives the
 * result together with the raw `Response`, its request id and rate-limit headers. The request starts
 * at once, whether or not anyone awaits it.
 */
export class ApiPromise<T> extends Promise<T> {
  private parsed: Promise<T> | undefined;

  constructor(private readonly responsePromise: Promise<WithResponse<T>>) {
    // The base promise is never used: then/catch/finally below delegate to `responsePromise`.
    super((resolve) => resolve(null as T));
  }

  withResponse(): Promise<WithResponse<T>> {
    return this.responsePromise;
  }

  private result(): Promise<T> {
    return (this.parsed ??= this.responsePromise.then((r) => r.data));
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.result().then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.result().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.result().finally(onfinally);
  }
}
