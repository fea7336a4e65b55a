import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChunkLimitExceeded } from '../../../src/core/ingest/errors';
import type {
  CommitOptions,
  CommitSession,
  StagedChunk,
  StagedDocument,
} from '../../../src/core/ingest/store';
import { signCode } from '../../../src/core/retrieve/signCodes';
import type { UploadRecord } from '../../../src/core/uploads/uploads';
import { BULK_FTS_MIN_CHUNKS } from '../../../src/db/repositories/knowledgeBase';
import { SqliteDocumentRepository } from '../../../src/db/repositories/documents';
import { SqliteUploadRepository } from '../../../src/db/repositories/uploads';
import { DATABASE_FILE } from '../../../src/db/open';
import { openServices, type StudioServices } from '../../../src/db/services';
import { expectVectorsOfRecord, fullTextTriggerRow } from '../../helpers/indexesOfRecord';
import { tempDir } from '../../helpers/studio';

const MODEL = 'test-model-8';
const DIMS = 8;
const OPTIONS: CommitOptions = {
  model: MODEL,
  dimensions: DIMS,
  maxChunks: 1_000,
  maxKnowledgeBaseBytes: null,
};

const vector = (...values: number[]) => Float32Array.from(values);
const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

function chunk(text: string, v: Float32Array, metadata: Record<string, unknown> = {}): StagedChunk {
  return { text, tokenCount: text.split(' ').length, contentHash: `hash of ${text}`, metadata, vector: v };
}

function doc(source: string, metadata: Record<string, unknown> = {}): StagedDocument {
  return { source, format: 'markdown', contentHash: `hash of ${source}`, bytes: 100, metadata };
}

interface ChunkRow {
  id: number;
  document_id: string;
  chunk_index: number;
  text: string;
  token_count: number;
  content_hash: string;
  metadata: string;
}

