import {
  filterNumber,
  type FieldFilter,
  type FilterCondition,
  type FilterScalar,
} from '../../core/retrieve/filters';
import type { LexicalStats } from '../../core/retrieve/scoring';
import type {
  DenseHit,
  LexicalHit,
  QueryLogEntry,
  SearchIndex,
  StoredChunk,
} from '../../core/retrieve/searchIndex';
import { codeBytes } from '../../core/retrieve/signCodes';
import type { Db } from '../open';
import { QueryLogWriter, type QueryLogWriterOptions } from '../queryLogWriter';
import { StatementCache } from '../statementCache';
import { FilterColumnCache } from '../filterColumns';
import { VectorCodeCache, type CodeSet } from '../vectorCodeCache';
import { LexicalIndexCache, type LexicalIndexOptions } from '../lexicalIndexCache';
import type { VectorFile } from '../vectorFile';
import { VectorFileCache, type VectorFileOptions } from '../vectorFileCache';
import type { LexicalPostings } from '../../core/retrieve/lexicalPostings';

interface Sql {
  sql: string;
  params: unknown[];
}

/** ` AND <filters>` after a condition, or nothing without filters. */
const andFilters = (where: Sql): string => (where.sql ? ` AND ${where.sql}` : '');

const vectorParam = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const idsParam = (ids: number[]) => JSON.stringify(ids);
/** vec0 table names come from vector_indexes; checked anyway before they are put into SQL. */
const TABLE_NAME = /^vec_[A-Za-z0-9_]+$/;
const COMPARATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const ALLOWED_CACHE_SIZE = 32;
const FILTERED_CANDIDATES_FACTOR = 4;
/** Where denseLimitAtCost stops looking (hybrid asks for 100 at most). */
const MAX_LIMIT_AT_COST = 1_024;
/** Read ahead: the keys of the latest queries' filters, this many keys of that many queries at most. */
const PREFETCH_KEYS = 8;
const PREFETCH_QUERIES = 1_000;
/**
 * How long a query waits for its listing's search codes being read by the warm-up (searchReady) before it
 * reads them itself: 500k × 1,024 codes take about a second to read.
 */
const CODES_WARM_WAIT_MS = 5_000;

interface VectorIndex {
  table: string;
  dimensions: number;
}

/** When and how dense search uses the binary first pass (docs/performance.md, "Dense retrieval at scale"). */
export interface DenseTuning {
  /** Up to this many chunks × dimensions, sqlite-vec's exact scan (a few milliseconds) is used. */
  exactBudget: number;
  /** Candidates rescored exactly (from the float blobs) for `limit` results at `dimensions`. */
  candidates(dimensions: number, limit: number): number;
  /** Memory the in-memory codes of all listings may take. */
  maxCacheBytes: number;
  /** Memory the metadata columns that filters are evaluated over may take; 0 evaluates each in SQL. */
  filterColumnBytes: number;
}

export const DEFAULT_DENSE_TUNING: DenseTuning = {
  exactBudget: 2_500_000,
  // Validated in `npm run bench -- --only retrieve.dense`: 100-bit codes of real embeddings (dbpedia-5k,
  // offline model) reach recall@20 0.99 at 1,000 candidates; 1,024+ bits of clustered vectors at 100-400.
  candidates: (dimensions, limit) => Math.max(dimensions >= 512 ? 400 : 1_000, limit * 8),
  maxCacheBytes: 1024 ** 3,
  // About 8.5 MB per key of a 500k-chunk knowledge base with one value per chunk.
  filterColumnBytes: 128 * 2 ** 20,
};

/**
 * The SQL of retrieval: FTS5 BM25 over `chunks_fts`, sqlite-vec KNN or exact cosine over a listing's
 * vec0 table, metadata filters as json_each conditions, and the query log.
 */
export class SqliteSearchRepository implements SearchIndex {
  private readonly codes: VectorCodeCache;
  private readonly tuning: DenseTuning;
  /** Chunk ids passing recent filters, per listing generation. */
  private readonly allowedCache = new Map<string, number[]>();
  /** Metadata keys' values per listing, to evaluate a new filter without reading every row again. */
  private readonly filterColumns: FilterColumnCache;
  /** The generation each listing's filter columns were last read ahead at. */
  private readonly prefetchedAt = new Map<string, number>();
  /** The exact distances of the last binary search's candidates, for the same query asked again. */
  private lastRescored:
    | {
        listingId: string;
        generation: number;
        model: string;
        /** The query vector's bytes (a copy). */
        vector: Buffer;
        distances: Map<number, number>;
      }
    | undefined;
  /** When the last search call returned (`performance.now()`): reading ahead waits for idle time. */
  private lastSearchAt = -Infinity;
  private readonly statements: StatementCache;
  private readonly queryLog: QueryLogWriter;
  /** The full-text postings in memory, for knowledge bases where FTS5's BM25 gets slow. */
  readonly lexical: LexicalIndexCache;
  /** The float vectors of listings searched through their codes, in flat files for rescoring (optional). */
  readonly vectorFiles: VectorFileCache | undefined;

