import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { cosineDistance } from '../core/retrieve/cosineDistance';
import { CosineBatch } from '../core/retrieve/cosineKernel';
import type { DenseHit } from '../core/retrieve/searchIndex';

/**
 * A listing's float vectors under one model, copied from `embeddings` into a flat file so that rescoring
 * reads each candidate with one `pread` (about 2 µs here) rather than through SQLite (the row's leaf page,
 * then its overflow page: 8–9 µs a candidate at 1,024 dimensions). SQLite stays the store of record: the
 * file is written by vectorFileWorker.mjs from one read transaction, names the knowledge-base generation
 * it holds, and is used only while that is the listing's current one (docs/performance.md, "Dense
 * retrieval at scale", thirteenth pass).
 *
 * Layout: a header of HEADER_BYTES (JSON, padded with spaces), then `count` vectors of `dimensions`
 * float32 in ascending chunk id order, then their `count` chunk ids as float64, then (when the header's
 * `codeBytes` is not 0) their `count` sign codes from `vector_codes`, `codeBytes` each: a server starting
 * again reads its search codes from here in tens of milliseconds, where reading them row by row from
 * SQLite took 0.6–0.9 s at 500,000 chunks (docs/performance.md, "Search codes read from the vectors file").
 */
export const HEADER_BYTES = 4096;
export const VECTOR_FILE_FORMAT = 'kbstudio-vectors';
export const VECTOR_FILE_VERSION = 2;
/** The codes are read this many bytes at a time. */
const CODE_READ_BYTES = 8 << 20;
/** Candidates read into WebAssembly memory before their distances are computed together. */
const BATCH = 64;

export interface VectorFileHeader {
  format: typeof VECTOR_FILE_FORMAT;
  version: typeof VECTOR_FILE_VERSION;
  listingId: string;
  model: string;
  dimensions: number;
  generation: number;
  count: number;
  /** The bytes of each chunk's sign code after the ids; 0: the file holds no codes. */
  codeBytes: number;
}

/** The file's size for its header's count, dimensions and code bytes. */
export function vectorFileBytes(count: number, dimensions: number, codeBytes: number): number {
  return HEADER_BYTES + count * (dimensions * 4 + 8 + codeBytes);
}

export class VectorFile {
  /** Where candidates are read to and their distances computed; undefined: no WebAssembly here. */
  private readonly batch: CosineBatch | undefined;
  /** Without the batch: one vector at a time, its distance in JavaScript. */
  private readonly single: Float32Array | undefined;
  private readonly out = new Float64Array(BATCH);
  private fd: number | undefined;

  private constructor(
    fd: number,
    readonly header: VectorFileHeader,
    /** Chunk ids, ascending: vector i belongs to ids[i]. */
    readonly ids: Float64Array,
    private readonly path: string,
    /** The file opened (device and inode): codes are read only from this file, not one renamed over it. */
    private readonly identity: { dev: number; ino: number },
  ) {
    this.fd = fd;
    this.batch = CosineBatch.create(header.dimensions, BATCH);
    this.single = this.batch ? undefined : new Float32Array(header.dimensions);
  }

  get generation(): number {
    return this.header.generation;
  }

  /** The bytes of each sign code the file holds (0: none). */
  get codeBytes(): number {
    return this.header.codeBytes;
  }

  /** Closed: by close(), or after a read came back short (the file changed under it). */
  get closed(): boolean {
    return this.fd === undefined;
  }

