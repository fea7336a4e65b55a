import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StagedChunk } from '../../../src/core/ingest/store';
import { deleteDocumentRows } from '../../../src/db/repositories/deleteRows.mjs';
import { openServices, type StudioServices } from '../../../src/db/services';
import { commitChunks } from '../../helpers/commitChunks';
import * as ofRecord from '../../helpers/indexesOfRecord';
import { tempDir } from '../../helpers/studio';

// Deleting most of a knowledge base builds its vector index and the full-text index again from what
// stays, instead of deleting row by row (deleteRows.mjs). Either way, the indexes must end exactly as if
// the rows had been deleted one by one.

const MODEL = { id: 'test-model', dimensions: 8 };

let dir: ReturnType<typeof tempDir>;
let services: StudioServices;
beforeEach(() => {
  dir = tempDir();
  services = openServices(dir.path);
});
afterEach(() => {
  services.close();
  dir.remove();
});

/** `count` chunks whose texts hold `word` (and `word` + their index); seeded vectors. */
function chunks(word: string, count: number): StagedChunk[] {
  return Array.from({ length: count }, (_, i) => {
    const text = `${word} ${word}${i} common text`;
    const vector = new Float32Array(MODEL.dimensions).map((_, d) =>
      Math.sin((i + 1) * (d + 1) + word.length),
    );
    return {
      text,
      tokenCount: 5,
      contentHash: createHash('sha256').update(text).digest('hex'),
      metadata: {},
      vector,
    };
  });
}

function createListing(title: string): string {
  const wallet = services.wallets.defaultWallet().address;
  return services.listings.create({ title, accessModel: 'one_time', price: 1 }, wallet).id;
}

const db = () => services.db;
const one = (sql: string, ...params: unknown[]) =>
  db()
    .prepare(sql)
    .pluck()
    .get(...params);
const vectorTable = (listingId: string) => ofRecord.vectorTableOf(db(), listingId);
const documentId = (source: string) => one(`SELECT id FROM documents WHERE source = ?`, source) as string;
const matches = (word: string) => one(`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`, word);
/**
 * The vec0 table's rows in the schema, its shadow tables' too: new rowids when it was made again, as long
 * as other schema objects were made after it (SQLite gives a new row the largest rowid + 1).
 */
const vectorPages = (table: string) =>
  db()
    .prepare(`SELECT rowid, name FROM sqlite_master WHERE name = ? OR name LIKE ? ORDER BY name`)
    .all(table, `${table}_%`);
const triggerRow = () => ofRecord.fullTextTriggerRow(db());

/** Every vector in the vec0 table against the float blobs of record; the table answers KNN. */
function expectVectorsOfRecord(listingId: string) {
  ofRecord.expectVectorsOfRecord(db(), listingId);
  const table = vectorTable(listingId);
  const vectors = one(
    `SELECT count(*) FROM embeddings e JOIN chunks c ON c.id = e.chunk_id WHERE c.listing_id = ?`,
    listingId,
  ) as number;
  // The table answers a KNN query, nearest first.
  const query = Buffer.from(new Float32Array(MODEL.dimensions).fill(0.3).buffer);
  const nearest = db()
    .prepare(`SELECT rowid, distance FROM ${table} WHERE embedding MATCH ? AND k = 3`)
    .all(query) as { distance: number }[];
  expect(nearest).toHaveLength(Math.min(3, vectors));
  expect(nearest.map((r) => r.distance)).toEqual([...nearest.map((r) => r.distance)].sort((a, b) => a - b));
}

const checkFullText = () => ofRecord.checkFullText(db());

