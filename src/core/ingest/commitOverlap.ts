/**
 * When a commit begins before the last documents are read. The commit runs on one thread (SQLite writes
 * one transaction at a time), so while it ran alone at the end of an ingestion the second core had
 * nothing to do. Begun while the files still to be read should take about as long as writing what is
 * staged, both end at about the same time. The rates are this project's 2-core benchmark machine's,
 * mixed corpus (docs/performance.md, thirteenth pass): both scale alike with a faster or slower machine.
 */
const READ_NS_PER_BYTE = 300; // about 3.3 MB/s read, parsed, chunked, embedded and staged
const COMMIT_NS_PER_CHUNK = 58_000; // about 17,000 staged chunks/s copied into the knowledge base
/** Below this, the commit takes a few tenths of a second at most: nothing worth the lock held longer. */
const MIN_STAGED_CHUNKS = 2_000;

export class CommitStart {
  /** Bytes of files[i..] for each i. */
  private readonly remaining: number[];

  constructor(files: readonly { bytes: number }[]) {
    this.remaining = new Array<number>(files.length + 1).fill(0);
    for (let i = files.length - 1; i >= 0; i--) this.remaining[i] = this.remaining[i + 1]! + files[i]!.bytes;
  }

  /** Whether the commit should begin before files[index] is read, with `stagedChunks` staged so far. */
  before(index: number, stagedChunks: number): boolean {
    if (stagedChunks < MIN_STAGED_CHUNKS) return false;
    return this.remaining[index]! * READ_NS_PER_BYTE <= stagedChunks * COMMIT_NS_PER_CHUNK;
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
