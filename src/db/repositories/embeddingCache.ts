import type { EmbeddingCache } from '../../core/embed/embedder';
import type { Db } from '../open';
import { writeWithoutWaiting } from '../withoutWaiting';

/** Vectors as float32 blobs in the platform's (little-endian) byte order, the layout sqlite-vec reads. */
const toBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
// Copying through a fresh Uint8Array gives the Float32Array the 4-byte alignment a pooled Buffer may lack.
const fromBlob = (b: Buffer) => new Float32Array(new Uint8Array(b).buffer);

interface Entry {
  model: string;
  hash: string;
  vector: Float32Array;
}

/** Vectors held for a write the lock kept out: at 3,072 dimensions about 5,000 of them. */
const MAX_HELD_BYTES = 64 * 1024 * 1024;
/** How long held vectors wait before they are tried again, when no other write comes first. */
const RETRY_MS = 1_000;

/**
 * The cache only saves calls to the model, so a write that cannot get the lock at once never fails the
 * embedding or holds the thread (writeWithoutWaiting): a commit into a knowledge base (another
 * ingestion's) can hold the lock for minutes. Its vectors are held in memory instead, answered from
 * there, and written with the next write that gets the lock or by a retry every second: a hosted
 * model's vectors cost money, and re-ingesting those texts would pay for them again. Past
 * `maxHeldBytes` further vectors are not held (those texts would be embedded again).
 */
export class SqliteEmbeddingCache implements EmbeddingCache {
  private readonly stmts;
  private readonly insertAll;
  /** Vectors a busy write left out, by model and hash. */
  private readonly held = new Map<string, Entry>();
  private heldBytes = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly maxHeldBytes = MAX_HELD_BYTES,
  ) {
    this.stmts = {
      get: db.prepare(`SELECT vector FROM embedding_cache WHERE content_hash = ? AND model = ?`),
      set: db.prepare(`INSERT INTO embedding_cache (content_hash, model, vector) VALUES (?, ?, ?)
        ON CONFLICT (content_hash, model) DO UPDATE SET vector = excluded.vector`),
    };
    this.insertAll = db.transaction((entries: Iterable<Entry>) => {
      for (const { hash, model, vector } of entries) this.stmts.set.run(hash, model, toBlob(vector));
    });
  }

  /** Vectors held in memory for a write still to come (tests, diagnostics). */
  get heldCount(): number {
    return this.held.size;
  }

  get(hash: string, model: string): Float32Array | undefined {
    const held = this.held.get(keyOf(model, hash));
    if (held) return held.vector;
    const row = this.stmts.get.get(hash, model) as { vector: Buffer } | undefined;
    return row ? fromBlob(row.vector) : undefined;
  }

  set(hash: string, model: string, vector: Float32Array): void {
    this.setMany(model, [[hash, vector]]);
  }

  setMany(model: string, entries: Iterable<readonly [hash: string, vector: Float32Array]>): void {
    const fresh = Array.from(entries, ([hash, vector]) => ({ model, hash, vector }));
    // The held ones first, so a newer vector for the same text is the one kept.
    const all = this.held.size > 0 ? [...this.held.values(), ...fresh] : fresh;
    if (writeWithoutWaiting(this.db, () => this.insertAll(all))) this.release();
    else this.hold(fresh);
  }

  private hold(entries: Entry[]): void {
    for (const entry of entries) {
      const key = keyOf(entry.model, entry.hash);
      const before = this.held.get(key);
      const bytes = entry.vector.byteLength - (before?.vector.byteLength ?? 0);
      if (!before && this.heldBytes + bytes > this.maxHeldBytes) continue;
      // A copy: a view would keep its whole batch's buffer alive, and the caller may reuse it.
      this.held.set(key, { ...entry, vector: entry.vector.slice() });
      this.heldBytes += bytes;
    }
    if (this.held.size > 0 && !this.retry) {
      this.retry = setTimeout(() => this.tryAgain(), RETRY_MS);
      // Held vectors are a saving, not work a process should stay alive for.
      this.retry.unref();
    }
  }

  private tryAgain(): void {
    this.retry = undefined;
    if (this.held.size === 0) return;
    // Closed meanwhile (the studio shut down): nothing to write them to.
    if (!this.db.open) return this.release();
    try {
      if (writeWithoutWaiting(this.db, () => this.insertAll(this.held.values()))) this.release();
      else this.hold([]);
    } catch {
      // Not the lock (a full disk): the cache only saves calls, so the vectors are let go.
      this.release();
    }
  }

  private release(): void {
    this.held.clear();
    this.heldBytes = 0;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
  }
}

const keyOf = (model: string, hash: string) => `${model}\n${hash}`;
