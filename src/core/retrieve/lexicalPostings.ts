import { idMask } from './idMask';
import { BM25_K1 } from './scoring';

/** FTS5's bm25() b constant (fts5_aux.c), beside BM25_K1. */
const BM25_B = 0.75;

/**
 * A snapshot of the full-text index's postings held in memory: for each term (as FTS5 stored it, after
 * its tokenizer and stemmer), the rows holding it and how often. Built by reading FTS5's own index
 * (lexicalIndexWorker.mjs), so a term matches exactly the rows FTS5's MATCH would.
 */
export interface LexicalPostingsData {
  /** Rows in the full-text index and their tokens, as FTS5's bm25() reads them (its averages record). */
  indexRows: number;
  indexTokens: number;
  /** Chunk ids, ascending: a row's position is its index here. */
  ids: Float64Array;
  /** Tokens of the row at each position (FTS5's docsize: bm25's document length). */
  lengths: Uint32Array;
  /** The listing of the row at each position, as an index into `listings`. */
  listingOf: Uint32Array;
  listings: string[];
  /**
   * The terms' UTF-8 bytes back to back in FTS5's order (that of the bytes), term t at
   * [termOffsets[t], termOffsets[t + 1]); its postings at [starts[t], starts[t + 1]) of `positions` and
   * `counts`.
   */
  termBytes: Uint8Array;
  termOffsets: Uint32Array;
  starts: Uint32Array;
  /** Row positions, ascending within each term. */
  positions: Uint32Array;
  /** Occurrences of the term in the row (32-bit only when some count passes 65,535). */
  counts: Uint16Array | Uint32Array;
}

export interface PostingsHit {
  id: number;
  bm25: number;
}

/** A query term by its number in the snapshot, with its idf (LexicalPostings.weights). */
export interface TermWeight {
  term: number;
  idf: number;
}

/**
 * BM25 over the in-memory postings, computed as FTS5's bm25() computes it (fts5_aux.c, the same
 * operations in the same order, so the same doubles): for a query of single-token phrases,
 * score = Σ idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avglen)), idf = ln((N − n + 0.5) / (n + 0.5))
 * and never below 1e-6, N and avglen over the whole index, n the rows holding the term.
 * FTS5 has no early termination: a query word in 70,000 of 500,000 rows costs it 0.1–0.5 s; here it is a
 * pass over 70,000 postings of two typed arrays (docs/performance.md, "Full-text search at scale").
 */
export class LexicalPostings {
  private readonly avgLength: number;
  /** Per position: the score being summed for the current query (0: not touched). */
  private readonly scores: Float64Array;
  /** The positions the current query scored, in the order first touched. */
  private readonly touched: Uint32Array;
  /** Per position, k1 · (1 − b + b · length / average length): the part of BM25 fixed per row. */
  private readonly norms: Float64Array;
  private readonly listingIndex: Map<string, number>;
  private readonly listingRows: Uint32Array;

  /**
   * `log`: the natural logarithm of the idf. Math.log and C's log() (which FTS5 calls) differ in the last
   * bit for about 7% of arguments; SQLite's ln() is C's, so the database layer passes that, and the
   * scores are then the same doubles as FTS5's.
   */
  constructor(
    /**
     * The arrays held. As lexicalIndexWorker.mjs reads them they are in shared memory: the lexical thread
     * and the worker that follows a change from them read these very arrays (others are handed over to
     * that worker, which detaches them).
     */
    readonly data: LexicalPostingsData,
    private readonly log: (x: number) => number = Math.log,
  ) {
    this.avgLength = data.indexTokens / data.indexRows;
    this.scores = new Float64Array(data.ids.length);
    this.touched = new Uint32Array(data.ids.length);
    // Plain loops: Float64Array.from with a mapping function took 50–60 ms of the server's thread at
    // 500,000 rows, this one 3 ms, the same doubles.
    const { lengths, listingOf } = data;
    this.norms = new Float64Array(lengths.length);
    for (let i = 0; i < lengths.length; i++) {
      this.norms[i] = BM25_K1 * (1 - BM25_B + (BM25_B * lengths[i]!) / this.avgLength);
    }
    this.listingIndex = new Map(data.listings.map((id, i) => [id, i]));
    this.listingRows = new Uint32Array(data.listings.length);
    for (let i = 0; i < listingOf.length; i++) this.listingRows[listingOf[i]!]!++;
  }