  constructor(
    private readonly db: Db,
    tuning: Partial<DenseTuning> & { lexical?: LexicalIndexOptions; vectorFiles?: VectorFileOptions } = {},
    queryLog: QueryLogWriterOptions = {},
  ) {
    db.function('kbs_filter_number', { deterministic: true }, (type: unknown, value: unknown) =>
      filterNumber(String(type), value),
    );
    this.tuning = { ...DEFAULT_DENSE_TUNING, ...tuning };
    this.statements = new StatementCache(db);
    this.codes = new VectorCodeCache(db, { maxBytes: this.tuning.maxCacheBytes });
    this.filterColumns = new FilterColumnCache(db, (listingId) => this.codes.generation(listingId), {
      maxBytes: this.tuning.filterColumnBytes,
      lastSearchAt: () => this.lastSearchAt,
    });
    this.queryLog = new QueryLogWriter(db, queryLog);
    this.lexical = new LexicalIndexCache(db, tuning.lexical);
    this.vectorFiles =
      tuning.vectorFiles &&
      new VectorFileCache(db, (listingId) => this.codes.generation(listingId), tuning.vectorFiles);
  }

  /**
   * Loads the codes of every knowledge base large enough for the binary path, largest first, without
   * holding the event loop (a server calls this once it listens): their first queries are then warm.
   * Stops early when the cache budget is full. Resolves with the listings warmed.
   */
  async warmUp(sliceRows?: number): Promise<string[]> {
    const rows = this.sql(
      `SELECT v.listing_id AS listingId, v.model, v.dimensions, v.table_name AS tableName, l.chunk_count AS chunks
        FROM vector_indexes v JOIN listings l ON l.id = v.listing_id
        WHERE l.chunk_count * v.dimensions > ? ORDER BY l.chunk_count * v.dimensions DESC`,
    ).all(this.tuning.exactBudget) as {
      listingId: string;
      model: string;
      dimensions: number;
      tableName: string;
      chunks: number;
    }[];
    // The full-text postings are read on a worker thread meanwhile (large knowledge bases only).
    const lexical = this.lexicalBuilt();
    const warmed: typeof rows = [];
    let budget = this.tuning.maxCacheBytes;
    for (const row of rows) {
      const bytes = row.chunks * (codeBytes(row.dimensions) + 8);
      if (bytes > budget || !TABLE_NAME.test(row.tableName)) continue;
      // The codes from the listing's vectors file where it holds the current generation (a start after
      // an earlier one wrote it), else from vector_codes.
      const source = this.vectorFiles?.find(row, this.codes.generation(row.listingId));
      if (
        await this.codes.warm(row.listingId, row.model, row.dimensions, row.tableName, { sliceRows, source })
      ) {
        warmed.push(row);
        budget -= bytes;
      }
    }
    // Then the columns of the keys their recent queries filtered on.
    for (const { listingId } of warmed) {
      this.prefetchFilterColumns(listingId, this.codes.generation(listingId));
    }
    await Promise.all([this.filterColumns.settled(), lexical, this.warmVectorFiles(warmed)]);
    return warmed.map((row) => row.listingId);
  }

  /**
   * Deletes the vectors files of listings that are gone, then opens (or writes, one at a time) those of the
   * listings warmed.
   */
  private async warmVectorFiles(
    listings: { listingId: string; model: string; dimensions: number }[],
  ): Promise<void> {
    if (!this.vectorFiles) return;
    this.vectorFiles.prune(new Set(this.sql(`SELECT id FROM listings`).pluck().all() as string[]));
    for (const { listingId, model, dimensions } of listings) {
      await this.vectorFiles.ensure({ listingId, model, dimensions });
    }
  }

