import {
  elementPredicate,
  isNegated,
  type ElementCondition,
  type JsonElement,
} from '../core/retrieve/filterElements';
import type { FieldFilter } from '../core/retrieve/filters';
import type { Db } from './open';

/**
 * One metadata key's values for every chunk of a listing, as json_each yields them, each distinct value
 * stored once (a key such as `source` or `page` has far fewer distinct values than chunks).
 */
interface KeyColumn {
  /** The knowledge-base generation the column was read at. */
  generation: number;
  /** The listing's chunk ids, ascending; position i below is chunk ids[i]. */
  ids: Float64Array;
  /** 1 where the key exists in the chunk's metadata (`json_type` not NULL: a JSON null exists). */
  present: Uint8Array;
  /** Chunk i's values are dictionary[codes[j]] for offsets[i] <= j < offsets[i + 1]. */
  offsets: Int32Array;
  codes: Int32Array;
  dictionary: JsonElement[];
  bytes: number;
}

export interface FilterColumnCacheOptions {
  /** Memory the columns may take together; the least recently used are dropped first. */
  maxBytes?: number;
  /** Chunks read per slice of a column, the event loop free between slices. */
  sliceChunks?: number;
  /** The same for a column read ahead, smaller: no filter waits for it, searches should not either. */
  aheadSliceChunks?: number;
  /**
   * When the last search ended (`performance.now()`): a column read ahead reads its next slice only
   * once no search has run for `idleMs`. Without it, reading ahead never waits.
   */
  lastSearchAt?: () => number;
  idleMs?: number;
}

/**
 * Metadata filters of the binary dense path, evaluated over columns read once per listing, key and
 * knowledge-base generation. Evaluating a filter in SQL reads and parses every chunk's metadata (about
 * 0.35-0.5 s at 500k chunks): a creator or a buyer trying one filter value after another paid that for
 * each. Now a filter on a key whose column is not read yet is answered in SQL as before, and its column
 * is read in the background, a slice of chunks at a time with the event loop free in between (reading
 * it whole costs about 1.1 s at 500k, more than the SQL). Once read, any filter on that key, with any
 * values, runs over the column in memory. The result is the SQL's (`filterSql`): the column holds what
 * json_each yields, and each distinct value is tested as the SQL tests it (`elementPredicate`; a test
 * compares both on random metadata).
 */
export class FilterColumnCache {
  private readonly columns = new Map<string, KeyColumn>();
  private readonly reading = new Map<string, Promise<void>>();
  /** Columns being read ahead that a filter has asked for since: read at full speed, kept as used. */
  private readonly wanted = new Set<string>();
  /** The running reads ahead, one per `prefetch` call. */
  private readonly ahead = new Set<Promise<void>>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly sliceChunks: number;
  private readonly aheadSliceChunks: number;
  private readonly lastSearchAt: () => number;
  private readonly idleMs: number;

  constructor(
    private readonly db: Db,
    /** The listing's knowledge-base generation, as the code cache reads it. */
    private readonly generationOf: (listingId: string) => number,
    options: FilterColumnCacheOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 128 * 2 ** 20;
    this.sliceChunks = options.sliceChunks ?? 10_000;
    this.aheadSliceChunks = options.aheadSliceChunks ?? 2_000;
    this.lastSearchAt = options.lastSearchAt ?? (() => -Infinity);
    this.idleMs = options.idleMs ?? 100;
  }