describe('SqliteKnowledgeBaseStore staging and commit', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let listingId: string;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(dir.path);
    const wallet = services.wallets.defaultWallet().address;
    listingId = services.listings.create({ title: 'KB', accessModel: 'one_time', price: 0 }, wallet).id;
  });

  afterEach(() => {
    services.close();
    dir.remove();
  });

  /** Stages each document's chunks (in batches of two, as the pipeline does in larger ones), then commits. */
  async function stageAndCommit(
    documents: { doc: StagedDocument; chunks: StagedChunk[]; finish?: Record<string, unknown> }[],
    options: CommitOptions = OPTIONS,
  ) {
    const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
    try {
      for (const d of documents) {
        const writer = staging.open(d.doc);
        for (let at = 0; at < d.chunks.length; at += 2) writer.add(d.chunks.slice(at, at + 2));
        writer.finish(d.finish);
      }
      return await services.knowledgeBase.commit(listingId, staging, options);
    } finally {
      staging.dispose();
    }
  }

  const db = () => services.db;
  const chunkRows = () =>
    db()
      .prepare(
        `SELECT c.id, c.document_id, c.chunk_index, c.text, c.token_count, c.content_hash, c.metadata
        FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.listing_id = ? ORDER BY d.source, c.chunk_index`,
      )
      .all(listingId) as ChunkRow[];
  const vecTable = () =>
    (
      db()
        .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ? AND model = ?`)
        .get(listingId, MODEL) as { table_name: string } | undefined
    )?.table_name;
  const floats = (id: number) =>
    (
      db().prepare(`SELECT vector FROM embeddings WHERE chunk_id = ?`).get(id) as
        { vector: Buffer } | undefined
    )?.vector;
  const code = (id: number) =>
    (
      db().prepare(`SELECT code FROM vector_codes WHERE chunk_id = ? AND model = ?`).get(id, MODEL) as
        { code: Buffer } | undefined
    )?.code;
  const indexed = (id: number) =>
    (
      db().prepare(`SELECT embedding FROM ${vecTable()} WHERE rowid = ?`).get(BigInt(id)) as
        { embedding: Buffer } | undefined
    )?.embedding;
  const fullText = (word: string) =>
    (
      db().prepare(`SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid`).all(word) as {
        rowid: number;
      }[]
    ).map((r) => r.rowid);
  const counts = () => ({
    documents: (db().prepare(`SELECT count(*) AS n FROM documents`).get() as { n: number }).n,
    chunks: (db().prepare(`SELECT count(*) AS n FROM chunks`).get() as { n: number }).n,
    embeddings: (db().prepare(`SELECT count(*) AS n FROM embeddings`).get() as { n: number }).n,
    codes: (db().prepare(`SELECT count(*) AS n FROM vector_codes`).get() as { n: number }).n,
    vectors: vecTable()
      ? (db().prepare(`SELECT count(*) AS n FROM ${vecTable()}`).get() as { n: number }).n
      : 0,
    listing: db().prepare(`SELECT document_count, chunk_count FROM listings WHERE id = ?`).get(listingId),
  });

  it('puts exactly the staged chunks, metadata, vectors and sign codes into the knowledge base', async () => {
    const alpha = [
      chunk('apples grow on trees', vector(1, -1, 2, -2, 0.5, -0.5, 3, -3), { section: 'Fruit', page: 1 }),
      chunk('bananas are yellow', vector(-1, 1, -2, 2, -0.5, 0.5, -3, 3)),
      // A document may say anything about itself: the reserved keys are the store's.
      chunk('cherries are red', vector(0, 1, 0, 1, 0, 1, 0, 1), {
        source: 'elsewhere.md',
        heading: 'Red',
        chunkIndex: 99,
        documentId: 'doc_fake',
        format: 'pdf',
      }),
    ];
    const beta = [
      chunk('dates are sweet', vector(0.25, 0.25, -1, 1, 1, 1, 1, -1), { '2': 'numeric key', b: [1, 2] }),
    ];
    const result = await stageAndCommit([
      { doc: doc('b/beta.md'), chunks: beta },
      {
        doc: doc('a/alpha.md', { chunking: 'v1' }),
        chunks: alpha,
        finish: { chunking: 'v1', warnings: ['w'] },
      },
    ]);

    expect(result.documentCount).toBe(2);
    expect(result.chunkCount).toBe(4);
    expect(result.documents.map((d) => [d.source, d.chunks])).toEqual([
      ['a/alpha.md', 3],
      ['b/beta.md', 1],
    ]);
    const alphaId = result.documents[0]!.documentId;
    const betaId = result.documents[1]!.documentId;
    expect(
      db().prepare(`SELECT metadata, chunk_count, bytes FROM documents WHERE id = ?`).get(alphaId),
    ).toEqual({ metadata: JSON.stringify({ chunking: 'v1', warnings: ['w'] }), chunk_count: 3, bytes: 100 });

    const rows = chunkRows();
    const staged = [...alpha, ...beta];
    const expectedMetadata = [
      {
        section: 'Fruit',
        page: 1,
        source: 'a/alpha.md',
        format: 'markdown',
        documentId: alphaId,
        chunkIndex: 0,
      },
      { source: 'a/alpha.md', format: 'markdown', documentId: alphaId, chunkIndex: 1 },
      // Reserved keys the document set keep their place but take the store's values.
      { source: 'a/alpha.md', heading: 'Red', chunkIndex: 2, documentId: alphaId, format: 'markdown' },
      {
        '2': 'numeric key',
        b: [1, 2],
        source: 'b/beta.md',
        format: 'markdown',
        documentId: betaId,
        chunkIndex: 0,
      },
    ];
    expect(rows.map((r) => [r.document_id, r.chunk_index, r.text, r.token_count, r.content_hash])).toEqual([
      [alphaId, 0, 'apples grow on trees', 4, 'hash of apples grow on trees'],
      [alphaId, 1, 'bananas are yellow', 3, 'hash of bananas are yellow'],
      [alphaId, 2, 'cherries are red', 3, 'hash of cherries are red'],
      [betaId, 0, 'dates are sweet', 3, 'hash of dates are sweet'],
    ]);
    // The stored JSON text itself, key order included.
    expect(rows.map((r) => r.metadata)).toEqual(expectedMetadata.map((m) => JSON.stringify(m)));

    rows.forEach((row, i) => {
      const v = staged[i]!.vector;
      expect(floats(row.id)).toEqual(blob(v));
      expect(indexed(row.id)).toEqual(blob(v));
      expect(code(row.id)).toEqual(Buffer.from(signCode(v)));
    });
    expect(code(rows[0]!.id)![0]).toBe(0b01010101);
    expect(fullText('cherries')).toEqual([rows[2]!.id]);
    expect(fullText('apple')).toEqual([rows[0]!.id]);
    expect(counts()).toMatchObject({
      documents: 2,
      chunks: 4,
      embeddings: 4,
      codes: 4,
      vectors: 4,
      listing: { document_count: 2, chunk_count: 4 },
    });
  });

  it('replaces the old document, chunks, vectors and codes of a source committed again', async () => {
    const first = await stageAndCommit([
      {
        doc: doc('notes.md'),
        chunks: [
          chunk('old walrus text', vector(1, 1, 1, 1, 1, 1, 1, 1)),
          chunk('old penguin text', vector(-1, 1, 1, 1, 1, 1, 1, 1)),
          chunk('old puffin text', vector(1, -1, 1, 1, 1, 1, 1, 1)),
        ],
      },
      { doc: doc('kept.md'), chunks: [chunk('kept otter text', vector(1, 1, -1, 1, 1, 1, 1, 1))] },
    ]);
    const oldIds = chunkRows()
      .filter((r) => r.document_id === first.documents.find((d) => d.source === 'notes.md')!.documentId)
      .map((r) => r.id);
    expect(oldIds).toHaveLength(3);

    const second = await stageAndCommit([
      {
        doc: doc('notes.md'),
        chunks: [
          chunk('new heron text', vector(2, 2, 2, 2, -2, 2, 2, 2)),
          chunk('new ibis text', vector(0, 0, 0, 0, 0, 0, 0, 3)),
        ],
      },
    ]);
    const notesId = second.documents[0]!.documentId;
    expect(notesId).not.toBe(first.documents.find((d) => d.source === 'notes.md')!.documentId);
    expect(second).toMatchObject({ documentCount: 2, chunkCount: 3 });

    const rows = chunkRows();
    expect(rows.map((r) => r.text)).toEqual(['kept otter text', 'new heron text', 'new ibis text']);
    expect(rows.filter((r) => r.document_id === notesId).map((r) => JSON.parse(r.metadata))).toEqual([
      { source: 'notes.md', format: 'markdown', documentId: notesId, chunkIndex: 0 },
      { source: 'notes.md', format: 'markdown', documentId: notesId, chunkIndex: 1 },
    ]);
    // Chunk ids are rowids and may be reused: every old id holds either nothing or a new chunk's vector.
    const current = new Map<number, Float32Array>([
      [rows[0]!.id, vector(1, 1, -1, 1, 1, 1, 1, 1)],
      [rows[1]!.id, vector(2, 2, 2, 2, -2, 2, 2, 2)],
      [rows[2]!.id, vector(0, 0, 0, 0, 0, 0, 0, 3)],
    ]);
    for (const id of [...oldIds, ...current.keys()]) {
      const v = current.get(id);
      expect(floats(id)).toEqual(v && blob(v));
      expect(code(id)).toEqual(v && Buffer.from(signCode(v)));
      expect(indexed(id)).toEqual(v && blob(v));
    }
    expect(fullText('walrus')).toEqual([]);
    expect(fullText('heron')).toEqual([rows[1]!.id]);
    expect(fullText('otter')).toEqual([rows[0]!.id]);
    expect(fullText('text')).toEqual(rows.map((r) => r.id));
    // The full-text index matches the chunks table exactly (FTS5 compares it with its content table).
    expect(() =>
      db().prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run(),
    ).not.toThrow();
    expect(counts()).toMatchObject({
      documents: 2,
      chunks: 3,
      embeddings: 3,
      codes: 3,
      vectors: 3,
      listing: { document_count: 2, chunk_count: 3 },
    });
  });

  it('keeps a zero vector out of the vector index, embeddings and codes, but not out of full-text', async () => {
    await stageAndCommit([
      {
        doc: doc('zero.md'),
        chunks: [
          chunk('unknown zzyzx words', new Float32Array(DIMS)),
          chunk('known words', vector(1, 0, 0, 0, 0, 0, 0, 0)),
        ],
      },
    ]);
    const [zero, known] = chunkRows();
    expect(zero!.text).toBe('unknown zzyzx words');
    expect(floats(zero!.id)).toBeUndefined();
    expect(code(zero!.id)).toBeUndefined();
    expect(indexed(zero!.id)).toBeUndefined();
    expect(fullText('zzyzx')).toEqual([zero!.id]);
    expect(indexed(known!.id)).toEqual(blob(vector(1, 0, 0, 0, 0, 0, 0, 0)));
    expect(counts()).toMatchObject({ chunks: 2, embeddings: 1, codes: 1, vectors: 1 });
  });

  it('leaves the knowledge base as it was when the commit fails', async () => {
    await stageAndCommit([
      { doc: doc('base.md'), chunks: [chunk('base gannet text', vector(1, 2, 3, 4, 5, 6, 7, 8))] },
    ]);
    const before = counts();
    const rowsBefore = chunkRows();
    const generation = () =>
      db().prepare(`SELECT generation FROM knowledge_base_generations WHERE listing_id = ?`).get(listingId);
    const generationBefore = generation();

    await expect(
      stageAndCommit(
        [
          // Replacing base.md and adding more: over the limit, so neither may happen.
          { doc: doc('base.md'), chunks: [chunk('new cormorant text', vector(8, 7, 6, 5, 4, 3, 2, 1))] },
          {
            doc: doc('more.md'),
            chunks: [
              chunk('more albatross text', vector(1, 1, 1, 1, 1, 1, 1, 1)),
              chunk('x y', vector(1, 0, 1, 0, 1, 0, 1, 0)),
            ],
          },
        ],
        { ...OPTIONS, maxChunks: 2 },
      ),
    ).rejects.toThrow(ChunkLimitExceeded);

    expect(counts()).toEqual(before);
    expect(chunkRows()).toEqual(rowsBefore);
    expect(indexed(rowsBefore[0]!.id)).toEqual(blob(vector(1, 2, 3, 4, 5, 6, 7, 8)));
    expect(fullText('gannet')).toEqual([rowsBefore[0]!.id]);
    expect(fullText('albatross')).toEqual([]);
    expect(generation()).toEqual(generationBefore);
  });

  it("checks the listing's model in the commit's transaction when asked; a conflict writes nothing", async () => {
    const listingModel = () =>
      db().prepare(`SELECT embedding_model AS model, dimensions FROM listings WHERE id = ?`).get(listingId);
    const first = [{ doc: doc('a.md'), chunks: [chunk('a b', vector(1, 1, 1, 1, 1, 1, 1, 1))] }];
    const second = [{ doc: doc('b.md'), chunks: [chunk('c d', vector(1, 0, 1, 0, 1, 0, 1, 0))] }];
    // 'same': the empty listing is of the offline model, not MODEL (changed while the ingestion ran).
    await expect(stageAndCommit(first, { ...OPTIONS, listingModel: 'same' })).rejects.toMatchObject({
      code: 'conflict',
      message: `embedding_model: listing '${listingId}' was changed to kbs-offline-hybrid-v1 while this ingestion embedded its documents with ${MODEL}; nothing was stored. Ingest them again.`,
    });
    expect(counts()).toMatchObject({ documents: 0, chunks: 0, embeddings: 0, codes: 0 });
    expect(vecTable()).toBeUndefined();
    // 'take': the empty listing takes MODEL, with the chunks.
    await stageAndCommit(first, { ...OPTIONS, listingModel: 'take' });
    expect(listingModel()).toEqual({ model: MODEL, dimensions: DIMS });
    expect(counts()).toMatchObject({ documents: 1, chunks: 1, codes: 1 });
    // Holding chunks of MODEL, it takes no other model, asked for or not.
    const before = counts();
    for (const check of ['same', 'take'] as const) {
      await expect(
        stageAndCommit(second, { ...OPTIONS, model: 'other-model', listingModel: check }),
      ).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining(
          `listing '${listingId}' now holds chunks embedded with ${MODEL}, stored while this ingestion embedded its documents with other-model; nothing was stored.`,
        ),
      });
      expect(counts()).toEqual(before);
    }
    expect(listingModel()).toEqual({ model: MODEL, dimensions: DIMS });
    await stageAndCommit(second, { ...OPTIONS, listingModel: 'same' });
    expect(counts()).toMatchObject({ documents: 2, chunks: 2 });
  });

  it('creates no vector table when the first commit fails', async () => {
    await expect(
      stageAndCommit([{ doc: doc('a.md'), chunks: [chunk('a b', vector(1, 1, 1, 1, 1, 1, 1, 1))] }], {
        ...OPTIONS,
        maxChunks: 0,
      }),
    ).rejects.toThrow(ChunkLimitExceeded);
    expect(vecTable()).toBeUndefined();
    expect(counts()).toMatchObject({ documents: 0, chunks: 0, embeddings: 0, codes: 0 });
  });

  it('drops a discarded document from the staging area', async () => {
    const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
    try {
      const failed = staging.open(doc('broken.pdf'));
      failed.add([chunk('half parsed lemur text', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
      failed.discard();
      const good = staging.open(doc('good.md'));
      good.add([chunk('good marmot text', vector(1, -1, 1, -1, 1, -1, 1, -1))]);
      good.finish();
      expect(staging.documentCount).toBe(1);
      expect(staging.chunkCount).toBe(1);
      const result = await services.knowledgeBase.commit(listingId, staging, OPTIONS);
      expect(result.documents.map((d) => d.source)).toEqual(['good.md']);
    } finally {
      staging.dispose();
    }
    expect(chunkRows().map((r) => r.text)).toEqual(['good marmot text']);
    expect(fullText('lemur')).toEqual([]);
    expect(counts()).toMatchObject({ documents: 1, chunks: 1, embeddings: 1, codes: 1, vectors: 1 });
  });

  it('starts the commit worker when staging begins, and the commit takes it', async () => {
    const store = services.knowledgeBase;
    expect(store.commitWorkerReady).toBe(false);
    const staging = store.createStaging(join(dir.path, 'tmp'));
    expect(store.commitWorkerReady).toBe(true);
    try {
      const writer = staging.open(doc('a.md'));
      writer.add([chunk('ready heron', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
      writer.finish();
      const result = await store.commit(listingId, staging, OPTIONS);
      expect(store.commitWorkerReady).toBe(false);
      expect(result.documents).toMatchObject([{ source: 'a.md', chunks: 1 }]);
    } finally {
      staging.dispose();
    }
    expect(chunkRows().map((r) => r.text)).toEqual(['ready heron']);
  });

  it('keeps one commit worker from an ingestion that never committed for the next, and stops it on close', async () => {
    const store = services.knowledgeBase;
    store.createStaging(join(dir.path, 'tmp')).dispose();
    expect(store.commitWorkerReady).toBe(true);
    await stageAndCommit([
      { doc: doc('b.md'), chunks: [chunk('patient egret', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
    ]);
    expect(chunkRows().map((r) => r.text)).toEqual(['patient egret']);
    store.createStaging(join(dir.path, 'tmp')).dispose();
    expect(store.commitWorkerReady).toBe(true);
    store.close();
    expect(store.commitWorkerReady).toBe(false);
  });

  it('has a commit worker refuse any message before its request', async () => {
    const worker = new Worker(new URL('../../../src/db/repositories/commitWorker.mjs', import.meta.url), {
      workerData: { role: 'kbstudio-commit' },
      execArgv: [],
    });
    try {
      const reply = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage({ type: 'open', key: 1 });
      expect(await reply).toMatchObject({
        error: { message: 'the commit worker was not sent its request first' },
      });
    } finally {
      await worker.terminate();
    }
  });

  it('keeps the staging database without a rollback journal file, and rolls a failed batch back', async () => {
    const workDir = join(dir.path, 'tmp');
    const staging = services.knowledgeBase.createStaging(workDir);
    try {
      const writer = staging.open(doc('a.md'));
      writer.add([chunk('first okapi text', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
      // Metadata JSON cannot hold: the batch's transaction fails after its first row and is undone.
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(() =>
        writer.add([
          chunk('second okapi text', vector(1, 1, 1, 1, 1, 1, 1, 1)),
          chunk('third okapi text', vector(1, 1, 1, 1, 1, 1, 1, 1), cyclic),
        ]),
      ).toThrow();
      writer.finish();
      // The journal lives in memory (better-sqlite3's defensive mode refuses journal_mode = OFF, which
      // used to leave a journal file written beside every batch).
      expect(readdirSync(workDir).filter((f) => f.endsWith('-journal'))).toEqual([]);
      const result = await services.knowledgeBase.commit(listingId, staging, OPTIONS);
      expect(result.documents).toMatchObject([{ source: 'a.md', chunks: 1 }]);
    } finally {
      staging.dispose();
    }
    expect(chunkRows().map((r) => r.text)).toEqual(['first okapi text']);
  });

  // Bytes this thread has written through write calls (Linux): the staging database is written here.
  const writtenByThisThread = () =>
    Number(/^wchar: (\d+)$/m.exec(readFileSync('/proc/thread-self/io', 'utf8'))?.[1]);

  it.skipIf(!existsSync('/proc/thread-self/io'))(
    'writes each staged page about once, not once per batch and document',
    async () => {
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      const before = writtenByThisThread();
      let file: string;
      try {
        // 300 small documents of two batches each, as a folder of small files is staged.
        for (let d = 0; d < 300; d++) {
          const writer = staging.open(doc(`doc-${d}.md`));
          for (let b = 0; b < 2; b++) {
            writer.add(
              Array.from({ length: 5 }, (_, k) =>
                chunk(`kestrel ${d} ${b} ${k} `.repeat(20), vector(1, d, b, k, 1, 1, 1, 1)),
              ),
            );
          }
          writer.finish();
        }
        file = (staging as unknown as { seal(): string }).seal();
        const written = writtenByThisThread() - before;
        // Committed per batch and per document row, this wrote 16 times the file's size.
        expect(written).toBeLessThan(2 * statSync(file).size);
      } finally {
        staging.dispose();
      }
    },
  );

  it('refuses to go on once SQLite has rolled the staging transaction back after an error', () => {
    const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
    try {
      const writer = staging.open(doc('a.md'));
      writer.add([chunk('lost tern', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
      // What SQLite does on SQLITE_FULL or an I/O error in a transaction: the whole of it is rolled back.
      (staging as unknown as { db: { exec(sql: string): void } }).db.exec('ROLLBACK');
      const lost = /the staging database lost what was staged after a storage error/;
      expect(() => writer.add([chunk('more tern', vector(1, 1, 1, 1, 1, 1, 1, 1))])).toThrow(lost);
      expect(() => writer.finish()).toThrow(lost);
      expect(() => writer.discard()).not.toThrow();
      expect(() => staging.open(doc('b.md'))).toThrow(lost);
      expect(() => (staging as unknown as { seal(): string }).seal()).toThrow(lost);
    } finally {
      staging.dispose();
    }
  });

  /** `count` chunks in one document, staged in batches of 1,000. */
  function stageMany(source: string, count: number, word: string) {
    const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
    const writer = staging.open(doc(source));
    for (let at = 0; at < count; at += 1_000) {
      writer.add(
        Array.from({ length: Math.min(1_000, count - at) }, (_, k) =>
          chunk(`${word} ${at + k}`, vector(1, (at + k) % 5, -1, 1, 1, 1, 1, 1)),
        ),
      );
    }
    writer.finish();
    return staging;
  }
  describe('on its own thread', () => {
    const options = { ...OPTIONS, maxChunks: 100_000 };

    it('lets this thread run and read the knowledge base as it was until the commit is done', async () => {
      await stageAndCommit([
        { doc: doc('before.md'), chunks: [chunk('early puffin', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      const staging = stageMany('many.jsonl', 20_000, 'gull');
      const seen: number[] = [];
      let running = true;
      // Each turn of the event loop reads the chunk count through this thread's connection.
      const tick = () => {
        seen.push(db().prepare(`SELECT count(*) FROM chunks`).pluck().get() as number);
        if (running) setImmediate(tick);
      };
      try {
        const committing = services.knowledgeBase.commit(listingId, staging, options);
        setImmediate(tick);
        const result = await committing;
        running = false;
        expect(result.chunkCount).toBe(20_001);
      } finally {
        staging.dispose();
      }
      // The thread ran while the commit did (a commit on it would have let no turn run before its end),
      // and saw the committed state only at once: never a part of the 20,000 chunks.
      expect(seen.length).toBeGreaterThan(1);
      expect(seen[0]).toBe(1);
      expect(new Set(seen.filter((n) => n !== 1 && n !== 20_001))).toEqual(new Set());
      expect(counts()).toMatchObject({ chunks: 20_001, embeddings: 20_001, codes: 20_001, vectors: 20_001 });
    });

    it('copies the committed pages into the database file after answering (the checkpoint)', async () => {
      const file = join(dir.path, DATABASE_FILE);
      const before = statSync(file).size;
      const staging = stageMany('pages.jsonl', 5_000, 'petrel');
      try {
        await services.knowledgeBase.commit(listingId, staging, options);
      } finally {
        staging.dispose();
      }
      // Nothing on this thread writes or checkpoints: only the commit's worker can grow the file.
      await services.knowledgeBase.settled();
      expect(statSync(file).size).toBeGreaterThan(before + 1_000_000);
      expect(fullText('petrel')).toHaveLength(5_000);
    });

    it('runs commits started together one after the other, both complete', async () => {
      const wallet = services.wallets.defaultWallet().address;
      const other = services.listings.create(
        { title: 'Other', accessModel: 'one_time', price: 0 },
        wallet,
      ).id;
      const first = stageMany('first.jsonl', 3_000, 'tern');
      const second = stageMany('second.jsonl', 2_000, 'skua');
      try {
        const [a, b] = await Promise.all([
          services.knowledgeBase.commit(listingId, first, options),
          services.knowledgeBase.commit(other, second, options),
        ]);
        expect([a.chunkCount, b.chunkCount]).toEqual([3_000, 2_000]);
      } finally {
        first.dispose();
        second.dispose();
      }
      expect(fullText('tern')).toHaveLength(3_000);
      expect(fullText('skua')).toHaveLength(2_000);
      expect(
        db()
          .prepare(`SELECT chunk_count FROM listings WHERE id IN (?, ?) ORDER BY chunk_count`)
          .pluck()
          .all(listingId, other),
      ).toEqual([2_000, 3_000]);
    });

    it('passes a SQLite error on with its code, and the next commit still runs', async () => {
      const staging = stageMany('orphan.jsonl', 10, 'crake');
      try {
        // No such listing: the documents' foreign key refuses the rows.
        await expect(services.knowledgeBase.commit('lst_missing', staging, options)).rejects.toMatchObject({
          code: 'SQLITE_CONSTRAINT_FOREIGNKEY',
          message: expect.stringMatching(/FOREIGN KEY/),
        });
      } finally {
        staging.dispose();
      }
      expect(counts()).toMatchObject({ documents: 0, chunks: 0 });
      await stageAndCommit([
        { doc: doc('after.md'), chunks: [chunk('late rail', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      expect(fullText('rail')).toHaveLength(1);
    });
  });

  describe('a commit under way (documents streamed into it)', () => {
    const options = { ...OPTIONS, maxChunks: 100_000 };
    const integrity = () =>
      db().prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run();

    it("makes this thread's writes fail at once, not wait, while it feeds the commit holding the lock", async () => {
      const title = (t: string) => () => services.listings.update(listingId, { title: t });
      const busyTimeout = () => db().pragma('busy_timeout', { simple: true });
      expect(busyTimeout()).toBe(5000);
      for (const end of ['finish', 'abort'] as const) {
        // Before: the write waited the 5 s busy timeout (the commit meanwhile waiting for this thread's next
        // batch), then failed. With a minute to wait, a write that still waited would time out the test.
        db().pragma('busy_timeout = 60000');
        const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
        try {
          const session = services.knowledgeBase.beginCommit(listingId, staging, options);
          const writer = session.open(doc(`${end}.jsonl`));
          // Taken: the worker has begun its transaction and holds the write lock.
          await writer.add([chunk(`fed ${end} dunlin`, vector(1, 2, 3, 4, 5, 6, 7, 8))]);
          expect(title('fed')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
          writer.finish();
          if (end === 'finish') await session.finish();
          else await session.abort();
        } finally {
          staging.dispose();
        }
        // The connection's own timeout again.
        expect(busyTimeout()).toBe(60000);
        db().pragma('busy_timeout = 5000');
        title(`after ${end}`)();
      }
      expect(fullText('dunlin')).toHaveLength(1);
      expect(services.listings.get(listingId, 'studio').title).toBe('after abort');
    });

    it('tells a write when it can wait for the lock as usual: at once, once the fed commit has ended, or false after its limit', async () => {
      expect(await services.knowledgeBase.writable(10)).toBe(true);
      for (const end of ['finish', 'abort'] as const) {
        const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
        try {
          const session = services.knowledgeBase.beginCommit(listingId, staging, options);
          const writer = session.open(doc(`${end}.jsonl`));
          await writer.add([chunk(`gate ${end} shag`, vector(1, 2, 3, 4, 5, 6, 7, 8))]);
          expect(await services.knowledgeBase.writable(50)).toBe(false);
          let answered: boolean | undefined;
          // What a write let through would see: the commit has ended, not only been fed its last rows.
          let committed = -1;
          const waiting = services.knowledgeBase.writable(60_000).then((ok) => {
            committed = fullText('shag').length;
            return (answered = ok);
          });
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect(answered).toBeUndefined();
          writer.finish();
          const over = end === 'finish' ? session.finish() : session.abort();
          expect(await waiting).toBe(true);
          expect(committed).toBe(1);
          await over;
        } finally {
          staging.dispose();
        }
        expect(await services.knowledgeBase.writable(10)).toBe(true);
      }
      expect(fullText('shag')).toHaveLength(1);
    });

    it('writes the staged documents, then the streamed ones, exactly, and shows nothing before finish', async () => {
      await stageAndCommit([
        { doc: doc('kept.md'), chunks: [chunk('kept puffin', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      const staged = staging.open(doc('staged.md'));
      staged.add([chunk('staged auk', vector(1, -1, 1, 1, 1, 1, 1, 1))]);
      staged.finish();
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        const writer = session.open(doc('streamed.jsonl', { chunking: {} }));
        await writer.add([
          chunk('streamed gannet one', vector(1, 2, 3, 4, 5, 6, 7, 8), { topic: 'sea', line: 1 }),
          // A key the store sets: the store's value wins.
          chunk('streamed gannet two', vector(-1, 2, -3, 4, -5, 6, -7, 8), { source: 'forged', line: 2 }),
        ]);
        await writer.add([chunk('streamed gannet three', vector(0, 0, 0, 0, 0, 0, 0, 0), { line: 3 })]);
        writer.finish({ chunking: {}, warnings: ['one'] });
        expect([session.documentCount, session.chunkCount]).toEqual([1, 3]);
        // Written on the worker, not committed: this connection still sees the knowledge base as it was.
        expect(counts()).toMatchObject({ documents: 1, chunks: 1 });
        expect(fullText('gannet')).toEqual([]);

        const result = await session.finish();
        expect(result).toMatchObject({ documentCount: 3, chunkCount: 5 });
        expect(result.documents.map((d) => [d.source, d.chunks])).toEqual([
          ['staged.md', 1],
          ['streamed.jsonl', 3],
        ]);
        await session.abort(); // after finish: changes nothing
      } finally {
        staging.dispose();
      }
      const documentId = db()
        .prepare(`SELECT id FROM documents WHERE source = 'streamed.jsonl'`)
        .pluck()
        .get() as string;
      const streamed = chunkRows().filter((r) => r.document_id === documentId);
      expect(streamed.map((r) => [r.chunk_index, r.text, r.token_count, r.content_hash])).toEqual([
        [0, 'streamed gannet one', 3, 'hash of streamed gannet one'],
        [1, 'streamed gannet two', 3, 'hash of streamed gannet two'],
        [2, 'streamed gannet three', 3, 'hash of streamed gannet three'],
      ]);
      const reserved = { source: 'streamed.jsonl', format: 'markdown', documentId };
      expect(streamed.map((r) => JSON.parse(r.metadata) as unknown)).toEqual([
        { topic: 'sea', line: 1, ...reserved, chunkIndex: 0 },
        { line: 2, ...reserved, chunkIndex: 1 },
        { line: 3, ...reserved, chunkIndex: 2 },
      ]);
      const [one, two, three] = streamed.map((r) => r.id);
      expect(floats(one!)).toEqual(blob(vector(1, 2, 3, 4, 5, 6, 7, 8)));
      expect(indexed(two!)).toEqual(blob(vector(-1, 2, -3, 4, -5, 6, -7, 8)));
      expect(code(two!)).toEqual(Buffer.from(signCode(vector(-1, 2, -3, 4, -5, 6, -7, 8))));
      // The zero vector stays out of the vector index, as in a staged document.
      expect([floats(three!), code(three!), indexed(three!)]).toEqual([undefined, undefined, undefined]);
      expect(fullText('gannet')).toEqual([one, two, three]);
      expect(
        JSON.parse(
          db().prepare(`SELECT metadata FROM documents WHERE id = ?`).pluck().get(documentId) as string,
        ),
      ).toEqual({ chunking: {}, warnings: ['one'] });
      expect(counts()).toMatchObject({
        documents: 3,
        chunks: 5,
        vectors: 4,
        listing: { document_count: 3, chunk_count: 5 },
      });
      expect(integrity).not.toThrow();
    });

    it('makes each item of a JSON array one document (spec §2), staged or streamed, and counts them', async () => {
      const json = (source: string): StagedDocument => ({ ...doc(source), format: 'json' });
      const v = vector(1, 2, 3, 4, 5, 6, 7, 8);
      // Items 0, 1 and 3 (item 2 had no text); a user's own `item` field was renamed by the parser.
      const items = [
        chunk('heron one', v, { item: 0, title: 'a' }),
        chunk('heron two', v, { item: 0, title: 'a' }),
        chunk('egret', v, { item: 1, item_2: 'theirs' }),
        chunk('stork one', v, { item: 3 }),
        chunk('stork two', v, { item: 3 }),
        // Not as the parser writes them: the item not first, a reserved key (the store's value wins).
        chunk('ibis', v, { title: 'late', item: 4 }),
        chunk('crane', v, { item: 5, source: 'forged' }),
      ];
      await stageAndCommit([{ doc: doc('notes.md'), chunks: [chunk('plain tern', v)] }]);
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      const staged = staging.open(json('staged.json'));
      staged.add(items.slice(0, 3));
      staged.add(items.slice(3));
      staged.finish();
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        const writer = session.open(json('streamed.json'));
        // An item's chunks across two batches.
        await writer.add(items.slice(0, 1));
        await writer.add(items.slice(1));
        writer.finish();
        // A single object is one item, so one document.
        const single = session.open(json('single.json'));
        await single.add([chunk('lone crane', v, { item: 0 })]);
        single.finish();
        const result = await session.finish();
        // notes.md 1, staged.json 5, streamed.json 5, single.json 1.
        expect(result).toMatchObject({ documentCount: 12, chunkCount: 16 });
      } finally {
        staging.dispose();
      }
      const idOf = (source: string) =>
        db().prepare(`SELECT id FROM documents WHERE source = ?`).pluck().get(source) as string;
      for (const source of ['staged.json', 'streamed.json']) {
        const id = idOf(source);
        const rows = chunkRows().filter((r) => r.document_id === id);
        expect(rows.map((r) => r.chunk_index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
        expect(rows.map((r) => JSON.parse(r.metadata) as unknown)).toEqual([
          { item: 0, title: 'a', source, format: 'json', documentId: `${id}.0`, chunkIndex: 0 },
          { item: 0, title: 'a', source, format: 'json', documentId: `${id}.0`, chunkIndex: 1 },
          { item: 1, item_2: 'theirs', source, format: 'json', documentId: `${id}.1`, chunkIndex: 0 },
          { item: 3, source, format: 'json', documentId: `${id}.3`, chunkIndex: 0 },
          { item: 3, source, format: 'json', documentId: `${id}.3`, chunkIndex: 1 },
          { title: 'late', item: 4, source, format: 'json', documentId: `${id}.4`, chunkIndex: 0 },
          { item: 5, source, format: 'json', documentId: `${id}.5`, chunkIndex: 0 },
        ]);
        // Appended to the staged text as it was, or written anew: the same text as JSON.stringify's.
        for (const r of rows) expect(r.metadata).toBe(JSON.stringify(JSON.parse(r.metadata)));
      }
      const single = chunkRows().find((r) => r.text === 'lone crane')!;
      expect(JSON.parse(single.metadata)).toMatchObject({
        documentId: `${idOf('single.json')}.0`,
        chunkIndex: 0,
      });

      const repository = new SqliteDocumentRepository(db());
      expect(repository.list(listingId).map((d) => [d.source, d.documentCount, d.chunkCount])).toEqual([
        ['notes.md', 1, 1],
        ['single.json', 1, 1],
        ['staged.json', 5, 7],
        ['streamed.json', 5, 7],
      ]);
      expect(repository.sizes()).toEqual([{ listingId, documentCount: 12, chunkCount: 16, bytes: 400 }]);
      expect(counts().listing).toEqual({ document_count: 12, chunk_count: 16 });
      // Deleting the file deletes its items' documents.
      expect(repository.delete(idOf('staged.json'))).toMatchObject({ documentCount: 7, chunkCount: 9 });
      expect(counts().listing).toEqual({ document_count: 7, chunk_count: 9 });
      expect(integrity).not.toThrow();
    });

    it('writes each streamed vector, float blob and sign code to its own chunk, zero vectors left out', async () => {
      // 123 chunks in two batches; every seventh vector is zero and stays out.
      const vectors = Array.from({ length: 123 }, (_, i) =>
        i % 7 === 3 ? vector(0, 0, 0, 0, 0, 0, 0, 0) : vector(i, -i, (i % 5) - 2, 1, -1, i % 3, 2, -(i % 4)),
      );
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        const writer = session.open(doc('groups.jsonl'));
        await writer.add(vectors.slice(0, 77).map((v, i) => chunk(`group auk ${i}`, v)));
        await writer.add(vectors.slice(77).map((v, i) => chunk(`group auk ${77 + i}`, v)));
        writer.finish();
        await session.finish();
      } finally {
        staging.dispose();
      }
      const rows = chunkRows();
      expect(rows.map((r) => r.text)).toEqual(vectors.map((_, i) => `group auk ${i}`));
      rows.forEach((r, i) => {
        const v = vectors[i]!;
        if (i % 7 === 3) {
          expect([floats(r.id), code(r.id), indexed(r.id)]).toEqual([undefined, undefined, undefined]);
        } else {
          expect(floats(r.id)).toEqual(blob(v));
          expect(indexed(r.id)).toEqual(blob(v));
          expect(code(r.id)).toEqual(Buffer.from(signCode(v)));
        }
      });
      const nonZero = vectors.filter((_, i) => i % 7 !== 3).length;
      expect(counts()).toMatchObject({ chunks: 123, embeddings: nonZero, codes: nonZero, vectors: nonZero });
    });

    it('replaces a source when its streamed version is finished, and keeps it when that one is discarded', async () => {
      await stageAndCommit([
        { doc: doc('a.jsonl'), chunks: [chunk('old otter', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
        { doc: doc('b.jsonl'), chunks: [chunk('old badger', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      const oldA = fullText('otter');
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        const a = session.open(doc('a.jsonl'));
        await a.add([chunk('new otter', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
        a.discard();
        const b = session.open(doc('b.jsonl'));
        await b.add([chunk('new badger', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
        b.finish();
        expect(session.documentCount).toBe(1);
        const result = await session.finish();
        expect(result).toMatchObject({ documentCount: 2, chunkCount: 2 });
      } finally {
        staging.dispose();
      }
      expect(chunkRows().map((r) => r.text)).toEqual(['old otter', 'new badger']);
      expect(fullText('otter')).toEqual(oldA);
      expect(fullText('new')).toHaveLength(1);
      expect(fullText('old')).toEqual(oldA);
      expect(counts()).toMatchObject({ documents: 2, chunks: 2, embeddings: 2, codes: 2, vectors: 2 });
      expect(integrity).not.toThrow();
    });

    /** 120 staged documents of two chunks, then 120 streamed ones; `between` runs after each streamed one. */
    async function commitSmallDocuments(between: (d: number, session: CommitSession) => Promise<void>) {
      const small = (d: number, k: number) =>
        chunk(`cormorant${d} common line ${k}`, vector(1, d, k, 1, 1, 1, 1, 1));
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      for (let d = 0; d < 120; d++) {
        const writer = staging.open(doc(`staged-${d}.md`));
        writer.add([small(d, 0), small(d, 1)]);
        writer.finish();
      }
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        for (let d = 120; d < 240; d++) {
          const writer = session.open(doc(`streamed-${d}.jsonl`));
          await writer.add([small(d, 0), small(d, 1)]);
          writer.finish();
          await between(d, session);
        }
        return await session.finish();
      } finally {
        staging.dispose();
      }
    }

    it('writes the full text of many small documents as one segment', async () => {
      // FTS5 writes its pending terms out as a segment whenever another statement of the transaction
      // begins: indexed a document at a time, these 240 documents left a segment each (5 after its merges).
      await commitSmallDocuments(async () => {});
      expect(db().prepare(`SELECT count(DISTINCT segid) FROM chunks_fts_idx`).pluck().get()).toBe(1);
      expect(fullText('common')).toHaveLength(480);
      expect(integrity).not.toThrow();
    });

    it('indexes a range once a megabyte of text waits, and the rest when it commits', async () => {
      const filler = 'tern '.repeat(800); // 4,000 characters
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        const writer = session.open(doc('long.jsonl'));
        // 100 chunks, 400,000 characters a batch: past FTS_RANGE_CHARS after the third, indexed then; the
        // fourth is indexed when the commit ends.
        for (let batch = 0; batch < 4; batch++) {
          await writer.add(
            Array.from({ length: 100 }, (_, k) =>
              chunk(`albatross${batch * 100 + k} ${filler}`, vector(1, batch, k, 1, 1, 1, 1, 1)),
            ),
          );
        }
        writer.finish();
        await session.finish();
      } finally {
        staging.dispose();
      }
      expect(integrity).not.toThrow();
      expect(fullText('tern')).toHaveLength(400);
      for (const i of [0, 99, 100, 299, 300, 399]) expect(fullText(`albatross${i}`)).toHaveLength(1);
    });

    it('indexes exactly the chunks kept when documents are discarded or replaced while their text waits', async () => {
      await stageAndCommit([
        { doc: doc('replaced.md'), chunks: [chunk('replaced shag', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      const result = await commitSmallDocuments(async (d, session) => {
        if (d === 150) {
          // Discarded after its chunks were written, before they were indexed.
          const gone = session.open(doc('discarded.jsonl'));
          await gone.add([chunk('discarded petrel', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
          gone.discard();
        }
        if (d === 200) {
          // A document of this commit replaced in it: its rows are deleted before they were indexed.
          const twice = session.open(doc('streamed-130.jsonl'));
          await twice.add([chunk('second shearwater', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
          twice.finish();
        }
        if (d === 239) {
          const again = session.open(doc('replaced.md'));
          await again.add([chunk('replacing shag', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
          again.finish();
        }
      });
      expect(result).toMatchObject({ documentCount: 241, chunkCount: 480 });
      expect(integrity).not.toThrow();
      for (const d of [0, 119, 120, 151, 239]) expect(fullText(`cormorant${d}`)).toHaveLength(2);
      expect(fullText('cormorant130')).toEqual([]);
      expect(fullText('shearwater')).toHaveLength(1);
      expect(fullText('common')).toHaveLength(478);
      expect(fullText('petrel')).toEqual([]);
      expect(fullText('shag')).toHaveLength(1);
      expect(
        chunkRows()
          .filter((r) => r.text.includes('shag'))
          .map((r) => r.text),
      ).toEqual(['replacing shag']);
    });

    describe('a streamed import replacing its old version, most of the knowledge base', () => {
      const triggerRow = () => fullTextTriggerRow(db());
      /** The vector table's row in the schema: a new rowid once dropped and made again. */
      const vectorTableRow = () =>
        db().prepare(`SELECT rowid FROM sqlite_master WHERE name = ?`).pluck().get(vecTable()) as number;
      const texts = (word: string, n: number) =>
        Array.from({ length: n }, (_, k) =>
          chunk(`${word}${k} ${word} line`, vector(1, k, 1, 1, 1, 1, 1, 1)),
        );

      /**
       * The old import (30 chunks) and a note (2) committed; then, in one commit, the import streamed again
       * (60 chunks in three batches) with a small streamed document discarded and another finished
       * meanwhile, then `end`.
       */
      async function replaceImport(end: 'finish' | 'discard', batches = 3) {
        await stageAndCommit([
          { doc: doc('import.jsonl'), chunks: texts('otter', 30) },
          { doc: doc('notes.md'), chunks: texts('badger', 2) },
        ]);
        // A schema object after the vector table, so that the table made again takes a new rowid.
        db().exec(`CREATE TABLE after_vectors (x)`);
        const before = { trigger: triggerRow(), vectors: vectorTableRow() };
        const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
        try {
          const session = services.knowledgeBase.beginCommit(listingId, staging, options);
          const again = session.open(doc('import.jsonl'));
          for (let batch = 0; batch < batches; batch++) {
            await again.add(texts('heron', 60).slice(batch * 20, batch * 20 + 20));
            if (batch === 0) {
              // Discarded while the import's rows wait: they are indexed first, its own removed by trigger.
              const gone = session.open(doc('gone.jsonl'));
              await gone.add(texts('tern', 2));
              gone.discard();
            }
          }
          const other = session.open(doc('other.jsonl'));
          await other.add(texts('stork', 5));
          other.finish();
          again[end]();
          await session.finish();
        } finally {
          staging.dispose();
        }
        return before;
      }

      it('drops the old rows by building both indexes again, which take in the new rows once', async () => {
        const before = await replaceImport('finish');
        // The trigger was dropped and made again around FTS5's rebuild (the old code removed the 30 old rows
        // through it, one by one, after indexing the 60 new ones).
        const after = triggerRow();
        expect(after.rowid).not.toBe(before.trigger.rowid);
        expect(after.sql).toBe(before.trigger.sql);
        // The vector table was made again and refilled (the old code inserted the 65 new vectors as they
        // came, then deleted the 30 old ones row by row: the new version is larger than the old).
        expect(vectorTableRow()).not.toBe(before.vectors);
        expectVectorsOfRecord(db(), listingId);
        expect(integrity).not.toThrow();
        expect(fullText('otter')).toEqual([]);
        expect(fullText('heron')).toHaveLength(60);
        expect(fullText('heron59')).toHaveLength(1);
        expect(fullText('stork')).toHaveLength(5);
        expect(fullText('tern')).toEqual([]);
        expect(fullText('badger')).toHaveLength(2);
        expect(counts()).toMatchObject({
          documents: 3,
          chunks: 67,
          embeddings: 67,
          codes: 67,
          vectors: 67,
          listing: { document_count: 3, chunk_count: 67 },
        });
        // The trigger made again still removes a later deletion's full-text rows.
        await stageAndCommit([{ doc: doc('other.jsonl'), chunks: texts('egret', 1) }]);
        expect(fullText('stork')).toEqual([]);
        expect(fullText('egret')).toHaveLength(1);
        expect(integrity).not.toThrow();
        expectVectorsOfRecord(db(), listingId);
      });

      it('keeps the old version and its full text when the new one is discarded', async () => {
        await replaceImport('discard');
        expect(integrity).not.toThrow();
        expect(fullText('otter')).toHaveLength(30);
        expect(fullText('heron')).toEqual([]);
        expect(fullText('tern')).toEqual([]);
        // Finished while the import's rows waited unindexed, indexed when the import was discarded (by
        // FTS5's rebuild: the discarded rows were most of the database).
        expect(fullText('stork')).toHaveLength(5);
        expect(counts()).toMatchObject({ documents: 3, chunks: 37, embeddings: 37, vectors: 37 });
        expectVectorsOfRecord(db(), listingId);
      });

      it('keeps the old version when the new one is discarded early, and puts the vectors that waited in', async () => {
        // 20 new rows, fewer than the rest: the discarded ones go row by row, and the 5 vectors of the
        // document finished meanwhile, kept out of the vector index until then, are inserted.
        await replaceImport('discard', 1);
        expect(integrity).not.toThrow();
        expect(fullText('otter')).toHaveLength(30);
        expect(fullText('heron')).toEqual([]);
        expect(fullText('stork')).toHaveLength(5);
        expect(counts()).toMatchObject({ documents: 3, chunks: 37, embeddings: 37, vectors: 37 });
        expectVectorsOfRecord(db(), listingId);
      });
    });

    it('rolls back on abort, even with documents finished; the next commit runs', async () => {
      await stageAndCommit([
        { doc: doc('kept.md'), chunks: [chunk('kept heron', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, options);
        const writer = session.open(doc('kept.md'));
        await writer.add([chunk('replacing heron', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
        writer.finish();
        await session.abort();
        await expect(session.finish()).rejects.toThrow(/aborted/);
        expect(() => session.open(doc('late.md'))).toThrow(/over/);
      } finally {
        staging.dispose();
      }
      expect(chunkRows().map((r) => r.text)).toEqual(['kept heron']);
      expect(counts()).toMatchObject({
        documents: 1,
        chunks: 1,
        listing: { document_count: 1, chunk_count: 1 },
      });
      await stageAndCommit([
        { doc: doc('after.md'), chunks: [chunk('late rail', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      expect(fullText('rail')).toHaveLength(1);
      expect(integrity).not.toThrow();
    });

    it('fails the batches waiting and the finish with the error of the worker', async () => {
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        // No such listing: the streamed document's row is refused by its foreign key.
        const session = services.knowledgeBase.beginCommit('lst_missing', staging, options);
        const writer = session.open(doc('orphan.jsonl'));
        const refused = { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' };
        await expect(
          writer.add([chunk('orphan crake', vector(1, 1, 1, 1, 1, 1, 1, 1))]),
        ).rejects.toMatchObject(refused);
        await expect(writer.add([chunk('more crake', vector(1, 1, 1, 1, 1, 1, 1, 1))])).rejects.toMatchObject(
          refused,
        );
        writer.finish();
        await expect(session.finish()).rejects.toMatchObject(refused);
        await session.abort();
      } finally {
        staging.dispose();
      }
      expect(counts()).toMatchObject({ documents: 0, chunks: 0 });
    });

    it('checks the limits at finish and leaves the knowledge base as it was', async () => {
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, { ...options, maxChunks: 2 });
        const writer = session.open(doc('big.jsonl'));
        await writer.add(
          ['one', 'two', 'three'].map((w) => chunk(`${w} ibis`, vector(1, 1, 1, 1, 1, 1, 1, 1))),
        );
        writer.finish();
        await expect(session.finish()).rejects.toBeInstanceOf(ChunkLimitExceeded);
      } finally {
        staging.dispose();
      }
      expect(counts()).toMatchObject({ documents: 0, chunks: 0, vectors: 0 });
    });

    it('marks the upload it completes in its own transaction, and commits nothing for one not in progress', async () => {
      const uploads = new SqliteUploadRepository(db());
      const wallet = services.wallets.defaultWallet().address;
      const at = '2026-11-26T00:00:00.000Z';
      const base: UploadRecord = {
        uploadId: '',
        listingId,
        wallet,
        status: 'processing',
        config: {},
        progress: { stage: 'storing', filesDone: 1, filesTotal: 1, bytesDone: 9, bytesTotal: 9, chunks: 0 },
        files: [],
        documentCount: null,
        chunkCount: null,
        error: null,
        createdAt: at,
        updatedAt: at,
      };
      const files = [{ source: 'up.jsonl', format: 'jsonl', status: 'ingested' as const, chunks: 2 }];
      const commitWith = async (uploadId: string, word: string) => {
        const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
        try {
          const session = services.knowledgeBase.beginCommit(listingId, staging, options);
          const writer = session.open(doc(`${word}.jsonl`));
          await writer.add([1, 2].map((n) => chunk(`${word} ${n}`, vector(n, 1, 1, 1, 1, 1, 1, 1))));
          writer.finish();
          // Seen from this connection while the commit is open: not completed yet.
          expect(uploads.findById(uploadId)?.status).not.toBe('completed');
          return await session.finish({
            uploadId,
            files,
            progress: { ...base.progress, stage: 'done' },
            updatedAt: '2026-11-26T00:00:05.000Z',
          });
        } finally {
          staging.dispose();
        }
      };
      await stageAndCommit([
        { doc: doc('before.md'), chunks: [chunk('before', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);

      uploads.insert({ ...base, uploadId: 'upl_done' });
      await expect(commitWith('upl_done', 'shearwater')).resolves.toMatchObject({
        documentCount: 2,
        chunkCount: 3,
      });
      expect(uploads.findById('upl_done')).toMatchObject({
        status: 'completed',
        files,
        // The knowledge base's totals after the commit, as the commit counted them.
        documentCount: 2,
        chunkCount: 3,
        progress: { stage: 'done', chunks: 3, filesDone: 1 },
        error: null,
        updatedAt: '2026-11-26T00:00:05.000Z',
      });

      // An upload already ended (a second process recovered it as failed): the documents are not committed.
      uploads.insert({ ...base, uploadId: 'upl_failed', status: 'failed' });
      await expect(commitWith('upl_failed', 'petrel')).rejects.toThrow(/upl_failed' is not in progress/);
      await expect(commitWith('upl_missing', 'petrel')).rejects.toThrow(/upl_missing' is not in progress/);
      expect(fullText('petrel')).toEqual([]);
      expect(counts()).toMatchObject({ documents: 2, chunks: 3 });
      expect(uploads.findById('upl_failed')?.status).toBe('failed');
    });

    it('waits for the commit before it to answer, then starts', async () => {
      const first = stageMany('first.jsonl', 5_000, 'tern');
      const second = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const committing = services.knowledgeBase.commit(listingId, first, options);
        const session = services.knowledgeBase.beginCommit(listingId, second, options);
        const streamed = session.open(doc('second.jsonl'));
        const taken = streamed.add([chunk('skua', vector(1, 1, 1, 1, 1, 1, 1, 1))]);
        streamed.finish();
        const [a, b] = await Promise.all([committing, session.finish(), taken]);
        expect([a.chunkCount, b.chunkCount]).toEqual([5_000, 5_001]);
      } finally {
        first.dispose();
        second.dispose();
      }
      expect(fullText('tern')).toHaveLength(5_000);
      expect(fullText('skua')).toHaveLength(1);
    });
  });

  describe('a bulk commit', () => {
    const WORDS = ['heron', 'otter', 'walrus', 'lynx', 'marten', 'ibis', 'stoat', 'vole'];
    const bulkOptions: CommitOptions = { ...OPTIONS, maxChunks: 2 * BULK_FTS_MIN_CHUNKS };

    /** BULK_FTS_MIN_CHUNKS chunks in one document, staged in batches of 1,000. */
    function stageBulk() {
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      const writer = staging.open(doc('bulk.jsonl'));
      for (let at = 0; at < BULK_FTS_MIN_CHUNKS; at += 1_000) {
        writer.add(
          Array.from({ length: 1_000 }, (_, k) => {
            const i = at + k;
            return chunk(`row ${i} ${WORDS[i % WORDS.length]} w${i}`, vector(1, i % 7, -1, 1, 1, 1, 1, 1));
          }),
        );
      }
      writer.finish();
      return staging;
    }
    /** The full-text settings stored (none until a bulk commit writes them). */
    const ftsSettings = () =>
      Object.fromEntries(
        (
          db().prepare(`SELECT k, v FROM chunks_fts_config WHERE k IN ('automerge', 'hashsize')`).all() as {
            k: string;
            v: number;
          }[]
        ).map((r) => [r.k, r.v]),
      );
    const DEFAULTS = { automerge: 4, hashsize: 1024 * 1024 };

    // The commit runs on its own connection (commitWorker.mjs), so only the stored settings are seen here:
    // the bulk path is the only one that writes them, and it writes the defaults back last.
    it('sets full-text merging for its rows, then the defaults, and leaves a sound index', async () => {
      const staging = stageBulk();
      try {
        await services.knowledgeBase.commit(listingId, staging, bulkOptions);
      } finally {
        staging.dispose();
      }
      expect(ftsSettings()).toEqual(DEFAULTS);
      expect(() =>
        db().prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run(),
      ).not.toThrow();
      const found = db()
        .prepare(
          `SELECT c.text FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?`,
        )
        .pluck()
        .all('w9999');
      expect(found).toEqual(['row 9999 vole w9999']);
      expect(
        db().prepare(`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'heron'`).pluck().get(),
      ).toBe(BULK_FTS_MIN_CHUNKS / WORDS.length);
    });

    it('leaves the setting untouched when the commit fails after indexing', async () => {
      const staging = stageBulk();
      try {
        await expect(
          services.knowledgeBase.commit(listingId, staging, {
            ...bulkOptions,
            maxChunks: BULK_FTS_MIN_CHUNKS - 1,
          }),
        ).rejects.toThrow(ChunkLimitExceeded);
      } finally {
        staging.dispose();
      }
      expect(ftsSettings()).toEqual({});
      expect(db().prepare(`SELECT count(*) FROM chunks`).pluck().get()).toBe(0);
    });

    it('keeps the default for smaller commits', async () => {
      await stageAndCommit([
        { doc: doc('small.md'), chunks: [chunk('a small heron text', vector(1, 1, 1, 1, 1, 1, 1, 1))] },
      ]);
      expect(ftsSettings()).toEqual({});
    });

    it('switches to the bulk settings part-way through a streamed commit, and back', async () => {
      const staging = services.knowledgeBase.createStaging(join(dir.path, 'tmp'));
      try {
        const session = services.knowledgeBase.beginCommit(listingId, staging, bulkOptions);
        const writer = session.open(doc('streamed-bulk.jsonl'));
        for (let at = 0; at < BULK_FTS_MIN_CHUNKS + 500; at += 1_000) {
          await writer.add(
            Array.from({ length: Math.min(1_000, BULK_FTS_MIN_CHUNKS + 500 - at) }, (_, k) => {
              const i = at + k;
              return chunk(`row ${i} ${WORDS[i % WORDS.length]} w${i}`, vector(1, i % 7, -1, 1, 1, 1, 1, 1));
            }),
          );
        }
        writer.finish();
        await session.finish();
      } finally {
        staging.dispose();
      }
      expect(ftsSettings()).toEqual(DEFAULTS);
      expect(() =>
        db().prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run(),
      ).not.toThrow();
      expect(fullText('w10499')).toHaveLength(1);
      expect(fullText('heron')).toHaveLength(Math.ceil((BULK_FTS_MIN_CHUNKS + 500) / WORDS.length));
    });
  });
});