  searchReady(
    listingId: string,
    model: string,
    parts: { lexical: boolean; dense: boolean },
  ): Promise<void> | undefined {
    const waits = [
      parts.lexical ? this.lexical.savedLoad() : undefined,
      parts.dense ? this.codes.warming(listingId, model, CODES_WARM_WAIT_MS) : undefined,
    ].filter((wait) => wait !== undefined);
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => undefined);
  }

  /** Resolves once the full-text postings being read are read (true: current ones are held). */
  lexicalBuilt(): Promise<boolean> {
    return this.chunkRows() >= this.lexical.minRows ? this.lexical.build() : Promise.resolve(false);
  }

  private chunkRows(): number {
    return this.sql(`SELECT count(*) FROM chunks`).pluck().get() as number;
  }

  /** The in-memory postings and the terms of the phrases, when both can answer (else FTS5 does). */
  private postingsFor(phrases: string[]): { postings: LexicalPostings; terms: string[] } | undefined {
    const postings = this.lexical.postings(() => this.chunkRows());
    const terms = postings && this.lexical.terms(phrases);
    return postings && terms ? { postings, terms } : undefined;
  }

  /** Resolves once the metadata columns being read for filters are read (benchmarks and tests). */
  filterColumnsRead(): Promise<void> {
    return this.filterColumns.settled();
  }

  /** How the next dense search of a listing would run (benchmarks and tests). */
  densePlan(listingId: string, model: string): 'exact' | 'binary' {
    const index = this.vectorIndex(listingId, model);
    return index && this.codeSet(listingId, model, index) ? 'binary' : 'exact';
  }

  startLexicalSearch(
    listingId: string,
    phrases: string[],
    filters: FieldFilter[],
    limit: number,
  ): () => LexicalHit[] {
    const held = phrases.length > 0 ? this.postingsFor(phrases) : undefined;
    if (!held) return () => this.lexicalSearch(listingId, phrases, filters, limit);
    this.lastSearchAt = performance.now();
    const allowed = this.allowedPositions(held.postings, listingId, filters);
    return this.lexical.startSearch(held.postings, { terms: held.terms, listingId, limit, allowed });
  }

  /** The postings' positions a filter allows (undefined: no filter). */
  private allowedPositions(
    postings: LexicalPostings,
    listingId: string,
    filters: FieldFilter[],
  ): Uint8Array | undefined {
    if (filters.length === 0) return undefined;
    return postings.mask(this.allowedIds(listingId, this.codes.generation(listingId), filters));
  }

  lexicalSearch(listingId: string, phrases: string[], filters: FieldFilter[], limit: number): LexicalHit[] {
    this.lastSearchAt = performance.now();
    if (phrases.length === 0) return [];
    const held = this.postingsFor(phrases);
    if (held) {
      const allowed = this.allowedPositions(held.postings, listingId, filters);
      return held.postings.search(held.terms, listingId, limit, allowed);
    }
    const where = filterSql(filters);
    const filtered = andFilters(where);
    const window = this.rowidWindow(listingId);
    if (window) {
      return this.sql(
        `SELECT c.id AS id, -bm25(chunks_fts) AS bm25
          FROM chunks_fts CROSS JOIN chunks c ON c.id = chunks_fts.rowid
          WHERE chunks_fts MATCH ? AND chunks_fts.rowid >= ? AND chunks_fts.rowid <= ?
            AND c.listing_id = ?${filtered}
          ORDER BY bm25 DESC, c.id LIMIT ?`,
      ).all(phrases.join(' OR '), window.from, window.to, listingId, ...where.params, limit) as LexicalHit[];
    }
    return this.sql(
      `SELECT c.id AS id, -bm25(chunks_fts) AS bm25
        FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
        WHERE chunks_fts MATCH ? AND c.listing_id = ?${filtered}
        ORDER BY bm25 DESC, c.id LIMIT ?`,
    ).all(phrases.join(' OR '), listingId, ...where.params, limit) as LexicalHit[];
  }

  /**
   * The rowids a listing's chunks lie between, when it shares the full-text index with other listings
   * (undefined when it holds every row). Its chunks are written together, so their rowids lie close:
   * FTS5 then reads only that stretch of each word's postings. A word common in another, larger listing
   * cost this one 100–300 ms a query at 500,000 rows, 10–40 ms within the window (docs/performance.md).
   * CROSS JOIN keeps the full-text scan outside: with the join reversed, FTS5 would run once per chunk.
   */
  private rowidWindow(
    listingId: string,
    rows = this.sql(`SELECT count(*) FROM chunks`).pluck().get() as number,
  ): { from: number; to: number } | undefined {
    const own = this.sql(`SELECT chunk_count FROM listings WHERE id = ?`).pluck().get(listingId) as
      number | undefined;
    if (own === undefined || own >= rows) return undefined;
    // Two subqueries: SQLite answers each min() or max() alone with one index seek, both at once by a scan.
    const window = this.sql(
      `SELECT (SELECT min(id) FROM chunks WHERE listing_id = ?) AS "from",
        (SELECT max(id) FROM chunks WHERE listing_id = ?) AS "to"`,
    ).get(listingId, listingId) as { from: number | null; to: number | null };
    // A listing without chunks: an empty window, in which nothing is found.
    return { from: window.from ?? 1, to: window.to ?? 0 };
  }

  lexicalScores(phrases: string[], ids: number[]): LexicalHit[] {
    if (phrases.length === 0 || ids.length === 0) return [];
    const held = this.postingsFor(phrases);
    if (held) return held.postings.scoresOf(held.terms, ids);
    // `+rowid`: a plain rowid constraint would make FTS5 rerun the whole query once per id. The range
    // it does use: only that stretch of each phrase's postings is read (see rowidWindow).
    let from = ids[0]!;
    let to = from;
    for (const id of ids) {
      if (id < from) from = id;
      else if (id > to) to = id;
    }
    return this.sql(
      `SELECT rowid AS id, -bm25(chunks_fts) AS bm25 FROM chunks_fts
        WHERE chunks_fts MATCH ? AND rowid >= ? AND rowid <= ? AND +rowid IN (SELECT value FROM json_each(?))`,
    ).all(phrases.join(' OR '), from, to, idsParam(ids)) as LexicalHit[];
  }

  lexicalStats(phrases: string[], listingId: string): LexicalStats {
    const inMemory = this.postingsFor(phrases);
    if (inMemory) {
      // Exact counts (the postings' lengths), which LexicalStats allows for every phrase.
      const { postings, terms } = inMemory;
      const docFreq = terms.map((t) => postings.docFreq(t));
      if (postings.listingChunks(listingId) >= postings.rows) return { rows: postings.rows, docFreq };
      const inListing = heldInListing(docFreq, postings.rows, (i) =>
        postings.inListing(terms[i]!, listingId),
      );
      return { rows: postings.rows, docFreq, inListing };
    }
    const rows = this.chunkRows();
    // Counting stops at half the rows: past that a phrase has no weight, and the exact count is not needed.
    const cap = Math.ceil(rows / 2);
    const count = this.sql(
      `SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)`,
    ).pluck();
    const docFreq = phrases.map((p) => count.get(p, cap) as number);
    // The listing holds every row (no window): what the index holds, it holds.
    const window = this.rowidWindow(listingId, rows);
    if (!window) return { rows, docFreq };
    // Else each weighing phrase is looked for in the listing: its first match there ends the look.
    const held = this.sql(
      `SELECT EXISTS (SELECT 1 FROM chunks_fts CROSS JOIN chunks c ON c.id = chunks_fts.rowid
        WHERE chunks_fts MATCH ? AND chunks_fts.rowid >= ? AND chunks_fts.rowid <= ? AND c.listing_id = ?)`,
    ).pluck();
    const inListing = heldInListing(
      docFreq,
      rows,
      (i) => held.get(phrases[i], window.from, window.to, listingId) === 1,
    );
    return { rows, docFreq, inListing };
  }

  denseSearch(
    listingId: string,
    model: string,
    vector: Float32Array,
    filters: FieldFilter[],
    limit: number,
    whenAlone?: () => void,
  ): DenseHit[] {
    this.lastSearchAt = performance.now();
    const index = this.vectorIndex(listingId, model);
    if (!index) {
      whenAlone?.();
      return [];
    }
    const codes = this.codeSet(listingId, model, index);
    // The exact path is one thread's throughout.
    if (!codes) whenAlone?.();
    const hits = codes
      ? this.binarySearch(listingId, codes, model, vector, filters, limit, whenAlone)
      : this.exactSearch(listingId, index, vector, filters, limit);
    if (hits.length >= limit) return hits;
    // Fewer chunks with a vector than asked for (a small knowledge base, a selective filter): the chunks
    // without one (a text with no word the model knows) follow, at distance 1, a similarity of 0, as
    // cosineSimilarity counts a zero vector. So topK chunks come back whenever that many pass the filter.
    const allowed =
      codes && filters.length > 0
        ? this.allowedIds(listingId, this.codes.generation(listingId), filters)
        : undefined;
    const without = this.withoutVector(listingId, model, index, filters, limit - hits.length, allowed);
    return [...hits, ...without.map((id) => ({ id, distance: 1 }))];
  }

  firstChunks(listingId: string, filters: FieldFilter[], limit: number): number[] {
    const where = filterSql(filters);
    return this.sql(
      `SELECT c.id FROM chunks c WHERE c.listing_id = ?${andFilters(where)}
        ORDER BY c.id LIMIT ?`,
    )
      .pluck()
      .all(listingId, ...where.params, limit) as number[];
  }

  /** sqlite-vec's exact KNN over the listing's vec0 table. */
  private exactSearch(
    listingId: string,
    index: VectorIndex,
    vector: Float32Array,
    filters: FieldFilter[],
    limit: number,
  ): DenseHit[] {
    const table = index.table;
    if (filters.length === 0) {
      return this.sql(`SELECT rowid AS id, distance FROM ${table} WHERE embedding MATCH ? AND k = ?`).all(
        vectorParam(vector),
        limit,
      ) as DenseHit[];
    }
    // The filter runs inside the KNN (sqlite-vec takes a rowid set), so topK results come back whenever
    // that many chunks pass it, however far they are from the query.
    const where = filterSql(filters);
    return this.sql(
      `SELECT rowid AS id, distance FROM ${table} WHERE embedding MATCH ? AND k = ?
        AND rowid IN (SELECT c.id FROM chunks c WHERE c.listing_id = ? AND ${where.sql})`,
    ).all(vectorParam(vector), limit, listingId, ...where.params) as DenseHit[];
  }

  denseLimitAtCost(listingId: string, model: string, limit: number): number {
    const index = this.vectorIndex(listingId, model);
    // sqlite-vec's exact scan costs the same for any k; no vector index: nothing to search.
    if (!index || !this.binaryPays(listingId, index)) return Infinity;
    // The binary first pass rescores candidates(dimensions, limit): a floor of a few hundred, then 8 a hit.
    const rescored = this.tuning.candidates(index.dimensions, limit);
    let wider = limit;
    while (wider < MAX_LIMIT_AT_COST && this.tuning.candidates(index.dimensions, wider + 1) <= rescored)
      wider++;
    return wider;
  }

  denseScores(listingId: string, model: string, vector: Float32Array, ids: number[]): DenseHit[] {
    const index = this.vectorIndex(listingId, model);
    if (!index || ids.length === 0) return [];
    const query = vectorParam(vector);
    // Chunks the same query's dense search rescored (a full-text hit among its candidates, not in its
    // pool) already have their distance; the others are read.
    const generation = this.codes.generation(listingId);
    const known = this.lastDistances(listingId, generation, model, vector);
    // The float blobs by chunk id first (one B-tree lookup each); vec0 point reads (a vector chunk each,
    // about a millisecond at 1,024 dimensions) only for vectors written before those blobs existed.
    const unknown = known ? ids.filter((id) => !known.has(id)) : ids;
    const file = this.vectorFiles?.held({ listingId, model, dimensions: index.dimensions }, generation);
    const found = new Map(this.exactDistances(model, vector, unknown, file).map((h) => [h.id, h.distance]));
    const distance = this.sql(
      `SELECT vec_distance_cosine(embedding, ?) FROM ${index.table} WHERE rowid = ?`,
    ).pluck();
    return ids.flatMap((id) => {
      const d =
        known?.get(id) ?? (found.has(id) ? found.get(id) : (distance.get(query, id) as number | undefined));
      return d === undefined || d === null ? [] : [{ id, distance: d }];
    });
  }

  chunks(ids: number[]): StoredChunk[] {
    // A search's last call: reading ahead counts its idle time from here.
    this.lastSearchAt = performance.now();
    if (ids.length === 0) return [];
    const rows = this.sql(
      `SELECT id, text, metadata FROM chunks WHERE id IN (SELECT value FROM json_each(?))`,
    ).all(idsParam(ids)) as { id: number; text: string; metadata: string }[];
    return rows.map((r) => ({
      id: r.id,
      text: r.text,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    }));
  }

  logQuery(entry: QueryLogEntry): void {
    this.queryLog.write(entry);
  }

  /** Writes the query log rows kept while another writer held the lock. */
  close(): void {
    this.queryLog.close();
    this.lexical.close();
    this.vectorFiles?.close();
  }

  private vectorIndex(listingId: string, model: string): VectorIndex | undefined {
    const row = this.sql(
      `SELECT table_name AS tableName, dimensions FROM vector_indexes WHERE listing_id = ? AND model = ?`,
    ).get(listingId, model) as { tableName: string; dimensions: number } | undefined;
    if (!row) return undefined;
    if (!TABLE_NAME.test(row.tableName)) throw new Error(`unexpected vector table name ${row.tableName}`);
    return { table: row.tableName, dimensions: row.dimensions };
  }

  /**
   * The listing's in-memory codes when the binary first pass pays: sqlite-vec's exact scan costs about
   * chunks × dimensions, so below `exactBudget` it stays (and nothing is loaded).
   */
  private codeSet(listingId: string, model: string, index: VectorIndex): CodeSet | null {
    if (!this.binaryPays(listingId, index)) return null;
    return this.codes.get(listingId, model, index.dimensions, index.table);
  }

  /** Whether the listing is past the exact budget (chunks × dimensions). */
  private binaryPays(listingId: string, index: VectorIndex): boolean {
    const chunks = this.sql(`SELECT chunk_count FROM listings WHERE id = ?`).pluck().get(listingId) as
      number | undefined;
    return chunks !== undefined && chunks * index.dimensions > this.tuning.exactBudget;
  }

  /**
   * Binary first pass, exact rescoring: the `candidates` chunks whose sign codes are nearest to the
   * query's (among those passing the filter), then their true cosine distances from the float blobs.
   * A filter that keeps fewer chunks than that is searched exactly over just those chunks.
   */
  private binarySearch(
    listingId: string,
    codes: CodeSet,
    model: string,
    vector: Float32Array,
    filters: FieldFilter[],
    limit: number,
    whenAlone?: () => void,
  ): DenseHit[] {
    const generation = this.codes.generation(listingId);
    // Each change of the knowledge base drops its columns: those its queries filter on are read again.
    this.prefetchFilterColumns(listingId, generation);
    const candidates = this.tuning.candidates(codes.dimensions, limit);
    const allowed = filters.length > 0 ? this.allowedIds(listingId, generation, filters) : undefined;
    // The nearest chunks passing a selective filter are farther from the query, where sign codes rank
    // less sharply: 1% of 500k clustered vectors gave recall@20 0.89-0.92 at 400 candidates.
    const wanted = allowed ? candidates * FILTERED_CANDIDATES_FACTOR : candidates;
    const ids = allowed && allowed.length <= wanted ? allowed : codes.nearest(vector, wanted, allowed);
    // The scan (split over two threads for large code sets) is done; rescoring is this thread's alone.
    whenAlone?.();
    return this.rescored(listingId, generation, model, vector, ids)
      .sort((a, b) => a.distance - b.distance || a.id - b.id)
      .slice(0, limit);
  }

  /**
   * exactDistances of the candidates, those of the last search's that the same query asks again (hybrid
   * widening its dense pool: the wider shortlist holds the narrower) taken from it rather than read again.
   */
  private rescored(
    listingId: string,
    generation: number,
    model: string,
    vector: Float32Array,
    ids: readonly number[],
  ): DenseHit[] {
    const known = this.lastDistances(listingId, generation, model, vector) ?? new Map<number, number>();
    // The vectors file once it holds this generation (one read a candidate), else SQLite.
    const file = this.vectorFiles?.current({ listingId, model, dimensions: vector.length }, generation);
    const hits = this.exactDistances(
      model,
      vector,
      ids.filter((id) => !known.has(id)),
      file,
    );
    for (const hit of hits) known.set(hit.id, hit.distance);
    this.lastRescored = {
      listingId,
      generation,
      model,
      vector: Buffer.from(vectorParam(vector)),
      distances: known,
    };
    return ids.flatMap((id) => {
      const distance = known.get(id);
      return distance === undefined ? [] : [{ id, distance }];
    });
  }

  /** The exact distances the last rescoring read, when it was for this query over this knowledge base. */
  private lastDistances(
    listingId: string,
    generation: number,
    model: string,
    vector: Float32Array,
  ): Map<number, number> | undefined {
    const last = this.lastRescored;
    const same =
      last !== undefined &&
      last.listingId === listingId &&
      last.generation === generation &&
      last.model === model &&
      last.vector.equals(vectorParam(vector));
    return same ? last.distances : undefined;
  }

  /**
   * sqlite-vec's cosine distance (the same function as its KNN) of the given chunks' float blobs, read from
   * the listing's vectors file when one is given and reads whole (the same floats, the same arithmetic).
   */
  private exactDistances(
    model: string,
    vector: Float32Array,
    ids: readonly number[],
    file?: VectorFile,
  ): DenseHit[] {
    if (ids.length === 0) return [];
    const fromFile = file?.distances(vector, ids);
    if (fromFile) return fromFile;
    return this.sql(
      `SELECT chunk_id AS id, vec_distance_cosine(vector, ?) AS distance FROM embeddings
        WHERE chunk_id IN (SELECT value FROM json_each(?)) AND model = ?`,
    ).all(vectorParam(vector), JSON.stringify(ids), model) as DenseHit[];
  }

  private sql(text: string) {
    return this.statements.get(text);
  }

  /** Ids of the listing's chunks passing `filters`, ascending; the last few filters' results are kept. */
  private allowedIds(listingId: string, generation: number, filters: FieldFilter[]): number[] {
    const key = `${listingId}\u0000${generation}\u0000${JSON.stringify(filters)}`;
    const cached = this.allowedCache.get(key);
    if (cached) {
      this.allowedCache.delete(key);
      this.allowedCache.set(key, cached);
      return cached;
    }
    const ids =
      (this.tuning.filterColumnBytes > 0
        ? this.filterColumns.allowedIds(listingId, generation, filters)
        : undefined) ?? this.allowedIdsInSql(listingId, filters);
    this.allowedCache.set(key, ids);
    if (this.allowedCache.size > ALLOWED_CACHE_SIZE) {
      this.allowedCache.delete(this.allowedCache.keys().next().value!);
    }
    return ids;
  }

  /**
   * Starts reading, in the background, the columns of the metadata keys the listing's latest logged
   * queries filtered on, once per knowledge-base generation: after a restart or a change, the first
   * filter on such a key need not be answered in SQL (about 0.4-0.7 s at 500k chunks).
   */
  private prefetchFilterColumns(listingId: string, generation: number): void {
    if (this.tuning.filterColumnBytes <= 0) return;
    if (this.prefetchedAt.get(listingId) === generation) return;
    this.prefetchedAt.set(listingId, generation);
    // A malformed row (written by hand) is passed over rather than failing the query that asks.
    const keys = this.sql(
      `SELECT k.value FROM (SELECT filter_keys, created_at FROM query_log WHERE listing_id = ?
          ORDER BY created_at DESC LIMIT ?) AS q,
          json_each(CASE WHEN json_valid(q.filter_keys) THEN q.filter_keys END) AS k
        WHERE k.type = 'text'
        GROUP BY k.value ORDER BY max(q.created_at) DESC, k.value LIMIT ?`,
    )
      .pluck()
      .all(listingId, PREFETCH_QUERIES, PREFETCH_KEYS) as string[];
    this.filterColumns.prefetch(listingId, generation, keys);
  }

  /**
   * Up to `limit` of the listing's chunks passing `filters` (or among `allowed`, their ids when known)
   * that have no vector under `model`, by id. Vectors are in the float blobs, and in vec0 alone for
   * chunks written before those existed.
   */
  private withoutVector(
    listingId: string,
    model: string,
    index: VectorIndex,
    filters: FieldFilter[],
    limit: number,
    allowed: number[] | undefined,
  ): number[] {
    const noVector = `NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id AND e.model = ?)
        AND NOT EXISTS (SELECT 1 FROM ${index.table} v WHERE v.rowid = c.id)`;
    if (allowed !== undefined) {
      return this.sql(
        `SELECT c.id FROM chunks c WHERE c.id IN (SELECT value FROM json_each(?)) AND ${noVector}
          ORDER BY c.id LIMIT ?`,
      )
        .pluck()
        .all(idsParam(allowed), model, limit) as number[];
    }
    const where = filterSql(filters);
    return this.sql(
      `SELECT c.id FROM chunks c WHERE c.listing_id = ?${andFilters(where)}
        AND ${noVector} ORDER BY c.id LIMIT ?`,
    )
      .pluck()
      .all(listingId, ...where.params, model, limit) as number[];
  }

  /** The same ids as filterSql selects them, every chunk's metadata read again. */
  private allowedIdsInSql(listingId: string, filters: FieldFilter[]): number[] {
    const where = filterSql(filters);
    return this.sql(`SELECT c.id FROM chunks c WHERE c.listing_id = ? AND ${where.sql} ORDER BY c.id`)
      .pluck()
      .all(listingId, ...where.params) as number[];
  }
}

