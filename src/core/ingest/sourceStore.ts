import { randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

const HASH = /^[0-9a-f]{64}$/;
/**
 * Copies are copy-on-write clones where the file system can make them (Node: "a fallback copy mechanism
 * is used" where it cannot). On macOS libuv asks copyfile(3) for a clone only with this flag, so a folder
 * ingested on APFS need not be written twice (not measurable here). On Linux, copy_file_range already
 * shared the blocks on btrfs without it (checked with filefrag), and ext4 copies either way. A clone is
 * still a file of its own: the creator's later edits to the original never change the kept bytes.
 */
const COPY_MODE = constants.COPYFILE_FICLONE;

/**
 * The original bytes of every ingested file, kept by content hash (SHA-256 of the file) under
 * `<dataDir>/sources`. Re-ingesting a document and pushing a knowledge base to the hosted service
 * both start from these; two documents with the same bytes share one copy.
 */
export class SourceStore {
  /** Shard folders known to exist: an ingestion of thousands of files need not make each one again. */
  private readonly shards = new Set<string>();
  /**
   * Copies of ingestions still running in this process, by hash, with how many hold each: no document
   * refers to them until their ingestion commits, and `prune` must not take them meanwhile.
   */
  private readonly held = new Map<string, number>();
  /**
   * Prunes under way, and the holds released meanwhile: a prune works from the documents it was given
   * when it started, so a copy committed and released since must stay held until it ends.
   */
  private pruning = 0;
  private releasedWhilePruning: string[] = [];

  constructor(private readonly root: string) {}

  /** Where the bytes of `hash` are (or would be) kept. */
  pathOf(hash: string): string {
    if (!HASH.test(hash)) throw new Error(`Not a SHA-256 content hash: '${hash}'.`);
    return join(this.root, hash.slice(0, 2), hash);
  }

  /** Whether the bytes of `hash` are kept (see isFile). */
  has(hash: string): boolean {
    return isFile(this.pathOf(hash));
  }

  /**
   * Keeps the copy of `hash` from `prune` until the returned function is called (once the ingestion
   * that keeps it has committed, or failed). Taken before `put`, so a prune that runs while the copy is
   * made leaves it and its partial file alone.
   */
  hold(hash: string): () => void {
    this.pathOf(hash); // Checks the hash.
    this.held.set(hash, (this.held.get(hash) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.pruning > 0) this.releasedWhilePruning.push(hash);
      else this.release(hash);
    };
  }

  private release(hash: string): void {
    const count = (this.held.get(hash) ?? 1) - 1;
    if (count > 0) this.held.set(hash, count);
    else this.held.delete(hash);
  }

  /**
   * Keeps `file` (whose SHA-256 is `hash`): a copy, or with `move` the file itself, renamed into the store
   * when it is on the same file system (a received upload the caller would delete: no second copy of its
   * bytes to write). A file already kept is left as it is, and so is `file` then.
   */
  async put(hash: string, file: string, options: { move?: boolean } = {}): Promise<void> {
    const target = this.pathOf(hash);
    if (this.has(hash)) return;
    const shard = join(this.root, hash.slice(0, 2));
    if (!this.shards.has(shard)) {
      await mkdir(shard, { recursive: true });
      this.shards.add(shard);
    }
    // A rename is atomic: the name never shows a partial file. Where it cannot be renamed, it is copied.
    if (options.move && (await this.moveInto(file, target, shard))) return;
    // Copy then rename: a crash mid-copy never leaves a truncated file under the hash's name.
    const partial = `${target}.${randomBytes(4).toString('hex')}.part`;
    const copy = () => copyFile(file, partial, COPY_MODE);
    try {
      await copy().catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        // The shard folder was removed since it was made (by hand): make it again and copy once more
        // (a source file that is gone fails again).
        await mkdir(shard, { recursive: true });
        await copy();
      });
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  /**
   * Renames `file` to `target`; false when it could not, and the caller copies instead: another file
   * system (EXDEV), a file another program holds open (Windows), or a file that is gone (the copy then
   * fails naming it).
   */
  private async moveInto(file: string, target: string, shard: string): Promise<boolean> {
    /** The rename's error, or undefined once it is done. */
    const renameError = () =>
      rename(file, target).then(
        () => undefined,
        (error: NodeJS.ErrnoException) => error,
      );
    const error = await renameError();
    if (!error) return true;
    if (error.code !== 'ENOENT' || !isFile(file)) return false;
    // The shard folder was removed since it was made (by hand), as in the copy below.
    await mkdir(shard, { recursive: true });
    return (await renameError()) === undefined;
  }

  /**
   * Removes the copies no document refers to any more (and leftovers of interrupted copies), but for
   * those held by an ingestion of this process (`hold`). The caller makes sure no other process is
   * ingesting into the same store meanwhile.
   */
  async prune(referenced: ReadonlySet<string>): Promise<number> {
    this.pruning++;
    try {
      return await this.removeUnreferenced(referenced);
    } finally {
      if (--this.pruning === 0) {
        for (const hash of this.releasedWhilePruning.splice(0)) this.release(hash);
      }
    }
  }

  private async removeUnreferenced(referenced: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    let shards: string[];
    try {
      shards = await readdir(this.root);
    } catch {
      return 0;
    }
    for (const shard of shards) {
      const dir = join(this.root, shard);
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        if (HASH.test(name) && referenced.has(name)) continue;
        // A kept copy's name is its hash; a copy being made is `<hash>.<random>.part`.
        if (this.held.has(name.slice(0, 64))) continue;
        await rm(join(dir, name), { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/**
 * A synchronous stat, which does not make an error for a missing file. The asynchronous one cost the
 * server's thread 37-47 µs per missing file (the error object and its stack), and every new document's
 * copy starts with one: 0.3 s of that thread per 100 MB of small files, against a few µs here
 * (docs/performance.md, twentieth pass). It holds the thread for one metadata lookup, as the reads of
 * small files in the pipeline do.
 */
function isFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false; // Not reachable (EACCES, a file where a folder should be): not kept.
  }
}
