import type { Embedder } from '../embed/embedder';

/**
 * How many batches of chunks, of all the files of an ingestion, may be handed to the embedder before the
 * ingesting thread takes their vectors (see EmbeddingsAhead). Room that frees up goes to the files in the
 * order they were chunked, as that is the order they are taken in.
 */
export class EmbeddingBudget {
  /** Batches started and not taken yet. */
  private inFlight = 0;
  /** Files with batches not started yet, in order. */
  private readonly waiting: EmbeddingsAhead[] = [];

  constructor(readonly maxBatches: number) {}

  /** Batches started and not taken yet. */
  get batchesInFlight(): number {
    return this.inFlight;
  }

  /** A file's batches wait their turn for room. */
  join(file: EmbeddingsAhead): void {
    this.waiting.push(file);
    this.startWithinRoom();
  }

  /** `count` batches were taken, or given up: their room goes to the files waiting. */
  release(count: number): void {
    this.inFlight -= count;
    this.startWithinRoom();
  }

  /** The file gets no more room (it stopped, or every batch of it has started). */
  leave(file: EmbeddingsAhead): void {
    const at = this.waiting.indexOf(file);
    if (at !== -1) this.waiting.splice(at, 1);
  }

  private startWithinRoom(): void {
    while (this.inFlight < this.maxBatches && this.waiting.length > 0) {
      const file = this.waiting[0]!;
      if (file.startNext()) this.inFlight++;
      else this.waiting.shift();
    }
  }
}

/**
 * A file's chunk embeddings, a batch at a time, started before they are needed. The ingesting thread
 * chunks a file and starts its embeddings, then stages the files before it while they are computed: on
 * the offline model's embedding thread, or by a hosted model's API, whose round trips then overlap. The
 * budget, shared by the ingestion's files, bounds what is in flight: a 50 MB file's chunks are not all
 * handed over at once, nor a hosted API sent dozens of requests at a time. A batch not started by the
 * time it is taken starts then.
 */
export class EmbeddingsAhead {
  private readonly batches: (Promise<Float32Array[]> | undefined)[] = [];
  private started = 0;
  private taken = 0;

  constructor(
    private readonly embedder: Embedder,
    private readonly texts: readonly string[],
    private readonly batchSize: number,
    private readonly budget: EmbeddingBudget,
  ) {
    budget.join(this);
  }

  /** How many batches the texts make. */
  get batchCount(): number {
    return Math.ceil(this.texts.length / this.batchSize);
  }

  /** The next batch's vectors (the texts from the batch's index × batchSize), in batch order. */
  next(): Promise<Float32Array[]> {
    if (this.taken >= this.batchCount) throw new RangeError('Every batch was taken already.');
    // A batch started out of turn (no room was left for it ahead) took no room, so gives none back.
    const outOfTurn = this.started === this.taken;
    if (outOfTurn) this.startNext();
    const index = this.taken++;
    const batch = this.batches[index]!;
    // Let go of it: a large file's vectors are not all held until its end.
    this.batches[index] = undefined;
    if (!outOfTurn) this.budget.release(1);
    return batch;
  }

  /** Gives the budget back for the batches started and not taken (the file failed or was cancelled). */
  close(): void {
    this.budget.leave(this);
    const untaken = this.started - this.taken;
    this.batches.length = 0;
    this.taken = this.started = this.batchCount;
    this.budget.release(untaken);
  }

  /** Starts the next batch not started yet; false when there is none (for the budget). */
  startNext(): boolean {
    if (this.started >= this.batchCount) return false;
    const from = this.started * this.batchSize;
    const batch = this.embedder.embed(this.texts.slice(from, from + this.batchSize), 'document');
    // Awaited when taken; a batch never taken (the ingestion stopped first) must not count as unhandled.
    batch.catch(() => undefined);
    this.batches[this.started++] = batch;
    return true;
  }
}
