import { yieldToEventLoop } from '../embed/batching';

/**
 * The longest an ingestion works between two turns of the event loop. At 20 ms the 100 MB mixed corpus
 * takes as long as without the turns (four runs each); at 5 ms, 0.5 s longer.
 */
export const TURN_EVERY_MS = 20;

/**
 * When this thread's event loop last reached its check phase, as far as a `take` can tell. Shared by
 * every clock of the thread (each worker has its own copy of this module): a parse that starts its
 * own clock after the pipeline has held the thread for 15 ms would otherwise hold it 20 ms more
 * before its first turn (docs/performance.md, twenty-fourth pass).
 */
let lastTurn = performance.now();
let markerPending = false;

function markTurn(): void {
  lastTurn = performance.now();
  markerPending = false;
}

/**
 * Queues a marker for the event loop's next check phase: when it has run, the loop has turned. One at
 * a time, and only from `take`, so an idle thread stays idle.
 */
function queueMarker(): void {
  if (markerPending) return;
  markerPending = true;
  setImmediate(markTurn);
}

/**
 * Gives the event loop a turn once this thread has held it for a while. The ingestion runs on the
 * server's thread, and its awaits of work already done (a parse finished ahead, an embedding) never
 * leave the microtask queue: a folder of files parsed here (JSON) or parsed ahead held the thread for
 * 2.2–2.5 s at a time, with no request answered, no worker's answer handled and no file sent to a parser
 * worker meanwhile (docs/performance.md, nineteenth pass).
 *
 * The clock is the thread's, not the instance's: a turn taken by any clock, or any other turn of the
 * event loop, restarts every clock's interval once the loop has reached its check phase (where
 * setImmediate callbacks run). A turn seen only by a timer or I/O callback before that phase is not
 * counted: the next `take` may then give a turn sooner than needed, never later.
 */
export class EventLoopTurns {
  constructor(private readonly everyMs = TURN_EVERY_MS) {}

  /** Resolves at once, or after a turn of the event loop when the thread has been held `everyMs`. */
  async take(): Promise<void> {
    queueMarker();
    if (performance.now() - lastTurn < this.everyMs) return;
    await yieldToEventLoop();
    // The marker ran in that turn: queue the next one, so that a turn the loop takes before the next
    // `take` (an await of I/O) is seen too.
    queueMarker();
  }
}
