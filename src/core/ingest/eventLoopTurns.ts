import { yieldToEventLoop } from '../embed/batching';

/**
 * The longest an ingestion works between two turns of the event loop. At 20 ms the 100 MB mixed corpus
 * takes as long as without the turns (four runs each); at 5 ms, 0.5 s longer.
 */
export const TURN_EVERY_MS = 20;

/**
 * Gives the event loop a turn once this thread has held it for a while. The ingestion runs on the
 * server's thread, and its awaits of work already done (a parse finished ahead, an embedding) never
 * leave the microtask queue: a folder of files parsed here (JSON) or parsed ahead held the thread for
 * 2.2–2.5 s at a time, with no request answered, no worker's answer handled and no file sent to a parser
 * worker meanwhile (docs/performance.md, nineteenth pass).
 */
export class EventLoopTurns {
  private last = performance.now();

  constructor(private readonly everyMs = TURN_EVERY_MS) {}

  /** Resolves at once, or after a turn of the event loop when the thread has been held `everyMs`. */
  async take(): Promise<void> {
    if (performance.now() - this.last < this.everyMs) return;
    await yieldToEventLoop();
    this.last = performance.now();
  }
}
