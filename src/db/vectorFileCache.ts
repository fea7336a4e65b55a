import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { codeBytes } from '../core/retrieve/signCodes';
import { backgroundWorker } from '../core/workers/backgroundPriority';
import type { Db } from './open';
import { partialFile } from './partialFiles';
import { VectorFile, vectorFileBytes } from './vectorFile';

export interface VectorFileOptions {
  /** Where the files are kept (a server's: the data directory's `vectors`). */
  directory: string;
  /** better-sqlite3's native module for this runtime (Electron's), as openDatabase takes it. */
  nativeBinding?: string;
  /**
   * How long a listing's knowledge base must have stayed unchanged before a query starts writing its file
   * (ms): during an ingestion every commit changes it, and each file written would be stale at once.
   */
  restMs?: number;
  /** Free space a file must leave on its disk (default: SPARE_BYTES). */
  spareBytes?: number;
}

const DEFAULT_REST_MS = 10_000;
/**
 * Free space a file must leave on its disk: the file is a convenience, the database's own writes (commits,
 * the WAL, a checkpoint) come first.
 */
export const SPARE_BYTES = 1024 ** 3;
/** Listing ids as the studio makes them; anything else gets no file (its id goes into a file name). */
const LISTING_ID = /^[A-Za-z0-9_-]+$/;
const SUFFIX = '.vectors';

interface Listing {
  listingId: string;
  model: string;
  dimensions: number;
}

/**
 * The vectors files (VectorFile) of the listings searched through their codes: opened from the directory
 * when they hold the listing's current generation, otherwise written again on a worker thread
 * (vectorFileWorker.mjs) once the knowledge base has rested. Meanwhile, and wherever a file cannot be had,
 * rescoring reads SQLite: the same distances, slower.
 */
export class VectorFileCache {
  private readonly files = new Map<string, VectorFile>();
  /** The generation each listing's file was last looked for on disk at, and since when it is current. */
  private readonly seen = new Map<string, { generation: number; since: number }>();
  private readonly builds = new Map<string, Promise<boolean>>();
  /** The generation a build failed at: not tried again until the knowledge base changes. */
  private readonly failed = new Map<string, number>();
  /** The writes under way: each worker and the partial file it writes. */
  private readonly workers = new Map<Worker, string>();
  private readonly restMs: number;
  private closed = false;
  /** Why the last build failed, if it did (benchmarks and tests). */
  lastError: string | undefined;

  constructor(
    private readonly db: Db,
    private readonly generation: (listingId: string) => number,
    private readonly options: VectorFileOptions,
  ) {
    this.restMs = options.restMs ?? DEFAULT_REST_MS;
  }

  /**
   * The listing's file when it holds `generation` (the current one); otherwise undefined, after looking
   * on disk once per generation, and starting a build once the generation has held for `restMs`.
   */
  current(listing: Listing, generation: number): VectorFile | undefined {
    if (!this.usable(listing)) return undefined;
    const key = keyOf(listing);
    const held = this.files.get(key);
    if (held?.generation === generation && !held.closed) return held;
    if (held?.closed) {
      // Cut short under a search: written again now, without waiting for the knowledge base to rest.
      this.files.delete(key);
      this.seen.set(key, { generation, since: -Infinity });
    }
    const seen = this.seen.get(key);
    if (seen?.generation !== generation) {
      this.seen.set(key, { generation, since: performance.now() });
      return this.opened(listing, generation);
    }
    const rested = performance.now() - seen.since >= this.restMs;
    if (rested && !this.builds.has(key) && this.failed.get(key) !== generation) void this.build(listing);
    return undefined;
  }

  /** The listing's file held now when it holds `generation`: nothing read, nothing started. */
  held(listing: Listing, generation: number): VectorFile | undefined {
    const file = this.files.get(keyOf(listing));
    return file?.generation === generation && !file.closed ? file : undefined;
  }

  /**
   * The listing's file when it holds `generation`: the one held, else the one on disk (opened and held from
   * now on); nothing is written (a server's warm-up reads the search codes from it).
   */
  find(listing: Listing, generation: number): VectorFile | undefined {
    if (!this.usable(listing)) return undefined;
    return this.held(listing, generation) ?? this.opened(listing, generation);
  }

  /**
   * Resolves once the listing's file holds its current generation (true), opened from disk or written
   * now; false when it cannot (no directory, a failed write, or the knowledge base changed meanwhile).
   * A server's warm-up waits on it.
   */
  ensure(listing: Listing): Promise<boolean> {
    if (!this.usable(listing)) return Promise.resolve(false);
    const generation = this.generation(listing.listingId);
    if (this.held(listing, generation)) return Promise.resolve(true);
    this.seen.set(keyOf(listing), { generation, since: performance.now() });
    return this.opened(listing, generation) ? Promise.resolve(true) : this.build(listing);
  }