describe('deleting a document', () => {
  it('that holds most of its knowledge base builds both indexes again from the chunks kept', async () => {
    const listing = createListing('Docs');
    await commitChunks(services, listing, 'a.jsonl', chunks('alpha', 3), MODEL);
    await commitChunks(services, listing, 'big.jsonl', chunks('bravo', 12), MODEL);
    await commitChunks(services, listing, 'c.jsonl', chunks('charlie', 2), MODEL);
    const other = createListing('Other');
    await commitChunks(services, other, 'd.jsonl', chunks('delta', 4), MODEL);
    const table = vectorTable(listing);
    const pages = vectorPages(table);
    const trigger = triggerRow();
    // A statement of the server's connection prepared before the table is made again (as its statement
    // cache keeps them) is prepared again by SQLite, and reads the new table.
    const knn = db().prepare(`SELECT rowid FROM ${table} WHERE embedding MATCH ? AND k = 20`).pluck();
    const query = Buffer.from(new Float32Array(MODEL.dimensions).fill(0.3).buffer);
    expect(knn.all(query)).toHaveLength(17);

    const deleted = await services.knowledgeBase.deleteDocument(documentId('big.jsonl'));
    expect(deleted).toMatchObject({ documentCount: 2, chunkCount: 5 });
    expect(knn.all(query)).toHaveLength(5);

    // Both indexes were made again (12 deleted, 5 kept in the listing, 9 in the whole database)...
    expect(vectorPages(table)).not.toEqual(pages);
    expect(triggerRow().rowid).not.toBe(trigger.rowid);
    expect(triggerRow().sql).toBe(trigger.sql);
    // ...and hold exactly what stays.
    expectVectorsOfRecord(listing);
    expectVectorsOfRecord(other);
    checkFullText();
    expect([matches('bravo'), matches('alpha'), matches('charlie'), matches('delta')]).toEqual([0, 3, 2, 4]);
    expect(one(`SELECT count(*) FROM chunks`)).toBe(9);
    expect(one(`SELECT count(*) FROM vector_codes WHERE listing_id = ?`, listing)).toBe(5);

    // The trigger made again still removes a deleted chunk's full-text row.
    await services.knowledgeBase.deleteDocument(documentId('a.jsonl'));
    checkFullText();
    expect([matches('alpha'), matches('charlie'), matches('delta')]).toEqual([0, 2, 4]);
    expectVectorsOfRecord(listing);
  });

  it('that holds less than half of it deletes its rows one by one', async () => {
    const listing = createListing('Docs');
    await commitChunks(services, listing, 'a.jsonl', chunks('alpha', 6), MODEL);
    await commitChunks(services, listing, 'b.jsonl', chunks('bravo', 5), MODEL);
    const table = vectorTable(listing);
    const pages = vectorPages(table);
    const trigger = triggerRow();

    await services.knowledgeBase.deleteDocument(documentId('b.jsonl'));

    expect(vectorPages(table)).toEqual(pages);
    expect(triggerRow()).toEqual(trigger);
    expectVectorsOfRecord(listing);
    checkFullText();
    expect([matches('alpha'), matches('bravo')]).toEqual([6, 0]);
  });

  it('deletes its vectors by rowid, without scanning the vector index for them', async () => {
    // vec0 reads `rowid IN (SELECT ...)` as a scan of the whole table (18 ms a document at 142,000
    // rows): a folder with 2,328 files changed took 50 s to ingest again instead of 5. Its plans say so.
    const listing = createListing('Docs');
    await commitChunks(services, listing, 'a.jsonl', chunks('alpha', 6), MODEL);
    await commitChunks(services, listing, 'b.jsonl', chunks('bravo', 5), MODEL);
    const table = vectorTable(listing);
    const statements: string[] = [];
    const recording = new Proxy(db(), {
      get(target, key) {
        if (key !== 'prepare') return Reflect.get(target, key, target) as unknown;
        return (sql: string) => {
          statements.push(sql);
          return target.prepare(sql);
        };
      },
    });

    db().transaction(() => deleteDocumentRows(recording, documentId('b.jsonl'), new Date().toISOString()))();

    const onVectors = statements.filter((sql) => sql.includes(table));
    expect(onVectors.length).toBeGreaterThan(0);
    for (const sql of onVectors) {
      const plan = db()
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...Array.from(sql.matchAll(/\?/g), () => 1)) as { detail: string }[];
      // sqlite-vec's plan 0 is the full scan; plan 1 a rowid's point lookup.
      expect(
        plan.map((p) => p.detail).filter((d) => d.includes(`SCAN ${table} VIRTUAL TABLE INDEX 0:`)),
      ).toEqual([]);
    }
    expectVectorsOfRecord(listing);
    expect(one(`SELECT count(*) FROM ${table}`)).toBe(6);
  });

  it('keeps the full-text rows one by one when other listings hold more chunks than it deletes', async () => {
    const listing = createListing('Docs');
    await commitChunks(services, listing, 'big.jsonl', chunks('bravo', 6), MODEL);
    const other = createListing('Other');
    await commitChunks(services, other, 'd.jsonl', chunks('delta', 10), MODEL);
    const trigger = triggerRow();

    await services.knowledgeBase.deleteDocument(documentId('big.jsonl'));

    // The listing's own vector table was emptied by making it again; the shared full-text index was not.
    expect(triggerRow()).toEqual(trigger);
    expect(one(`SELECT count(*) FROM ${vectorTable(listing)}`)).toBe(0);
    checkFullText();
    expect([matches('bravo'), matches('delta')]).toEqual([0, 10]);
    expectVectorsOfRecord(other);
  });

  /**
   * A listing of a.jsonl (1 chunk) and big.jsonl (8), and another listing made after it (so that a table
   * made again takes new rowids in the schema); the vector table's and the trigger's schema rows.
   */
  async function mostlyOneDocument() {
    const listing = createListing('Docs');
    await commitChunks(services, listing, 'a.jsonl', chunks('alpha', 1), MODEL);
    await commitChunks(services, listing, 'big.jsonl', chunks('bravo', 8), MODEL);
    await commitChunks(services, createListing('Other'), 'd.jsonl', chunks('delta', 1), MODEL);
    const table = vectorTable(listing);
    return { listing, table, pages: vectorPages(table), trigger: triggerRow() };
  }

  it('deletes row by row whatever the share with rebuildIndexes false (the benchmark baseline)', async () => {
    const { listing, table, pages, trigger } = await mostlyOneDocument();

    db().transaction(() =>
      deleteDocumentRows(db(), documentId('big.jsonl'), new Date().toISOString(), { rebuildIndexes: false }),
    )();

    expect(vectorPages(table)).toEqual(pages);
    expect(triggerRow()).toEqual(trigger);
    expectVectorsOfRecord(listing);
    checkFullText();
    expect([matches('alpha'), matches('bravo'), matches('delta')]).toEqual([1, 0, 1]);
  });

  it('leaves everything as it was when its transaction is rolled back', async () => {
    const { listing, table, pages, trigger } = await mostlyOneDocument();

    expect(() =>
      db().transaction(() => {
        deleteDocumentRows(db(), documentId('big.jsonl'), new Date().toISOString());
        throw new Error('stop');
      })(),
    ).toThrow('stop');

    expect(vectorPages(table)).toEqual(pages);
    expect(triggerRow()).toEqual(trigger);
    expect(one(`SELECT count(*) FROM ${table}`)).toBe(9);
    expectVectorsOfRecord(listing);
    checkFullText();
    expect([matches('alpha'), matches('bravo'), matches('delta')]).toEqual([1, 8, 1]);
  });
});