/**
 * Per phrase, whether the listing holds it (`holds(i)`, asked only where it matters): a phrase in no row
 * is held nowhere, and one in half the rows or more weighs nothing, so its presence is not asked.
 */
function heldInListing(docFreq: number[], rows: number, holds: (i: number) => boolean): boolean[] {
  const half = Math.ceil(rows / 2);
  return docFreq.map((n, i) => n > 0 && (n >= half || holds(i)));
}

/** Filters as SQL over the chunk row `c`: only fixed fragments in the text, every value a parameter. */
export function filterSql(filters: FieldFilter[]): Sql {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const field of filters) {
    // A JSON path label in double quotes with JSON escapes reaches any key, dots and quotes included.
    const path = `$.${JSON.stringify(field.key)}`;
    for (const condition of field.conditions) {
      const part = conditionSql(path, condition);
      parts.push(part.sql);
      params.push(...part.params);
    }
  }
  return { sql: parts.join(' AND '), params };
}

function conditionSql(path: string, condition: FilterCondition): Sql {
  switch (condition.op) {
    case 'exists':
      return { sql: `json_type(c.metadata, ?) IS ${condition.value ? 'NOT ' : ''}NULL`, params: [path] };
    case 'eq':
      return anyElement(path, equalsSql(condition.value));
    case 'ne':
      return negate(anyElement(path, equalsSql(condition.value)));
    case 'in':
      return anyElement(path, oneOfSql(condition.values));
    case 'nin':
      return negate(anyElement(path, oneOfSql(condition.values)));
    default: {
      const op = COMPARATORS[condition.op];
      return anyElement(
        path,
        typeof condition.value === 'number'
          ? numberSql(`${op} ?`, [condition.value])
          : { sql: `(m.type = 'text' AND m.value ${op} ?)`, params: [condition.value] },
      );
    }
  }
}