  /**
   * Ids, ascending, of the listing's chunks passing every filter, at knowledge-base `generation`; or
   * undefined when a column is not read yet at that generation (its reading is started: the caller asks
   * SQL meanwhile).
   */
  allowedIds(listingId: string, generation: number, filters: FieldFilter[]): number[] | undefined {
    const columns = filters.map((f) => this.column(listingId, generation, f.key));
    if (!columns.every((c) => c !== undefined)) return undefined;
    const count = columns[0]?.ids.length ?? 0;
    // The same generation is the same chunks: documents are written and deleted with their chunks.
    if (columns.some((c) => c.ids.length !== count)) return undefined;
    const passing = new Uint8Array(count).fill(1);
    filters.forEach((filter, k) => {
      const column = columns[k]!;
      for (const condition of filter.conditions) {
        if (condition.op === 'exists') {
          const wanted = condition.value ? 1 : 0;
          for (let i = 0; i < count; i++) if (column.present[i] !== wanted) passing[i] = 0;
        } else {
          applyCondition(column, condition, passing);
        }
      }
    });
    const ids: number[] = [];
    const all = columns[0]?.ids;
    for (let i = 0; i < count; i++) if (passing[i] === 1) ids.push(all![i]!);
    return ids;
  }

  /** Resolves once the columns being read, or read ahead, are read (or given up). */
  async settled(): Promise<void> {
    while (this.reading.size > 0 || this.ahead.size > 0) {
      await Promise.all([...this.reading.values(), ...this.ahead]);
    }
  }

  /**
   * Reads the columns of keys filters are expected on (those a listing's recent queries used), one
   * after another in the background, unless read at `generation` or being read: the first filter on
   * each is then answered from memory too. Reading ahead has the lowest priority: small slices, each
   * only once searches have left the thread idle for a while (under a steady load it waits; a filter
   * asking for the key meanwhile makes it a reading at full speed). A column read ahead is kept as the
   * least recently used, so it never pushes out one a filter used; one that does not fit is dropped,
   * and the keys after it are not read.
   */
  prefetch(listingId: string, generation: number, keys: readonly string[]): void {
    const run = (async () => {
      for (const key of keys) {
        const name = columnName(listingId, key);
        if (this.columns.get(name)?.generation === generation || this.reading.has(name)) continue;
        const kept = this.read(listingId, key, generation, name)
          .then((column) => column !== undefined && this.keep(name, column, this.wanted.has(name)))
          .catch(() => false)
          .finally(() => {
            this.reading.delete(name);
            this.wanted.delete(name);
          });
        this.reading.set(
          name,
          kept.then(() => undefined),
        );
        if (!(await kept)) return;
      }
    })();
    this.ahead.add(run);
    void run.finally(() => this.ahead.delete(run));
  }

  /** The key's column at `generation`, or undefined while it is read (its reading started if needed). */
  private column(listingId: string, generation: number, key: string): KeyColumn | undefined {
    const name = columnName(listingId, key);
    const cached = this.columns.get(name);
    if (cached?.generation === generation) {
      // Most recently used last: Map keeps insertion order.
      this.columns.delete(name);
      this.columns.set(name, cached);
      return cached;
    }
    if (this.reading.has(name)) {
      // Read ahead, perhaps waiting for the thread to be idle: wanted now.
      this.wanted.add(name);
    } else {
      const done = this.read(listingId, key, generation)
        .then((column) => {
          if (column) this.keep(name, column, true);
        })
        // A closed database, a listing deleted: the next filter asks SQL and tries again.
        .catch(() => undefined)
        .finally(() => this.reading.delete(name));
      this.reading.set(name, done);
    }
    return undefined;
  }

  /**
   * Keeps a column a filter asked for as the most recently used, dropping the least recently used past
   * the budget (never this one); a column read ahead as the least recently used, only where it fits
   * beside the others. False when the column was not kept.
   */
  private keep(name: string, column: KeyColumn, used: boolean): boolean {
    const old = this.columns.get(name);
    if (old) {
      this.columns.delete(name);
      this.bytes -= old.bytes;
    }
    if (!used) {
      if (this.bytes + column.bytes > this.maxBytes) return false;
      const others = [...this.columns];
      this.columns.clear();
      for (const [other, entry] of [[name, column] as const, ...others]) this.columns.set(other, entry);
      this.bytes += column.bytes;
      return true;
    }
    this.columns.set(name, column);
    this.bytes += column.bytes;
    for (const [other, entry] of this.columns) {
      if (this.bytes <= this.maxBytes || other === name) break;
      this.columns.delete(other);
      this.bytes -= entry.bytes;
    }
    return true;
  }

