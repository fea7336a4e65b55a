/** Consecutive slices of at most `size` items. */
export function* inBatches<T>(items: readonly T[], size: number): Generator<T[]> {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`Batch size must be a positive integer, got ${size}.`);
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** Lets pending I/O run between CPU-bound batches, so a long embedding job does not freeze the server. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
