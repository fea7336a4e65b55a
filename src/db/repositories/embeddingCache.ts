import type { EmbeddingCache } from '../../core/embed/embedder';
import type { Db } from '../open';
import { writeWithoutWaiting } from '../withoutWaiting';

/** Vectors as float32 blobs in the platform's (little-endian) byte order, the layout sqlite-vec reads. */
const toBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
// Copying through a fresh Uint8Array gives the Float32Array the 4-byte alignment a pooled Buffer may lack.
const fromBlob = (b: Buffer) => new Float32Array(new Uint8Array(b).buffer);

/**
 * The cache only saves calls to the model, so a write that cannot get the lock at once is skipped rather
 * than failing the embedding or holding the thread (writeWithoutWaiting): a commit into a knowledge base
 * can hold the lock for minutes. Those texts are embedded again if they are ingested again.
 */
export class SqliteEmbeddingCache implements EmbeddingCache {
  private readonly stmts;
  private readonly insertMany;

  constructor(private readonly db: Db) {
    this.stmts = {
      get: db.prepare(`SELECT vector FROM embedding_cache WHERE content_hash = ? AND model = ?`),
      set: db.prepare(`INSERT INTO embedding_cache (content_hash, model, vector) VALUES (?, ?, ?)
        ON CONFLICT (content_hash, model) DO UPDATE SET vector = excluded.vector`),
    };
    this.insertMany = db.transaction((model: string, entries: Iterable<readonly [string, Float32Array]>) => {
      for (const [hash, vector] of entries) this.stmts.set.run(hash, model, toBlob(vector));
    });
  }

  get(hash: string, model: string): Float32Array | undefined {
    const row = this.stmts.get.get(hash, model) as { vector: Buffer } | undefined;
    return row ? fromBlob(row.vector) : undefined;
  }

  set(hash: string, model: string, vector: Float32Array): void {
    writeWithoutWaiting(this.db, () => this.stmts.set.run(hash, model, toBlob(vector)));
  }

  setMany(model: string, entries: Iterable<readonly [hash: string, vector: Float32Array]>): void {
    writeWithoutWaiting(this.db, () => this.insertMany(model, entries));
  }
}
