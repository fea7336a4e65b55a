import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../../src/core/embed/batching';
import { EventLoopTurns } from '../../../src/core/ingest/eventLoopTurns';

/** Holds this thread, as chunking and embedding do. */
function hold(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Counts the callbacks queued for the event loop's next check phase that have run. */
function queuedCallbacks(): { count: () => number; queue: () => void } {
  let ran = 0;
  return { count: () => ran, queue: () => setImmediate(() => ran++) };
}

describe('EventLoopTurns', () => {
  it('gives the event loop a turn only once the thread has been held for the interval', async () => {
    const turns = new EventLoopTurns(50);
    await turns.take();
    await yieldToEventLoop();
    const callbacks = queuedCallbacks();
    callbacks.queue();
    await turns.take();
    expect(callbacks.count()).toBe(0);

    hold(60);
    await turns.take();
    expect(callbacks.count()).toBe(1);

    // The interval counts again from that turn.
    callbacks.queue();
    await turns.take();
    expect(callbacks.count()).toBe(1);
    hold(60);
    await turns.take();
    expect(callbacks.count()).toBe(2);
  });

  it("counts the thread's hold, not the clock's: a clock started late still turns in time", async () => {
    const pipeline = new EventLoopTurns(50);
    await pipeline.take();
    await yieldToEventLoop();
    await pipeline.take();
    hold(30);

    // A parse starts its own clock 30 ms into the hold.
    const parse = new EventLoopTurns(50);
    const callbacks = queuedCallbacks();
    callbacks.queue();
    await parse.take();
    expect(callbacks.count()).toBe(0);
    hold(30);
    await parse.take();
    expect(callbacks.count()).toBe(1);
  });

  it('counts a turn the event loop took on its own (a timer, I/O) as a turn', async () => {
    const turns = new EventLoopTurns(50);
    await turns.take();
    hold(60);
    await new Promise((resolve) => setTimeout(resolve, 1));

    const callbacks = queuedCallbacks();
    callbacks.queue();
    await turns.take();
    expect(callbacks.count()).toBe(0);
  });
});
