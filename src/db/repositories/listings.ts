import type { ListingRecord, ListingRepository, ListingSearch } from '../../core/marketplace/listings';
import type { Page } from '../../shared/pagination';
import type { Db } from '../open';
import { deleteListingRows } from './deleteRows.mjs';

interface ListingRow {
  id: string;
  title: string;
  description: string;
  domain: string;
  tags: string;
  access_model: ListingRecord['accessModel'];
  price_lamports: number;
  subscription_days: number | null;
  rating: number;
  rating_count: number;
  creator_wallet: string;
  status: ListingRecord['status'];
  retrieval_rate_limit: number;
  retrieval_dense_weight: number | null;
  embedding_model: string;
  dimensions: number;
  document_count: number;
  chunk_count: number;
  pda_address: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = `l.id, l.title, l.description, l.domain, l.tags, l.access_model, l.price_lamports,
  l.subscription_days, l.rating, l.rating_count, l.creator_wallet, l.status, l.retrieval_rate_limit, l.retrieval_dense_weight,
  l.embedding_model, l.dimensions, l.document_count, l.chunk_count, l.pda_address, l.created_at, l.updated_at`;

// Column weights for bm25(): title, description, domain, tags.
const ORDER_BY: Record<ListingSearch['sort'], string> = {
  relevance: 'bm25(listings_fts, 5.0, 1.0, 2.0, 3.0), l.seq DESC',
  rating: 'l.rating DESC, l.rating_count DESC, l.seq DESC',
  price_asc: 'l.price_lamports ASC, l.seq DESC',
  price_desc: 'l.price_lamports DESC, l.seq DESC',
  newest: 'l.seq DESC',
};

/**
 * Turns free text into an FTS5 query: every word must match (AND), as a prefix so partial words
 * find results while typing. Words are quoted, so FTS5 syntax in user input is inert.
 */
export function toFtsQuery(text: string): string | undefined {
  const words = text.match(/[\p{L}\p{N}]+/gu);
  if (!words) return undefined;
  return words
    .slice(0, 32)
    .map((w) => `"${w}"*`)
    .join(' ');
}

export class SqliteListingRepository implements ListingRepository {
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly byIdStmt;

  constructor(private readonly db: Db) {
    db.function('kbs_fold', { deterministic: true }, (text: unknown) =>
      typeof text === 'string' ? text.normalize('NFC').toLowerCase() : text,
    );
    this.insertStmt = db.prepare(`
      INSERT INTO listings (id, title, description, domain, tags, access_model, price_lamports,
        subscription_days, rating, rating_count, creator_wallet, status, retrieval_rate_limit, retrieval_dense_weight,
        embedding_model, dimensions, document_count, chunk_count, pda_address, created_at, updated_at)
      VALUES (@id, @title, @description, @domain, @tags, @access_model, @price_lamports,
        @subscription_days, @rating, @rating_count, @creator_wallet, @status, @retrieval_rate_limit, @retrieval_dense_weight,
        @embedding_model, @dimensions, @document_count, @chunk_count, @pda_address, @created_at, @updated_at)`);
    this.updateStmt = db.prepare(`
      UPDATE listings SET title = @title, description = @description, domain = @domain, tags = @tags,
        access_model = @access_model, price_lamports = @price_lamports, subscription_days = @subscription_days,
        rating = @rating, rating_count = @rating_count, status = @status,
        retrieval_rate_limit = @retrieval_rate_limit, retrieval_dense_weight = @retrieval_dense_weight,
        embedding_model = @embedding_model,
        dimensions = @dimensions, pda_address = @pda_address, updated_at = @updated_at
      WHERE id = @id`);
    this.byIdStmt = db.prepare(`SELECT ${COLUMNS} FROM listings l WHERE l.id = ?`);
  }

  insert(record: ListingRecord): void {
    this.insertStmt.run(toRow(record));
  }

