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

// Intervals of 400 ms and holds of 240 or 480 ms: a "no turn yet" holds even if this process is kept
// off the cores for 160 ms (a busy machine), and a "turn" comes from the holds alone.
const INTERVAL = 400;

describe('EventLoopTurns', () => {
  it('gives the event loop a turn only once the thread has been held for the interval', async () => {
    const turns = new EventLoopTurns(INTERVAL);
    await turns.take();
    await yieldToEventLoop();
    const callbacks = queuedCallbacks();
    callbacks.queue();
    await turns.take();
    expect(callbacks.count()).toBe(0);

    hold(480);
    await turns.take();
    expect(callbacks.count()).toBe(1);

    // The interval counts again from that turn.
    callbacks.queue();
    await turns.take();
    expect(callbacks.count()).toBe(1);
    hold(480);
    await turns.take();
    expect(callbacks.count()).toBe(2);
  });

  it("counts the thread's hold, not the clock's: a clock started late still turns in time", async () => {
    const pipeline = new EventLoopTurns(INTERVAL);
    await pipeline.take();
    await yieldToEventLoop();
    await pipeline.take();
    hold(240);

    // A parse starts its own clock 240 ms into the hold.
    const parse = new EventLoopTurns(INTERVAL);
    const callbacks = queuedCallbacks();
    callbacks.queue();
    await parse.take();
    expect(callbacks.count()).toBe(0);
    hold(240);
    await parse.take();
    expect(callbacks.count()).toBe(1);
  });

  it("counts a turn of the event loop that this clock did not take (another's, or the loop's own) as a turn", async () => {
    const turns = new EventLoopTurns(INTERVAL);
    await turns.take();
    hold(480);
    // A turn through the loop's check phase, not taken by `take`.
    await new Promise((resolve) => setImmediate(resolve));

    const callbacks = queuedCallbacks();
    callbacks.queue();
    await turns.take();
    expect(callbacks.count()).toBe(0);
  });
});