  /**
   * Reads the key's values for every chunk, a slice of chunks at a time (keyset pages, each its own
   * statement: an iterator left open across a yield would keep the connection busy for every other
   * request). Undefined when the knowledge base changed meanwhile.
   */
  private async read(
    listingId: string,
    key: string,
    generation: number,
    /** Set for a reading ahead: its name, to see whether a filter has asked for it since. */
    ahead?: string,
  ): Promise<KeyColumn | undefined> {
    // The path filterSql uses: a JSON path label in double quotes reaches any key, dots included.
    const path = `$.${JSON.stringify(key)}`;
    const generationNow = () => this.generationOf(listingId);
    const page = this.db.prepare(
      `SELECT c.id, json_type(c.metadata, @path) IS NOT NULL, m.type, m.value
         FROM (SELECT id, metadata FROM chunks WHERE listing_id = @listingId AND id > @after
                ORDER BY id LIMIT @limit) AS c
         LEFT JOIN json_each(c.metadata, @path) AS m
        ORDER BY c.id`,
    );
    const ids: number[] = [];
    const present: number[] = [];
    const offsets: number[] = [];
    const codes: number[] = [];
    const dictionary: JsonElement[] = [];
    const codeOf = new Map<string, number>();
    let dictionaryBytes = 0;
    let after = Number.MIN_SAFE_INTEGER;
    const behind = () => ahead !== undefined && !this.wanted.has(ahead);
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      while (behind() && performance.now() - this.lastSearchAt() < this.idleMs) {
        await new Promise((resolve) => setTimeout(resolve, this.idleMs / 2));
      }
      if (!this.db.open || generationNow() !== generation) return undefined;
      const limit = behind() ? this.aheadSliceChunks : this.sliceChunks;
      const rows = page.raw(true).all({ path, listingId, after, limit }) as [
        number,
        number,
        string | null,
        unknown,
      ][];
      let chunks = 0;
      for (const [id, exists, type, value] of rows) {
        if (id !== after) {
          chunks++;
          offsets.push(codes.length);
          ids.push(id);
          present.push(exists);
          after = id;
        }
        if (type === null) continue; // no value: the key is missing, or an empty array or object
        const dictionaryKey = `${type}\u0000${String(value)}`;
        let code = codeOf.get(dictionaryKey);
        if (code === undefined) {
          code = dictionary.length;
          dictionary.push({ type, value });
          codeOf.set(dictionaryKey, code);
          dictionaryBytes += 64 + 2 * dictionaryKey.length;
        }
        codes.push(code);
      }
      if (chunks < limit) break;
    }
    if (generationNow() !== generation) return undefined;
    offsets.push(codes.length);
    return {
      generation,
      ids: Float64Array.from(ids),
      present: Uint8Array.from(present),
      offsets: Int32Array.from(offsets),
      codes: Int32Array.from(codes),
      dictionary,
      bytes: ids.length * 13 + codes.length * 4 + dictionaryBytes,
    };
  }
}

function columnName(listingId: string, key: string): string {
  return `${listingId}\u0000${key}`;
}

/** Clears `passing` where the condition fails: any value matching, or for `ne`/`nin` none. */
function applyCondition(column: KeyColumn, condition: ElementCondition, passing: Uint8Array): void {
  const test = elementPredicate(condition);
  // Each distinct value is tested once.
  const matches = Uint8Array.from(column.dictionary, (element) => (test(element) ? 1 : 0));
  const negated = isNegated(condition);
  const { offsets, codes } = column;
  for (let i = 0; i < passing.length; i++) {
    if (passing[i] === 0) continue;
    let any = false;
    for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
      if (matches[codes[j]!] === 1) {
        any = true;
        break;
      }
    }
    if (any === negated) passing[i] = 0;
  }
}
