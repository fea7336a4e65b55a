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
import type { Db } from '../open';
import { applyQueryCharge } from './credentials';

interface Sql {
  sql: string;
  params: unknown[];
}

const vectorParam = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const idsParam = (ids: number[]) => JSON.stringify(ids);
/** vec0 table names come from vector_indexes; checked anyway before they are put into SQL. */
const TABLE_NAME = /^vec_[A-Za-z0-9_]+$/;
const COMPARATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/**
 * The SQL of retrieval: FTS5 BM25 over `chunks_fts`, sqlite-vec KNN or exact cosine over a listing's
 * vec0 table, metadata filters as json_each conditions, and the query log.
 */
export class SqliteSearchRepository implements SearchIndex {
  constructor(private readonly db: Db) {
    db.function('kbs_filter_number', { deterministic: true }, (type: unknown, value: unknown) =>
      filterNumber(String(type), value),
    );
  }

  lexicalSearch(listingId: string, phrases: string[], filters: FieldFilter[], limit: number): LexicalHit[] {
    if (phrases.length === 0) return [];
    const where = filterSql(filters);
    return this.db
      .prepare(
        `SELECT c.id AS id, -bm25(chunks_fts) AS bm25
        FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
        WHERE chunks_fts MATCH ? AND c.listing_id = ?${where.sql ? ` AND ${where.sql}` : ''}
        ORDER BY bm25 DESC, c.id LIMIT ?`,
      )
      .all(phrases.join(' OR '), listingId, ...where.params, limit) as LexicalHit[];
  }

  lexicalScores(phrases: string[], ids: number[]): LexicalHit[] {
    if (phrases.length === 0 || ids.length === 0) return [];
    return (
      this.db
        // `+rowid`: a plain rowid constraint would make FTS5 rerun the whole query once per id.
        .prepare(
          `SELECT rowid AS id, -bm25(chunks_fts) AS bm25 FROM chunks_fts
        WHERE chunks_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))`,
        )
        .all(phrases.join(' OR '), idsParam(ids)) as LexicalHit[]
    );
  }

  lexicalStats(phrases: string[]): LexicalStats {
    const rows = this.db.prepare(`SELECT count(*) FROM chunks`).pluck().get() as number;
    // Counting stops at half the rows: past that a phrase has no weight, and the exact count is not needed.
    const cap = Math.ceil(rows / 2);
    const count = this.db
      .prepare(`SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)`)
      .pluck();
    return { rows, docFreq: phrases.map((p) => count.get(p, cap) as number) };
  }

  denseSearch(
    listingId: string,
    model: string,
    vector: Float32Array,
    filters: FieldFilter[],
    limit: number,
  ): DenseHit[] {
    const table = this.vectorTable(listingId, model);
    if (!table) return [];
    if (filters.length === 0) {
      return this.db
        .prepare(`SELECT rowid AS id, distance FROM ${table} WHERE embedding MATCH ? AND k = ?`)
        .all(vectorParam(vector), limit) as DenseHit[];
    }
    // The filter runs inside the KNN (sqlite-vec takes a rowid set), so topK results come back whenever
    // that many chunks pass it, however far they are from the query.
    const where = filterSql(filters);
    return this.db
      .prepare(
        `SELECT rowid AS id, distance FROM ${table} WHERE embedding MATCH ? AND k = ?
        AND rowid IN (SELECT c.id FROM chunks c WHERE c.listing_id = ? AND ${where.sql})`,
      )
      .all(vectorParam(vector), limit, listingId, ...where.params) as DenseHit[];
  }

  denseScores(listingId: string, model: string, vector: Float32Array, ids: number[]): DenseHit[] {
    const table = this.vectorTable(listingId, model);
    if (!table || ids.length === 0) return [];
    // One point lookup per id: reading a few vectors beats any statement that scans the whole vec0 table.
    const distance = this.db
      .prepare(`SELECT vec_distance_cosine(embedding, ?) FROM ${table} WHERE rowid = ?`)
      .pluck();
    const query = vectorParam(vector);
    return ids.flatMap((id) => {
      const d = distance.get(query, id) as number | undefined;
      return d === undefined || d === null ? [] : [{ id, distance: d }];
    });
  }

  chunks(ids: number[]): StoredChunk[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT id, text, metadata FROM chunks WHERE id IN (SELECT value FROM json_each(?))`)
      .all(idsParam(ids)) as { id: number; text: string; metadata: string }[];
    return rows.map((r) => ({
      id: r.id,
      text: r.text,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    }));
  }

  logQuery(entry: QueryLogEntry): void {
    const insert = this.db.prepare(
      `INSERT INTO query_log (id, listing_id, api_key_id, wallet, query, top_k, result_count, latency_ms,
        debited_lamports, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // One transaction: the debit happens exactly when the row is written, never without it or twice.
    this.db.transaction(() => {
      if (entry.charge) applyQueryCharge(this.db, entry.charge, entry.createdAt);
      insert.run(
        entry.id,
        entry.listingId,
        entry.apiKeyId,
        entry.wallet,
        entry.query,
        entry.topK,
        entry.resultCount,
        entry.latencyMs,
        entry.charge?.lamports ?? 0,
        entry.createdAt,
      );
    })();
  }

  private vectorTable(listingId: string, model: string): string | undefined {
    const table = this.db
      .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ? AND model = ?`)
      .pluck()
      .get(listingId, model) as string | undefined;
    if (table !== undefined && !TABLE_NAME.test(table))
      throw new Error(`unexpected vector table name ${table}`);
    return table;
  }
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
          ? { sql: `kbs_filter_number(m.type, m.value) ${op} ?`, params: [condition.value] }
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

function equalsSql(value: FilterScalar): Sql {
  if (typeof value === 'boolean') return { sql: `m.type = '${value ? 'true' : 'false'}'`, params: [] };
  if (typeof value === 'number') return { sql: `kbs_filter_number(m.type, m.value) = ?`, params: [value] };
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
    parts.push(`kbs_filter_number(m.type, m.value) IN (${marks(numbers.length)})`);
    params.push(...numbers);
  }
  if (booleans.length > 0) parts.push(`m.type IN (${booleans.map((b) => `'${b}'`).join(', ')})`);
  return { sql: parts.length > 0 ? `(${parts.join(' OR ')})` : '0', params };
}
