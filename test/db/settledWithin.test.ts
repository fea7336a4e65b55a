import { afterEach, describe, expect, it, vi } from 'vitest';
import { settledWithin } from '../../src/db/settledWithin';

afterEach(() => {
  vi.useRealTimers();
});

/** Whether the promise has resolved after the microtasks queued so far. */
async function resolvedYet(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

describe('settledWithin', () => {
  it('resolves when the promise resolves or rejects, before the time is up', async () => {
    vi.useFakeTimers();
    let resolve!: () => void;
    const fulfilled = settledWithin(new Promise<void>((r) => (resolve = r)), 1_000);
    expect(await resolvedYet(fulfilled)).toBe(false);
    resolve();
    expect(await resolvedYet(fulfilled)).toBe(true);

    let reject!: (err: Error) => void;
    const rejected = settledWithin(new Promise<void>((_, r) => (reject = r)), 1_000);
    reject(new Error('read failed'));
    // Resolves, never rejects: the caller goes on either way.
    await expect(rejected).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves once the time is up when the promise is still pending', async () => {
    vi.useFakeTimers();
    const pending = settledWithin(new Promise<void>(() => {}), 1_000);
    vi.advanceTimersByTime(999);
    expect(await resolvedYet(pending)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await resolvedYet(pending)).toBe(true);
  });
});
