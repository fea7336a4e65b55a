import type { Statement } from 'better-sqlite3';
import { HammingSpace } from '../core/retrieve/hammingKernel';
import { idMask } from '../core/retrieve/idMask';
import { codeBytes, nearestPositions, signCode } from '../core/retrieve/signCodes';
import type { Db } from './open';
import { settledWithin } from './settledWithin';

/** The sign codes of one listing's vectors under one model, held in WebAssembly memory. */
export class CodeSet {
  private histogram: Uint32Array | undefined;
  /** The query code and filter of the last scan. */
  private lastScan: { code: Buffer; allowedIds: readonly number[] | undefined } | undefined;

  constructor(
    /** Chunk ids in ascending order; code i belongs to ids[i]. */
    readonly ids: Float64Array,
    readonly dimensions: number,
    readonly space: HammingSpace,
  ) {}

  get count(): number {
    return this.ids.length;
  }

  /**
   * The chunk ids of the `count` codes nearest to the query's code (Hamming distance, the WebAssembly
   * scan of every code), nearest first; only among `allowedIds` (ascending chunk ids) when given.
   */
  nearest(vector: Float32Array, count: number, allowedIds?: readonly number[]): number[] {
    const bits = this.space.bytesPerCode * 8;
    // Without a filter, the scan counts the distances as it goes (each thread its half).
    const histogram = allowedIds ? undefined : (this.histogram ??= new Uint32Array(bits + 2));
    const code = Buffer.from(signCode(vector).buffer);
    // The same query code again (hybrid widening its dense pool): the last scan's distances, and its
    // histogram, are still held; only this method scans this set's codes, and they never change.
    const again =
      this.lastScan !== undefined &&
      this.lastScan.allowedIds === allowedIds &&
      this.lastScan.code.equals(code);
    const distances = again ? this.space.lastDistances() : this.space.distancesTo(code, histogram);
    this.lastScan = { code, allowedIds };
    const allowed = allowedIds ? idMask(this.ids, allowedIds) : undefined;
    const positions = allowed
      ? nearestPositions(distances, count, bits, allowed)
      : this.space.nearest(count, histogram!);
    return Array.from(positions, (p) => this.ids[p]!);
  }

  /** Lets go of the codes' memory in the scan helper thread too. */
  dispose(): void {
    this.space.dispose();
  }
}

interface Entry {
  generation: number;
  /** null: this knowledge base has vectors without codes (written before codes existed): search exactly. */
  codes: CodeSet | null;
  bytes: number;
}

/** Where a listing's codes can be read whole, faster than row by row from `vector_codes`: its vectors file. */
export interface CodeSource {
  /** The knowledge-base generation the codes are of. */
  readonly generation: number;
  /** The chunk ids, ascending: code i belongs to ids[i]. */
  readonly ids: Float64Array;
  /** The bytes of each code (0: none to read). */
  readonly codeBytes: number;
  /** Reads the codes into `into` (code i at `i * codeBytes`); false when they could not be read whole. */
  readCodes(into: Uint8Array): Promise<boolean>;
}

export interface VectorCodeCacheOptions {
  /** Memory the cached codes may take together; the least recently used listings are dropped first. */
  maxBytes?: number;
}

/**
 * The code sets of listings, loaded from `vector_codes` on first use and kept while the listing's
 * knowledge-base generation (bumped by triggers whenever its documents change, from any connection)
 * stays the same. Loading 500,000 codes reads 64 MB at 1,024 dimensions.
 */
export class VectorCodeCache {
  private readonly entries = new Map<string, Entry>();
  /** The code sets warm() is reading now, by listing and model. */
  private readonly warmingUp = new Map<string, Promise<boolean>>();
  private readonly maxBytes: number;
  private generationQuery: Statement | undefined;

  constructor(
    private readonly db: Db,
    options: VectorCodeCacheOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 1024 ** 3;
  }

  /** The listing's current generation (0 before its first document). */
  generation(listingId: string): number {
    // Asked several times per search: the statement is prepared once.
    this.generationQuery ??= this.db
      .prepare(`SELECT generation FROM knowledge_base_generations WHERE listing_id = ?`)
      .pluck();
    return (this.generationQuery.get(listingId) as number | undefined) ?? 0;
  }

