import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { waitForRequest } from '../../../src/core/workers/waitForRequest';

const control = (done: number) => new Int32Array(new SharedArrayBuffer(8)).fill(done);

describe('waitForRequest', () => {
  it('returns at once for a request handled already, across the 32-bit wrap', () => {
    expect(waitForRequest(control(5), 1, 5, 1_000, () => false)).toBe(true);
    expect(waitForRequest(control(6), 1, 5, 1_000, () => false)).toBe(true);
    // Request 2^31 - 1 wrapped to -2^31: a later request, handled.
    expect(waitForRequest(control(-(2 ** 31)), 1, 2 ** 31 - 1, 1_000, () => false)).toBe(true);
  });

  it('gives up past its deadline, or when the other thread is gone', () => {
    expect(waitForRequest(control(4), 1, 5, 20, () => false)).toBe(false);
    expect(waitForRequest(control(4), 1, 5, 60_000, () => true)).toBe(false);
  });

  it('wakes when another thread stores the request and notifies', async () => {
    const shared = control(0);
    const worker = new Worker(
      `const { workerData } = require('node:worker_threads');
       const c = new Int32Array(workerData);
       setTimeout(() => { Atomics.store(c, 1, 7); Atomics.notify(c, 1); }, 50);`,
      { eval: true, workerData: shared.buffer },
    );
    try {
      await new Promise((resolve) => worker.once('online', resolve));
      expect(waitForRequest(shared, 1, 7, 30_000, () => false)).toBe(true);
      expect(shared[1]).toBe(7);
    } finally {
      await worker.terminate();
    }
  });
});
