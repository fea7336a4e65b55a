import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../src/core/workers/collectGarbage';

/** An object only a WeakRef reaches, made in a function of its own so no local keeps it. */
function unreachable(): WeakRef<object> {
  return new WeakRef({ payload: new Array(1_000).fill('x') });
}

describe('collectGarbage', () => {
  it('collects an object nothing references any more, now', async () => {
    const ref = unreachable();
    // A WeakRef's target stays alive until the end of the job that made or read it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(ref.deref()).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });

  it('leaves no gc() behind in contexts made afterwards, unless the process was started with one', () => {
    collectGarbage();
    const startedWithGc = typeof (globalThis as { gc?: unknown }).gc === 'function';
    expect(runInNewContext('typeof gc')).toBe(startedWithGc ? 'function' : 'undefined');
  });
});