  /**
   * The listing's codes under `model`, loading them when needed; null when some of its vectors (in the
   * vec0 table `table`) have no code, i.e. were committed before codes were written.
   */
  get(listingId: string, model: string, dimensions: number, table: string): CodeSet | null {
    const key = `${listingId}\u0000${model}`;
    const generation = this.generation(listingId);
    const cached = this.entries.get(key);
    if (cached && cached.generation === generation) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached.codes;
    }
    this.drop(key);
    // One read transaction: the generation stored is the one of the codes read.
    const entry = this.db.transaction(() =>
      this.load(listingId, model, dimensions, table, this.generation(listingId)),
    )();
    this.entries.set(key, entry);
    this.evict();
    return entry.codes;
  }

  /**
   * Loads the listing's codes ahead of its first query, a slice of rows at a time with the event loop
   * free in between, so a server warming up keeps answering (a synchronous load of 500k codes holds
   * it for about a second). Nothing is kept when the knowledge base changes meanwhile: the next query
   * then loads the new codes itself. Resolves with whether the codes are now cached. With a `source` of
   * the listing's current generation (its vectors file), the codes are read from there instead, off the
   * event loop; the rows are read only where it cannot give them.
   */
  warm(
    listingId: string,
    model: string,
    dimensions: number,
    table: string,
    options: { sliceRows?: number; source?: CodeSource } = {},
  ): Promise<boolean> {
    const key = `${listingId}\u0000${model}`;
    const running = this.warmingUp.get(key);
    if (running) return running;
    const { sliceRows = 20_000, source } = options;
    const warming = this.warmOnce(key, listingId, model, dimensions, table, sliceRows, source).finally(() => {
      if (this.warmingUp.get(key) === warming) this.warmingUp.delete(key);
    });
    this.warmingUp.set(key, warming);
    return warming;
  }

  /**
   * While the listing's codes are being read by warm(): a promise that settles once they are read, or
   * after `maxMs`; otherwise undefined. A query that waits for it does not read them a second time on its
   * own thread (get() reads them all at once).
   */
  warming(listingId: string, model: string, maxMs: number): Promise<void> | undefined {
    const warming = this.warmingUp.get(`${listingId}\u0000${model}`);
    return warming && settledWithin(warming, maxMs);
  }

  private async warmOnce(
    key: string,
    listingId: string,
    model: string,
    dimensions: number,
    table: string,
    sliceRows: number,
    source: CodeSource | undefined,
  ): Promise<boolean> {
    const generation = this.generation(listingId);
    if (this.entries.get(key)?.generation === generation) return true;
    // Sized by the vectors (a count of vec0's rowid table); the pages then must hold exactly one code for
    // each. Counting the codes first read all of them an extra time: 1.8 s from a cold disk at 500k.
    const count = this.vectorCount(table);
    if (count === 0) return false;
    if (source?.generation === generation) {
      const read = await this.readFrom(source, key, listingId, count, dimensions, generation);
      if (read || this.generation(listingId) !== generation) return read;
    }
    const space = new HammingSpace(count, codeBytes(dimensions));
    const filler = new CodeFiller(space);
    let kept = false;
    try {
      // Keyset pages, each its own statement: an iterator left open across a yield would keep the
      // connection busy for every other request.
      const page = this.db.prepare(
        `SELECT chunk_id, code FROM vector_codes WHERE listing_id = ? AND model = ? AND chunk_id > ?
        ORDER BY chunk_id LIMIT ?`,
      );
      for (;;) {
        const rows = page.raw().all(listingId, model, filler.lastId, sliceRows) as [number, Buffer][];
        if (!filler.add(rows)) return false;
        if (rows.length < sliceRows) break;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.generation(listingId) !== generation) return false;
      }
      if (!filler.complete || this.generation(listingId) !== generation) return false;
      // A query may have loaded the same generation meanwhile; either set is the same.
      if (this.entries.get(key)?.generation === generation) return true;
      this.drop(key);
      this.entries.set(key, filler.entry(generation, dimensions));
      this.evict();
      kept = true;
      return true;
    } finally {
      if (!kept) space.dispose();
    }
  }

  /**
   * Reads the codes from `source` when it holds one of the expected size for each of the `count` vectors;
   * resolves with whether they are now cached (false: not read, or the knowledge base changed meanwhile).
   */
  private async readFrom(
    source: CodeSource,
    key: string,
    listingId: string,
    count: number,
    dimensions: number,
    generation: number,
  ): Promise<boolean> {
    if (source.codeBytes !== codeBytes(dimensions) || source.ids.length !== count) return false;
    const space = new HammingSpace(count, source.codeBytes);
    let kept = false;
    try {
      if (!(await source.readCodes(space.codes))) return false;
      if (this.generation(listingId) !== generation) return false;
      if (this.entries.get(key)?.generation === generation) return true;
      this.drop(key);
      this.entries.set(key, {
        generation,
        codes: new CodeSet(source.ids, dimensions, space),
        bytes: space.byteLength + source.ids.byteLength,
      });
      this.evict();
      kept = true;
      return true;
    } finally {
      if (!kept) space.dispose();
    }
  }

  /** Drops every cached code set (tests, and a server closing its database). */
  clear(): void {
    for (const key of [...this.entries.keys()]) this.drop(key);
  }

  private load(
    listingId: string,
    model: string,
    dimensions: number,
    table: string,
    generation: number,
  ): Entry {
    // Sized by the vectors, as warm() does: the codes read must then be exactly one for each.
    const space = new HammingSpace(this.vectorCount(table), codeBytes(dimensions));
    const filler = new CodeFiller(space);
    const rows = this.db
      .prepare(`SELECT chunk_id, code FROM vector_codes WHERE listing_id = ? AND model = ? ORDER BY chunk_id`)
      .raw()
      .iterate(listingId, model) as IterableIterator<[number, Buffer]>;
    // A row that does not fit ends add()'s loop, which closes the statement.
    if (!filler.add(rows) || !filler.complete) {
      space.dispose();
      // Vectors without codes (committed before codes existed), or codes of another length: the exact path
      // until the knowledge base changes (a write meanwhile moves its generation past this one too).
      return { generation, codes: null, bytes: 0 };
    }
    return filler.entry(generation, dimensions);
  }

  /** Rows of a vec0 table, from its rowid shadow table (counting through vec0 itself scans every vector). */
  private vectorCount(table: string): number {
    return this.db.prepare(`SELECT count(*) FROM "${table}_rowids"`).pluck().get() as number;
  }

  private evict(): void {
    let total = 0;
    for (const e of this.entries.values()) total += e.bytes;
    for (const [key, e] of this.entries) {
      if (total <= this.maxBytes || this.entries.size === 1) break;
      this.drop(key);
      total -= e.bytes;
    }
  }

  /** Forgets an entry and lets its codes' memory go (the scan helper thread holds it too). */
  private drop(key: string): void {
    this.entries.get(key)?.codes?.dispose();
    this.entries.delete(key);
  }
}

/** Copies `vector_codes` rows (ascending chunk ids) into a space, code i at position i. */
class CodeFiller {
  readonly ids: Float64Array;
  private filled = 0;

  constructor(private readonly space: HammingSpace) {
    this.ids = new Float64Array(space.count);
  }

  /** The last chunk id copied (-1 before the first): where the next keyset page starts. */
  get lastId(): number {
    return this.filled === 0 ? -1 : this.ids[this.filled - 1]!;
  }

  get complete(): boolean {
    return this.filled === this.ids.length;
  }

  /** False when a row does not fit: more rows than counted, or a code of another length. */
  add(rows: Iterable<[number, Buffer]>): boolean {
    const { bytesPerCode } = this.space;
    for (const [id, code] of rows) {
      if (this.filled === this.ids.length || code.length !== bytesPerCode) return false;
      this.ids[this.filled] = id;
      this.space.codes.set(code, this.filled * bytesPerCode);
      this.filled++;
    }
    return true;
  }

  entry(generation: number, dimensions: number): Entry {
    return {
      generation,
      codes: new CodeSet(this.ids, dimensions, this.space),
      bytes: this.space.byteLength + this.ids.byteLength,
    };
  }
}
