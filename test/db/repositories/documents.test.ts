import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BULK_LIMITS, STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import type { CommitOptions, StagedChunk } from '../../../src/core/ingest/store';
import {
  MATCH_COUNT_LIMIT,
  SqliteDocumentRepository,
  ftsQuery,
  type ChunkRecord,
} from '../../../src/db/repositories/documents';
import { openServices, type StudioServices } from '../../../src/db/services';
import { OFFLINE_MODEL } from '../../../src/shared/embeddingModels';
import { commitChunks } from '../../helpers/commitChunks';
import { tempDir } from '../../helpers/studio';

/**
 * The Inspect view's reads of a knowledge base: the list of its documents, and the pages of a document's
 * chunks, checked against what the exact queries (count(*), OFFSET, the search walking the document's
 * index) return, over the documents every way of committing them makes.
 */

const COMMIT: CommitOptions = {
  model: OFFLINE_MODEL.id,
  dimensions: OFFLINE_MODEL.dimensions,
  maxChunks: BULK_LIMITS.maxChunks,
  maxKnowledgeBaseBytes: null,
};

function vectorOf(n: number): Float32Array {
  return Float32Array.from({ length: OFFLINE_MODEL.dimensions }, (_, i) => Math.sin(n * 7 + i) + 1.5);
}

const staged = (text: string, n: number): StagedChunk => ({
  text,
  tokenCount: text.split(' ').length,
  contentHash: `hash ${n}`,
  metadata: { n },
  vector: vectorOf(n),
});

interface ChunkRow {
  id: number;
  chunk_index: number;
  text: string;
  token_count: number;
  metadata: string;
}

const asRecord = (r: ChunkRow): ChunkRecord => ({
  id: r.id,
  index: r.chunk_index,
  text: r.text,
  tokenCount: r.token_count,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
});

/** What the Inspect view read before: every chunk counted, OFFSET rows walked. */
function offsetPage(db: Database.Database, documentId: string, limit: number, offset: number) {
  const total = db.prepare(`SELECT count(*) FROM chunks WHERE document_id = ?`).pluck().get(documentId);
  const rows = db
    .prepare(
      `SELECT id, chunk_index, text, token_count, metadata FROM chunks WHERE document_id = ?
       ORDER BY chunk_index LIMIT ? OFFSET ?`,
    )
    .all(documentId, limit, offset) as ChunkRow[];
  return { items: rows.map(asRecord), total: total as number };
}

/** The search as it was: the document's index walked, every match counted, sorted by chunk_index. */
function exactSearch(db: Database.Database, documentId: string, q: string, limit: number, offset: number) {
  const where = `document_id = ? AND id IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)`;
  const match = ftsQuery(q)!;
  const total = db.prepare(`SELECT count(*) FROM chunks WHERE ${where}`).pluck().get(documentId, match);
  const rows = db
    .prepare(
      `SELECT id, chunk_index, text, token_count, metadata FROM chunks WHERE ${where}
       ORDER BY chunk_index LIMIT ? OFFSET ?`,
    )
    .all(documentId, match, limit, offset) as ChunkRow[];
  return { items: rows.map(asRecord), total: total as number };
}