  /**
   * The file at `path` when it holds the vectors of this listing and model at these dimensions and this
   * generation, in this format, whole (its size is the header's); undefined when there is none or it is
   * not usable (a build will write it again). Only the header is read from a file of another generation.
   */
  static open(
    path: string,
    expected: { listingId: string; model: string; dimensions: number; generation: number },
  ): VectorFile | undefined {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return undefined;
    }
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      if (readSync(fd, head, 0, HEADER_BYTES, 0) !== HEADER_BYTES) throw new Error('short header');
      const header = JSON.parse(head.toString('utf8').trimEnd()) as VectorFileHeader;
      const stat = fstatSync(fd);
      const usable =
        header.format === VECTOR_FILE_FORMAT &&
        header.version === VECTOR_FILE_VERSION &&
        header.listingId === expected.listingId &&
        header.model === expected.model &&
        header.dimensions === expected.dimensions &&
        header.generation === expected.generation &&
        Number.isSafeInteger(header.count) &&
        header.count >= 0 &&
        Number.isSafeInteger(header.codeBytes) &&
        header.codeBytes >= 0 &&
        stat.size === vectorFileBytes(header.count, header.dimensions, header.codeBytes);
      if (!usable) throw new Error('not this listing’s vectors, or not whole');
      const ids = new Float64Array(header.count);
      const idBytes = Buffer.from(ids.buffer);
      const at = HEADER_BYTES + header.count * header.dimensions * 4;
      if (readSync(fd, idBytes, 0, idBytes.length, at) !== idBytes.length) throw new Error('short ids');
      return new VectorFile(fd, header, ids, path, { dev: stat.dev, ino: stat.ino });
    } catch {
      closeSync(fd);
      return undefined;
    }
  }

  /**
   * The cosine distance of each chunk's vector to the query (as sqlite-vec computes it), for the ids the
   * file holds (others are left out, as the SQL's `IN` leaves out chunks without a vector); undefined
   * when the file is closed or a read comes back short (it was changed under it: it is closed then, and
   * the caller asks SQLite instead).
   */
  distances(query: Float32Array, ids: readonly number[]): DenseHit[] | undefined {
    const fd = this.fd;
    if (fd === undefined || query.length !== this.header.dimensions) return undefined;
    // In the order asked: the same candidates read in file order were no faster (1.96 ms for 808 either way).
    const slots = Int32Array.from(ids, (id) => this.slotOf(id)).filter((slot) => slot >= 0);
    const bytes = this.header.dimensions * 4;
    const hits: DenseHit[] = [];
    const batch = this.batch;
    if (!batch) {
      const vector = this.single!;
      const into = new Uint8Array(vector.buffer);
      for (const slot of slots) {
        if (readSync(fd, into, 0, bytes, HEADER_BYTES + slot * bytes) !== bytes) return this.cutShort();
        hits.push(hit(this.ids[slot]!, cosineDistance(query, vector)));
      }
      return hits;
    }
    batch.setQuery(query);
    for (let from = 0; from < slots.length; from += BATCH) {
      const count = Math.min(BATCH, slots.length - from);
      for (let k = 0; k < count; k++) {
        const at = HEADER_BYTES + slots[from + k]! * bytes;
        if (readSync(fd, batch.slot(k), 0, bytes, at) !== bytes) return this.cutShort();
      }
      batch.distances(count, this.out);
      for (let k = 0; k < count; k++) hits.push(hit(this.ids[slots[from + k]!]!, this.out[k]!));
    }
    return hits;
  }

  /**
   * Reads the file's sign codes into `into` (`count * codeBytes` bytes, code i at `i * codeBytes`), off the
   * event loop, through a handle of its own (close() may come meanwhile). False when the file holds no
   * codes, `into` is not their size, or the file at its path is no longer this one or comes back short.
   */
  async readCodes(into: Uint8Array): Promise<boolean> {
    const { count, dimensions, codeBytes } = this.header;
    if (codeBytes === 0 || into.length !== count * codeBytes) return false;
    let handle;
    try {
      handle = await openFile(this.path, 'r');
    } catch {
      return false;
    }
    try {
      const stat = await handle.stat();
      if (stat.dev !== this.identity.dev || stat.ino !== this.identity.ino) return false;
      const at = HEADER_BYTES + count * (dimensions * 4 + 8);
      for (let done = 0; done < into.length;) {
        const length = Math.min(CODE_READ_BYTES, into.length - done);
        const { bytesRead } = await handle.read(into, done, length, at + done);
        if (bytesRead === 0) return false;
        done += bytesRead;
      }
      return true;
    } catch {
      return false;
    } finally {
      await handle.close();
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private cutShort(): undefined {
    this.close();
    return undefined;
  }

  /** The index of `id` in ids (binary search), or -1. */
  private slotOf(id: number): number {
    let low = 0;
    let high = this.ids.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = this.ids[middle]!;
      if (at === id) return middle;
      if (at < id) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}

/** SQLite returns NaN (a zero vector's distance) as NULL; the exact path's hits carry that null. */
function hit(id: number, distance: number): DenseHit {
  return { id, distance: Number.isNaN(distance) ? (null as unknown as number) : distance };
}