describe('deleting a draft listing', () => {
  it('that holds most chunks of the database builds the full-text index again from the rest', async () => {
    const big = createListing('Big');
    await commitChunks(services, big, 'big.jsonl', chunks('bravo', 9), MODEL);
    const other = createListing('Other');
    await commitChunks(services, other, 'd.jsonl', chunks('delta', 3), MODEL);
    const trigger = triggerRow();

    expect(await services.knowledgeBase.deleteDraftListing(big)).toBe('deleted');

    expect(triggerRow().rowid).not.toBe(trigger.rowid);
    expect(triggerRow().sql).toBe(trigger.sql);
    checkFullText();
    expect([matches('bravo'), matches('delta')]).toEqual([0, 3]);
    expect(one(`SELECT count(*) FROM chunks`)).toBe(3);
    expectVectorsOfRecord(other);
  });
});

describe('replacing a document by a new version in a commit', () => {
  it('that holds most of the knowledge base builds the vector index again', async () => {
    const listing = createListing('Docs');
    await commitChunks(services, listing, 'a.jsonl', chunks('alpha', 2), MODEL);
    await commitChunks(services, listing, 'big.jsonl', chunks('bravo', 10), MODEL);
    // A schema object after the listing's vector table, so that a table made again takes new rowids.
    await commitChunks(services, createListing('Other'), 'd.jsonl', chunks('delta', 1), MODEL);
    const table = vectorTable(listing);
    const pages = vectorPages(table);

    await commitChunks(services, listing, 'big.jsonl', chunks('echo', 7), MODEL);

    expect(vectorPages(table)).not.toEqual(pages);
    expectVectorsOfRecord(listing);
    expect(one(`SELECT count(*) FROM ${table}`)).toBe(9);
    checkFullText();
    expect([matches('alpha'), matches('bravo'), matches('echo'), matches('delta')]).toEqual([2, 0, 7, 1]);
  });
});