/**
 * True when the value at `path` satisfies `element` — or, for an array, when any of its elements does
 * (`tags: ['a', 'b']` matches `{"tags": "a"}`). json_each yields the value itself for a scalar.
 */
function anyElement(path: string, element: Sql): Sql {
  return {
    sql: `EXISTS (SELECT 1 FROM json_each(c.metadata, ?) AS m WHERE ${element.sql})`,
    params: [path, ...element.params],
  };
}

const negate = (inner: Sql): Sql => ({ sql: `NOT ${inner.sql}`, params: inner.params });

/**
 * The element `m` as a number, then `test` (`= ?`, `> ?`, `IN (?, ?)`): a JSON number is compared in
 * SQL, and only text goes through kbs_filter_number (numeric text, a CSV's "7"). A JavaScript call for
 * every chunk was a third of a first filter's scan: 500,000 chunks, 338-432 ms against 221-259 ms.
 */
function numberSql(test: string, params: unknown[]): Sql {
  return {
    sql: `((m.type IN ('integer', 'real') AND m.value ${test}) OR (m.type = 'text' AND kbs_filter_number(m.type, m.value) ${test}))`,
    params: [...params, ...params],
  };
}

function equalsSql(value: FilterScalar): Sql {
  if (typeof value === 'boolean') return { sql: `m.type = '${value ? 'true' : 'false'}'`, params: [] };
  if (typeof value === 'number') return numberSql('= ?', [value]);
  return { sql: `(m.type = 'text' AND m.value = ?)`, params: [value] };
}

function oneOfSql(values: FilterScalar[]): Sql {
  const strings = values.filter((v): v is string => typeof v === 'string');
  const numbers = values.filter((v): v is number => typeof v === 'number');
  const booleans = [...new Set(values.filter((v): v is boolean => typeof v === 'boolean'))];
  const parts: string[] = [];
  const params: unknown[] = [];
  const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
  if (strings.length > 0) {
    parts.push(`(m.type = 'text' AND m.value IN (${marks(strings.length)}))`);
    params.push(...strings);
  }
  if (numbers.length > 0) {
    const test = numberSql(`IN (${marks(numbers.length)})`, numbers);
    parts.push(test.sql);
    params.push(...test.params);
  }
  if (booleans.length > 0) parts.push(`m.type IN (${booleans.map((b) => `'${b}'`).join(', ')})`);
  return { sql: parts.length > 0 ? `(${parts.join(' OR ')})` : '0', params };
}