  /**
   * Deletes the files of listings that are gone, and partial files whose writer is no longer running (a
   * process stopped mid-write). Returns how many it deleted.
   */
  prune(live: ReadonlySet<string>): number {
    let names: string[];
    try {
      names = readdirSync(this.options.directory);
    } catch {
      return 0;
    }
    let deleted = 0;
    for (const name of names) {
      const partial = partialFile(name);
      const gone = partial
        ? partial.stopped
        : name.endsWith(SUFFIX) && !live.has(name.slice(0, name.indexOf('.')));
      if (gone) {
        rmSync(join(this.options.directory, name), { force: true });
        deleted++;
      }
    }
    return deleted;
  }

  /**
   * Closes the files and stops the writes under way, deleting their partial files once stopped (a process
   * that exits first leaves them to the next start's prune).
   */
  close(): void {
    this.closed = true;
    for (const file of this.files.values()) file.close();
    this.files.clear();
    for (const [worker, partial] of this.workers) {
      void worker.terminate().then(() => rmSync(partial, { force: true }));
    }
    this.workers.clear();
  }

  private usable(listing: Listing): boolean {
    return !this.closed && !this.db.memory && LISTING_ID.test(listing.listingId);
  }

  /** The file on disk, held from now on when it holds `generation`. */
  private opened(listing: Listing, generation: number): VectorFile | undefined {
    const key = keyOf(listing);
    const file = VectorFile.open(this.pathOf(listing), { ...listing, generation });
    if (!file) return undefined;
    this.files.get(key)?.close();
    this.files.set(key, file);
    return file;
  }

  private build(listing: Listing): Promise<boolean> {
    const key = keyOf(listing);
    const running = this.builds.get(key);
    if (running) return running;
    const startedAt = this.generation(listing.listingId);
    const build = this.write(listing)
      .then((written) => {
        // Closed meanwhile: nothing is held any more. The knowledge base changed while it was written: a
        // later search writes it again.
        if (this.closed || written !== this.generation(listing.listingId)) return false;
        if (!this.opened(listing, written)) throw new Error('the file written could not be opened');
        this.lastError = undefined;
        return true;
      })
      .catch((err: unknown) => {
        // Rescoring keeps reading SQLite; the reason is kept for diagnostics.
        this.lastError = err instanceof Error ? err.message : String(err);
        this.failed.set(key, startedAt);
        return false;
      })
      .finally(() => this.builds.delete(key));
    this.builds.set(key, build);
    return build;
  }

  /** Writes the file on a worker thread; resolves with the generation it holds. */
  private write(listing: Listing): Promise<number> {
    return new Promise((resolve, reject) => {
      // A directory that cannot be made rejects, as a failed write does.
      mkdirSync(this.options.directory, { recursive: true });
      const chunks = this.db
        .prepare(`SELECT chunk_count FROM listings WHERE id = ?`)
        .pluck()
        .get(listing.listingId) as number | undefined;
      const needed = vectorFileBytes(chunks ?? 0, listing.dimensions, codeBytes(listing.dimensions));
      const disk = statfsSync(this.options.directory);
      const free = disk.bavail * disk.bsize;
      const spare = this.options.spareBytes ?? SPARE_BYTES;
      if (free < needed + spare) {
        const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
        throw new Error(
          `not written: ${mb(needed)} would leave under ${mb(spare)} free of the ${mb(free)} on its disk`,
        );
      }
      const worker = backgroundWorker(
        () =>
          new Worker(new URL('./vectorFileWorker.mjs', import.meta.url), {
            workerData: {
              role: 'kbstudio-vector-file',
              file: this.db.name,
              nativeBinding: this.options.nativeBinding,
              path: this.pathOf(listing),
              ...listing,
            },
            execArgv: [],
          }),
      );
      worker.unref();
      // The name vectorFileWorker.mjs writes to: `<final path>.<pid>-<thread id>.tmp`.
      this.workers.set(worker, `${this.pathOf(listing)}.${process.pid}-${worker.threadId}.tmp`);
      let settled = false;
      worker.once('message', (reply: { generation: number; error?: { message: string } }) => {
        settled = true;
        if (reply.error) reject(new Error(reply.error.message));
        else resolve(reply.generation);
      });
      worker.once('error', (err) => {
        settled = true;
        reject(err);
      });
      worker.once('exit', (code) => {
        this.workers.delete(worker);
        if (!settled) reject(new Error(`the vectors file worker exited with code ${code}`));
      });
    });
  }

  private pathOf({ listingId, model }: Listing): string {
    // Model names hold any character (`/`, `:`): a digest of it names the file.
    const digest = createHash('sha256').update(model).digest('hex').slice(0, 16);
    return join(this.options.directory, `${listingId}.${digest}${SUFFIX}`);
  }
}

function keyOf({ listingId, model }: Listing): string {
  return `${listingId}\u0000${model}`;
}