  update(record: ListingRecord): void {
    this.updateStmt.run(toRow(record));
  }

  delete(id: string): void {
    // Cascades to documents, chunks (whose trigger clears chunks_fts), credentials, eval runs, vector_indexes.
    this.db.transaction(() => deleteListingRows(this.db, id))();
  }

  findById(id: string): ListingRecord | undefined {
    const row = this.byIdStmt.get(id) as ListingRow | undefined;
    return row && fromRow(row);
  }

  search(s: ListingSearch): Page<ListingRecord> {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    const fts = s.q ? toFtsQuery(s.q) : undefined;
    // A query with no letter or digit ('!!!') matches no listing, as any other query no listing holds;
    // only an absent or blank one lists them all.
    if (s.q && !fts) return { items: [], total: 0, limit: s.limit, offset: s.offset };
    let from = 'listings l';
    if (fts) {
      from = 'listings_fts JOIN listings l ON l.seq = listings_fts.rowid';
      where.push('listings_fts MATCH @fts');
      params.fts = fts;
    }
    if (s.viewerWallet !== undefined) {
      where.push(`(l.status = 'published' OR l.creator_wallet = @viewer)`);
      params.viewer = s.viewerWallet;
    }
    if (s.domain) {
      // Case ignored beyond ASCII (NOCASE folds A-Z only: 'MÉDECINE' missed 'Médecine').
      where.push('kbs_fold(l.domain) = kbs_fold(@domain)');
      params.domain = s.domain;
    }
    if (s.accessModel) {
      where.push('l.access_model = @accessModel');
      params.accessModel = s.accessModel;
    }
    if (s.maxPriceLamports !== undefined) {
      where.push('l.price_lamports <= @maxPrice');
      params.maxPrice = s.maxPriceLamports;
    }
    if (s.minRating !== undefined) {
      where.push('l.rating >= @minRating');
      params.minRating = s.minRating;
    }
    const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
    // bm25() only exists with a MATCH; without a query "relevance" falls back to newest first.
    const order = s.sort === 'relevance' && !fts ? ORDER_BY.newest : ORDER_BY[s.sort];
    const total = (
      this.db.prepare(`SELECT count(*) AS n FROM ${from} ${whereSql}`).get(params) as { n: number }
    ).n;
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} FROM ${from} ${whereSql} ORDER BY ${order} LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: s.limit, offset: s.offset }) as ListingRow[];
    return { items: rows.map(fromRow), total, limit: s.limit, offset: s.offset };
  }
}

function toRow(r: ListingRecord): ListingRow {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    domain: r.domain,
    tags: JSON.stringify(r.tags),
    access_model: r.accessModel,
    price_lamports: r.priceLamports,
    subscription_days: r.subscriptionDays,
    rating: r.rating,
    rating_count: r.ratingCount,
    creator_wallet: r.creatorWallet,
    status: r.status,
    retrieval_rate_limit: r.retrievalRateLimit,
    retrieval_dense_weight: r.retrievalDenseWeight,
    embedding_model: r.embeddingModel,
    dimensions: r.dimensions,
    document_count: r.documentCount,
    chunk_count: r.chunkCount,
    pda_address: r.pdaAddress,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

function fromRow(row: ListingRow): ListingRecord {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    domain: row.domain,
    tags: JSON.parse(row.tags) as string[],
    accessModel: row.access_model,
    priceLamports: row.price_lamports,
    subscriptionDays: row.subscription_days,
    rating: row.rating,
    ratingCount: row.rating_count,
    creatorWallet: row.creator_wallet,
    status: row.status,
    retrievalRateLimit: row.retrieval_rate_limit,
    retrievalDenseWeight: row.retrieval_dense_weight,
    embeddingModel: row.embedding_model,
    dimensions: row.dimensions,
    documentCount: row.document_count,
    chunkCount: row.chunk_count,
    pdaAddress: row.pda_address,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