  /** Rows (chunks) of the snapshot. */
  get rows(): number {
    return this.data.ids.length;
  }

  /** Chunks of a listing in the snapshot. */
  listingChunks(listingId: string): number {
    const l = this.listingIndex.get(listingId);
    return l === undefined ? 0 : this.listingRows[l]!;
  }

  /** Bytes the snapshot holds in typed arrays (the terms' strings and map not counted). */
  get bytes(): number {
    const d = this.data;
    return (
      d.termBytes.byteLength +
      d.termOffsets.byteLength +
      d.ids.byteLength +
      d.lengths.byteLength +
      d.listingOf.byteLength +
      d.starts.byteLength +
      d.positions.byteLength +
      d.counts.byteLength +
      this.scores.byteLength +
      this.touched.byteLength +
      this.norms.byteLength
    );
  }

  /** Which positions hold the given chunk ids (ascending). */
  mask(ids: readonly number[]): Uint8Array {
    return idMask(this.data.ids, ids);
  }

  /** Rows holding the term (0: none or unknown). */
  docFreq(term: string): number {
    const t = this.termOf(term);
    return t === undefined ? 0 : this.data.starts[t + 1]! - this.data.starts[t]!;
  }

  /** Whether any row of the listing holds the term: its first posting there ends the look. */
  inListing(term: string, listingId: string): boolean {
    const t = this.termOf(term);
    const l = this.listingIndex.get(listingId);
    if (t === undefined || l === undefined) return false;
    const { starts, positions, listingOf } = this.data;
    for (let p = starts[t]!; p < starts[t + 1]!; p++) if (listingOf[positions[p]!] === l) return true;
    return false;
  }

  /**
   * The best `limit` rows of the listing holding any term, by BM25 descending then chunk id ascending
   * (FTS5's `ORDER BY bm25 DESC, id`); only rows whose position `allowed` marks, when given.
   */
  search(terms: string[], listingId: string, limit: number, allowed?: Uint8Array): PostingsHit[] {
    const l = this.listingNumber(listingId);
    if (l === undefined) return [];
    return this.searchWeighted(this.weights(terms), l, limit, allowed);
  }

  /**
   * The query's terms as numbers with their idf (terms no row holds left out): what `searchWeighted`
   * takes, so a thread holding the same arrays searches without the idf's logarithm (see the constructor).
   */
  weights(terms: string[]): TermWeight[] {
    const { starts } = this.data;
    return terms.flatMap((term) => {
      const t = this.termOf(term);
      return t === undefined ? [] : [{ term: t, idf: this.idf(starts[t + 1]! - starts[t]!) }];
    });
  }

  /** The listing's number in the snapshot (undefined: none of its chunks is held). */
  listingNumber(listingId: string): number | undefined {
    return this.listingIndex.get(listingId);
  }

  /** `search` for terms already weighted (`weights`) in listing number `l` (`listingNumber`). */
  searchWeighted(
    weights: readonly TermWeight[],
    l: number,
    limit: number,
    allowed?: Uint8Array,
  ): PostingsHit[] {
    if (limit <= 0 || l < 0 || l >= this.listingRows.length) return [];
    const { starts, positions, counts, listingOf } = this.data;
    const { scores, norms, touched } = this;
    // One listing holding every row and no filter (the common case): no test per posting.
    const everyRow = allowed === undefined && this.listingRows[l] === this.data.ids.length;
    let found = 0;
    for (const { term: t, idf } of weights) {
      for (let p = starts[t]!, end = starts[t + 1]!; p < end; p++) {
        const pos = positions[p]!;
        if (!everyRow && (listingOf[pos] !== l || (allowed !== undefined && allowed[pos] === 0))) continue;
        const freq = counts[p]!;
        // fts5Bm25Function's term, its operations in its order (the norm is its k1 · (1 − b + b · D / avgdl)).
        const part = idf * ((freq * (BM25_K1 + 1.0)) / (freq + norms[pos]!));
        const sum = scores[pos]!;
        if (sum === 0) touched[found++] = pos;
        scores[pos] = sum + part;
      }
    }
    const best = topPositions(touched, found, scores, limit);
    const hits = best.map((pos) => ({ id: this.data.ids[pos]!, bm25: scores[pos]! }));
    for (let i = 0; i < found; i++) scores[touched[i]!] = 0;
    return hits;
  }

