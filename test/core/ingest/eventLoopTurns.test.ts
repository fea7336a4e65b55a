import { describe, expect, it } from 'vitest';
import { EventLoopTurns } from '../../../src/core/ingest/eventLoopTurns';

/** Holds this thread, as chunking and embedding do. */
function hold(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('EventLoopTurns', () => {
  it('gives the event loop a turn only once the thread has been held for the interval', async () => {
    const turns = new EventLoopTurns(50);
    let callbacks = 0;
    setImmediate(() => callbacks++);
    await turns.take();
    expect(callbacks).toBe(0);

    hold(60);
    await turns.take();
    expect(callbacks).toBe(1);

    // The interval counts again from that turn.
    setImmediate(() => callbacks++);
    await turns.take();
    expect(callbacks).toBe(1);
    hold(60);
    await turns.take();
    expect(callbacks).toBe(2);
  });
});
