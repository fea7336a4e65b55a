/**
 * The commit's pace, chunks taken (from the staging database or as they are embedded) while the reading
 * goes on beside it: about 29,000 chunks/s on this project's 2-core benchmark machine (mixed corpus). A
 * slower machine's commit begins later than it could, which holds the lock no longer.
 */
const COMMIT_NS_PER_CHUNK = 34_000;
/** Below this, the commit takes a few tenths of a second at most: nothing worth the lock held longer. */
const MIN_STAGED_CHUNKS = 2_000;

/**
 * When a commit begins before the last documents are read. The commit runs on one thread (SQLite writes
 * one transaction at a time) and holds the database's write lock from its start to its end. Begun once
 * the files still to be read should take about as long as committing what is staged, the two end at
 * about the same time: the lock is held about as long as that commit takes, and the chunks after it go
 * straight into the commit instead of into the staging database and then again out of it. Later, the
 * commit runs alone at the end with the second core idle; earlier, it waits for the reading with the lock
 * held. (The chunks still to come are not counted: the first files are no guide to how many the others
 * give, e.g. a folder's CSV files, read first, give twice as many per byte as its other formats.)
 *
 * The reading's pace is the one measured so far in this ingestion. A fixed pace (300 ns a byte, measured
 * in the thirteenth pass) had become three times too slow as the pipeline got faster: the commit began
 * with 89% of the mixed corpus's chunks staged instead of about two thirds, and held the lock just as long
 * (docs/performance.md, thirtieth pass).
 */
export class CommitStart {
  /** Bytes of files[i..] for each i. */
  private readonly remaining: number[];
  private readonly startedAt: number;

  /** `now` in ms (performance.now()'s clock; tests give their own). */
  constructor(
    files: readonly { bytes: number }[],
    private readonly now: () => number = () => performance.now(),
  ) {
    this.remaining = new Array<number>(files.length + 1).fill(0);
    for (let i = files.length - 1; i >= 0; i--) this.remaining[i] = this.remaining[i + 1]! + files[i]!.bytes;
    this.startedAt = now();
  }

  /**
   * Whether the commit should begin before files[index] is read, with `stagedChunks` staged from the files
   * before it (read since this was made).
   */
  before(index: number, stagedChunks: number): boolean {
    if (stagedChunks < MIN_STAGED_CHUNKS) return false;
    const read = this.remaining[0]! - this.remaining[index]!;
    if (read <= 0) return false;
    const leftNs = ((this.now() - this.startedAt) * 1e6 * this.remaining[index]!) / read;
    return leftNs <= stagedChunks * COMMIT_NS_PER_CHUNK;
  }
}

/**
 * Batches handed to a commit under way that it has not taken yet, within a byte budget: the reading goes
 * on while the commit's thread writes, and waits for the oldest batch only past the budget.
 */
export class WritesInFlight {
  private readonly queue: { taken: Promise<void>; bytes: number }[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Adds a batch's promise of being taken; waits while more than the budget is in flight. */
  async add(taken: Promise<void>, bytes: number): Promise<void> {
    // Awaited below or by drain(); a failure meanwhile must not count as unhandled.
    taken.catch(() => undefined);
    this.queue.push({ taken, bytes });
    this.bytes += bytes;
    while (this.bytes > this.maxBytes) await this.settleOldest();
  }

  /** Waits until every batch has been taken; rejects with the first failure. */
  async drain(): Promise<void> {
    while (this.queue.length > 0) await this.settleOldest();
  }

  private async settleOldest(): Promise<void> {
    const oldest = this.queue.shift()!;
    this.bytes -= oldest.bytes;
    await oldest.taken;
  }
}