  /** BM25 of the given chunks for the terms; chunks holding none (or not in the snapshot) are left out. */
  scoresOf(terms: string[], ids: readonly number[]): PostingsHit[] {
    const { starts, positions, counts } = this.data;
    const termRows = this.weights(terms);
    const hits: PostingsHit[] = [];
    // Each chunk once, as FTS5's `rowid IN (…)` returns it.
    for (const id of new Set(ids)) {
      const pos = lowerBound(this.data.ids, id, 0, this.data.ids.length);
      if (pos === this.data.ids.length || this.data.ids[pos] !== id) continue;
      let score = 0;
      for (const { term: t, idf } of termRows) {
        const p = lowerBound(positions, pos, starts[t]!, starts[t + 1]!);
        if (p < starts[t + 1]! && positions[p] === pos) {
          const freq = counts[p]!;
          score += idf * ((freq * (BM25_K1 + 1.0)) / (freq + this.norms[pos]!));
        }
      }
      if (score > 0) hits.push({ id, bm25: score });
    }
    return hits;
  }

  /** The number of a term: a binary search of the terms' bytes (undefined: no row holds it). */
  private termOf(term: string): number | undefined {
    const key = UTF8.encode(term);
    const { termBytes, termOffsets } = this.data;
    let lo = 0;
    let hi = termOffsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const order = compareBytes(termBytes, termOffsets[mid]!, termOffsets[mid + 1]!, key);
      if (order === 0) return mid;
      if (order < 0) lo = mid + 1;
      else hi = mid;
    }
    return undefined;
  }

  /** FTS5's idf (fts5Bm25GetData): over the whole index, never below 1e-6. */
  private idf(hits: number): number {
    const rows = this.data.indexRows;
    const idf = this.log((rows - hits + 0.5) / (hits + 0.5));
    return idf <= 0 ? 1e-6 : idf;
  }
}

const UTF8 = new TextEncoder();

/** memcmp order of bytes[from, to) against `key`: negative when the slice sorts first. */
function compareBytes(bytes: Uint8Array, from: number, to: number, key: Uint8Array): number {
  const length = Math.min(to - from, key.length);
  for (let i = 0; i < length; i++) {
    const d = bytes[from + i]! - key[i]!;
    if (d !== 0) return d;
  }
  return to - from - key.length;
}

/** The first index in [from, to) of the ascending `values` holding `value` or more. */
function lowerBound(values: ArrayLike<number>, value: number, from: number, to: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether position a ranks before b: higher score first, then the lower position (chunk id). */
const before = (scores: Float64Array, a: number, b: number) =>
  scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);

/**
 * The `limit` best positions, best first: a bounded heap whose root is the worst kept, so each of the
 * touched rows costs a comparison and only a better one a heap step (70,000 rows: about a millisecond).
 */
function topPositions(touched: Uint32Array, found: number, scores: Float64Array, limit: number): number[] {
  const heap: number[] = [];
  const worse = (i: number, j: number) => before(scores, heap[j]!, heap[i]!);
  const swap = (i: number, j: number) => {
    const h = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = h;
  };
  const siftDown = (i: number) => {
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) return;
      const right = left + 1;
      const child = right < heap.length && worse(right, left) ? right : left;
      if (!worse(child, i)) return;
      swap(child, i);
      i = child;
    }
  };
  for (let i = 0; i < found; i++) {
    const pos = touched[i]!;
    if (heap.length < limit) {
      heap.push(pos);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (before(scores, pos, heap[0]!)) {
      heap[0] = pos;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (before(scores, a, b) ? -1 : 1));
}