/** The statements `run` executed on `db`, with their arguments. */
function statementsOf(db: Database.Database, run: () => void): { sql: string; args: unknown[] }[] {
  const ran: { sql: string; args: unknown[] }[] = [];
  const prepare = db.prepare.bind(db);
  const spy = vi.spyOn(db, 'prepare').mockImplementation((sql: string) => {
    const statement = prepare(sql);
    for (const method of ['get', 'all'] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      Object.assign(statement, {
        [method]: (...args: unknown[]) => {
          ran.push({ sql, args });
          return original(...args);
        },
      });
    }
    return statement;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return ran;
}

const planOf = (db: Database.Database, { sql, args }: { sql: string; args: unknown[] }) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail);

/** Paragraphs of a handbook: `heron` in every one, `quokka` in two. */
const handbook = Array.from(
  { length: 40 },
  (_, i) =>
    `Paragraph ${i}. The heron waded through the reeds while the tide turned slowly over the flats, ` +
    `and the keeper counted boats along the ${i % 2 ? 'northern' : 'southern'} shore before dusk` +
    (i === 7 || i === 31 ? ', where a quokka watched.' : '.'),
).join('\n\n');

describe('SqliteDocumentRepository: the list and the chunk pages', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let documents: SqliteDocumentRepository;
  let listingId: string;
  const idOf = (source: string) => documents.list(listingId).find((d) => d.source === source)!.id;

  beforeAll(async () => {
    dir = tempDir();
    services = openServices(dir.path);
    documents = new SqliteDocumentRepository(services.db);
    const wallet = services.wallets.defaultWallet().address;
    listingId = services.listings.create({ title: 'KB', accessModel: 'one_time', price: 0 }, wallet).id;
    const files = join(dir.path, 'files');
    const write = (name: string, text: string) => {
      writeFileSync(join(files, name), text);
      return { path: join(files, name) };
    };
    mkdirSync(files);
    const ingest = (inputs: { path: string }[], chunkSize: number) =>
      services.ingestion.run({
        listingId,
        inputs,
        chunking: { strategy: 'recursive', chunkSize, chunkOverlap: 4 },
        atomic: true,
        limits: STUDIO_LIMITS,
      });
    // A Markdown file, and a JSON array file whose items are documents (chunks counted over the file).
    const items = Array.from({ length: 12 }, (_, i) => ({
      title: `Item ${i}`,
      text: `${handbook.split('\n\n')[i]} ${handbook.split('\n\n')[i + 12]} ${handbook.split('\n\n')[i + 24]}`,
    }));
    await ingest([write('handbook.md', handbook), write('items.json', JSON.stringify(items))], 32);
    // Re-ingested with other chunking: a new document under the same name.
    const before = idOf('handbook.md');
    await ingest([{ path: join(files, 'handbook.md') }], 24);
    expect(idOf('handbook.md')).not.toBe(before);

    // Two documents streamed side by side: their chunk ids interleave.
    const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
    try {
      const session = services.knowledgeBase.beginCommit(listingId, staging, COMMIT);
      const a = session.open({
        source: 'a.jsonl',
        format: 'jsonl',
        contentHash: 'a',
        bytes: 1,
        metadata: {},
      });
      const b = session.open({
        source: 'b.jsonl',
        format: 'jsonl',
        contentHash: 'b',
        bytes: 1,
        metadata: {},
      });
      for (let i = 0; i < 45; i++) {
        await a.add([staged(`Line ${i} of a: the heron${i % 3 ? '' : ' and the ibis'} rests.`, i)]);
        await b.add([staged(`Line ${i} of b: the heron${i % 4 ? '' : ' and the egret'} rests.`, 100 + i)]);
      }
      a.finish();
      b.finish();
      await session.finish();
    } finally {
      staging.dispose();
    }
  }, 60_000);

  afterAll(() => {
    services?.close();
    dir?.remove();
  });

  const SOURCES = ['a.jsonl', 'b.jsonl', 'handbook.md', 'items.json'];

  it('lists every document by source with only what the list names it by', () => {
    const list = documents.list(listingId);
    expect(list.map((d) => d.source)).toEqual(SOURCES);
    for (const d of list) {
      expect(Object.keys(d).sort()).toEqual(['chunkCount', 'documentCount', 'format', 'id', 'source']);
    }
    expect(list.find((d) => d.source === 'items.json')).toMatchObject({ format: 'json', documentCount: 12 });
    // The whole record is read for one document.
    expect(documents.get(idOf('items.json'))).toMatchObject({
      source: 'items.json',
      metadata: { chunking: { strategy: 'recursive', chunkSize: 32, chunkOverlap: 4 } },
    });
    expect(documents.sources(listingId)).toEqual(SOURCES);
  });

  it('reads pages from the chunk index, the total from the document: the pages OFFSET read', () => {
    const db = services.db;
    // What the reads rely on, however a document was committed: its chunks numbered 0..n-1, their ids
    // ascending (the commit inserts a document's chunks in order, in one transaction).
    for (const source of SOURCES) {
      const id = idOf(source);
      const rows = services.db
        .prepare(`SELECT id, chunk_index FROM chunks WHERE document_id = ? ORDER BY chunk_index`)
        .all(id) as { id: number; chunk_index: number }[];
      expect(rows.length, source).toBe(documents.get(id).chunkCount);
      expect(rows.length, source).toBeGreaterThan(20);
      expect(
        rows.every((r, i) => r.chunk_index === i && (i === 0 || r.id > rows[i - 1]!.id)),
        source,
      ).toBe(true);
    }
    // Streamed side by side, a.jsonl and b.jsonl took turns: their ids interleave.
    const [a, b] = ['a.jsonl', 'b.jsonl'].map((s) =>
      services.db.prepare(`SELECT id FROM chunks WHERE document_id = ? ORDER BY id`).pluck().all(idOf(s)),
    ) as [number[], number[]];
    expect(b[0]).toBe(a[0]! + 1);

    for (const source of SOURCES) {
      const id = idOf(source);
      const n = documents.get(id).chunkCount;
      for (const [limit, offset] of [
        [20, 0],
        [20, Math.floor(n / 2)],
        [20, n - 20],
        [7, n - 3],
        [50, n],
        [1, 0],
      ] as const) {
        const page = documents.chunks(id, { limit, offset });
        expect(page, `${source} ${limit}@${offset}`).toEqual({
          ...offsetPage(db, id, limit, offset),
          totalRelation: 'eq',
        });
      }
      // No count of the document's chunks, no OFFSET walk: one seek to the first chunk of the page.
      const ran = statementsOf(db, () => documents.chunks(id, { limit: 20, offset: n - 20 }));
      expect(ran.map((s) => s.sql).join('\n')).not.toMatch(/count\(|OFFSET/);
      const page = ran.find((s) => s.sql.includes('c.text'))!;
      expect(planOf(db, page).join(' ')).toContain('(document_id=? AND chunk_index>?)');
    }
  });

  it('counts and walks a document whose chunks are not numbered 0..n-1, as before', () => {
    const db = services.db;
    const id = idOf('a.jsonl');
    const n = documents.get(id).chunkCount;
    // Numbered 1, 3, 5…: a gap at every step (through negatives, as chunk_index is unique).
    db.prepare(`UPDATE chunks SET chunk_index = -chunk_index - 1 WHERE document_id = ?`).run(id);
    db.prepare(`UPDATE chunks SET chunk_index = -chunk_index * 2 - 1 WHERE document_id = ?`).run(id);
    try {
      for (const offset of [0, 10, n - 5]) {
        expect(documents.chunks(id, { limit: 10, offset })).toEqual({
          ...offsetPage(db, id, 10, offset),
          totalRelation: 'eq',
        });
      }
    } finally {
      db.prepare(`UPDATE chunks SET chunk_index = -chunk_index WHERE document_id = ?`).run(id);
      db.prepare(`UPDATE chunks SET chunk_index = (-chunk_index - 1) / 2 WHERE document_id = ?`).run(id);
    }
    expect(documents.chunks(id, { limit: 3, offset: 0 }).items.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it('searches from the full-text index, in chunk order: the pages the exact search read', () => {
    const db = services.db;
    for (const source of SOURCES) {
      const id = idOf(source);
      for (const q of ['heron', 'quokka', 'ibis', 'egret', 'northern shore', 'Line 4', 'zzqx']) {
        const { total } = exactSearch(db, id, q, 1, 0);
        for (const [limit, offset] of [
          [20, 0],
          [5, Math.floor(total / 2)],
          [20, Math.max(0, total - 20)],
          [10, total],
        ] as const) {
          expect(documents.chunks(id, { q, limit, offset }), `${source} "${q}" ${limit}@${offset}`).toEqual({
            ...exactSearch(db, id, q, limit, offset),
            totalRelation: 'eq',
          });
        }
      }
    }
    // A document's own word only: the other document's chunks between its ids are left out.
    expect(documents.chunks(idOf('b.jsonl'), { q: 'ibis', limit: 20, offset: 0 }).total).toBe(0);
    expect(documents.chunks(idOf('a.jsonl'), { q: 'ibis', limit: 20, offset: 0 }).total).toBe(15);
  });

  it('drives a search from the full-text index: a word the document lacks reads none of its chunks', () => {
    const db = services.db;
    const id = idOf('handbook.md');
    for (const q of ['zzqx', 'quokka', 'heron']) {
      const ran = statementsOf(db, () => documents.chunks(id, { q, limit: 20, offset: 0 }));
      const searches = ran.filter((s) => s.sql.includes('MATCH'));
      expect(searches).toHaveLength(2);
      for (const search of searches) {
        const plan = planOf(db, search);
        // chunks_fts first (within the document's ids), then each match's chunk by its id; no sort.
        const reads = plan.filter((line) => /^(SCAN|SEARCH) /.test(line));
        expect(reads[0], q).toMatch(/^SCAN f VIRTUAL TABLE INDEX \d+:M\d+></);
        expect(plan.join(' | '), q).toContain('SEARCH c USING INTEGER PRIMARY KEY (rowid=?)');
        expect(plan.join(' | '), q).not.toMatch(/sqlite_autoindex_chunks_1|TEMP B-TREE/);
      }
    }
  });
});

describe('SqliteDocumentRepository: a search matching more than the count goes to', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let documents: SqliteDocumentRepository;
  let id: string;
  const CHUNKS = MATCH_COUNT_LIMIT + 50;

  beforeAll(async () => {
    dir = tempDir();
    services = openServices(dir.path);
    documents = new SqliteDocumentRepository(services.db);
    const wallet = services.wallets.defaultWallet().address;
    const listingId = services.listings.create(
      { title: 'Big', accessModel: 'one_time', price: 0 },
      wallet,
    ).id;
    // `heron` in every chunk, `egret` in every 400th.
    const chunks = Array.from({ length: CHUNKS }, (_, i) =>
      staged(`Line ${i}: the heron${i % 400 ? '' : ' met an egret'} at the pond.`, i),
    );
    const result = await commitChunks(services, listingId, 'big.jsonl', chunks, {
      id: COMMIT.model,
      dimensions: COMMIT.dimensions,
    });
    id = result.documents[0]!.documentId;
  }, 60_000);

  afterAll(() => {
    services?.close();
    dir?.remove();
  });

  it(`counts matches up to ${MATCH_COUNT_LIMIT.toLocaleString('en-US')} and says the total is a lower bound`, () => {
    const first = documents.chunks(id, { q: 'heron', limit: 20, offset: 0 });
    expect(first.total).toBe(MATCH_COUNT_LIMIT);
    expect(first.totalRelation).toBe('gte');
    expect(first.items.map((c) => c.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // The last page of the bound, then pages past it: counted to their end, exact once all are.
    const last = documents.chunks(id, { q: 'heron', limit: 20, offset: MATCH_COUNT_LIMIT - 20 });
    expect(last).toMatchObject({ total: MATCH_COUNT_LIMIT, totalRelation: 'gte' });
    expect(last.items[19]!.index).toBe(MATCH_COUNT_LIMIT - 1);
    const past = documents.chunks(id, { q: 'heron', limit: 20, offset: MATCH_COUNT_LIMIT });
    expect(past).toMatchObject({ total: MATCH_COUNT_LIMIT + 20, totalRelation: 'gte' });
    expect(past.items.map((c) => c.index)).toEqual(
      Array.from({ length: 20 }, (_, i) => MATCH_COUNT_LIMIT + i),
    );
    const end = documents.chunks(id, { q: 'heron', limit: 50, offset: MATCH_COUNT_LIMIT });
    expect(end).toMatchObject({ total: CHUNKS, totalRelation: 'eq' });
    expect(end.items).toHaveLength(50);
    // A rarer word is counted exactly, in chunk order.
    const egret = documents.chunks(id, { q: 'egret', limit: 100, offset: 0 });
    expect(egret).toMatchObject({ total: Math.ceil(CHUNKS / 400), totalRelation: 'eq' });
    expect(egret.items.map((c) => c.index)).toEqual(
      Array.from({ length: Math.ceil(CHUNKS / 400) }, (_, i) => i * 400),
    );
    // Without a search, the document's count: exact.
    expect(documents.chunks(id, { limit: 20, offset: CHUNKS - 20 })).toMatchObject({
      total: CHUNKS,
      totalRelation: 'eq',
    });
  });
});
