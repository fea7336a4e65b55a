import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IngestJobSnapshot } from '../../src/core/ingest/jobs';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { MATCH_COUNT_LIMIT } from '../../src/db/repositories/documents';
import { OFFLINE_MODEL } from '../../src/shared/embeddingModels';
import { commitChunks } from '../helpers/commitChunks';
import { FIXTURES, json, studioWithDocuments, tempDir, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let listingId: string;
beforeAll(async () => {
  ({ studio, listingId } = await studioWithDocuments([
    'layout-parser-paper-fast.pdf',
    'umlauts-utf8.md',
    'stanley-cups.csv',
  ]));
});
afterAll(() => studio.close());

const studioFetch = (path: string, init?: RequestInit) => studio.studioFetch(path, init);

/** A document as the list names it. */
interface ListedDoc {
  id: string;
  source: string;
  format: string;
  chunkCount: number;
  documentCount: number;
}

/** A document whole (`GET /studio/documents/:id`). */
interface Doc extends ListedDoc {
  bytes: number;
  contentHash: string;
  sourceKept: boolean;
  metadata: {
    chunking?: { strategy: string; chunkSize: number; chunkOverlap: number; csvRequiredColumns?: string[] };
  };
}

async function documents(): Promise<ListedDoc[]> {
  return (await json(await studioFetch(`/studio/listings/${listingId}/documents`))).data as ListedDoc[];
}

/** The document named `source`, read whole. */
async function wholeDocument(source: string): Promise<Doc> {
  const listed = (await documents()).find((d) => d.source === source)!;
  const res = await studioFetch(`/studio/documents/${listed.id}`);
  expect(res.status).toBe(200);
  return (await json(res)).data as Doc;
}

const reingest = (id: string, body: Record<string, unknown>) =>
  studioFetch(`/studio/documents/${id}/reingest`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

async function settled(jobId: string): Promise<IngestJobSnapshot> {
  for (;;) {
    const job = (await json(await studioFetch(`/studio/jobs/${jobId}`))).data as IngestJobSnapshot;
    if (job.state !== 'running') return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('/studio documents', () => {
  it('lists documents by what the list names them by; one read whole says whether its file was kept', async () => {
    const docs = await documents();
    expect(docs.map((d) => d.source)).toEqual([
      'layout-parser-paper-fast.pdf',
      'stanley-cups.csv',
      'umlauts-utf8.md',
    ]);
    // Slim: no metadata, hash, size or file check per document (30,000 of them were 13 MB, 404 ms).
    for (const d of docs) {
      expect(Object.keys(d).sort()).toEqual(['chunkCount', 'documentCount', 'format', 'id', 'source']);
    }
    expect(docs[0]).toMatchObject({ format: 'pdf', documentCount: 1 });
    expect(docs[0]!.chunkCount).toBeGreaterThan(0);
    const pdf = await wholeDocument('layout-parser-paper-fast.pdf');
    expect(pdf).toMatchObject({ ...docs[0], listingId, sourceKept: true });
    expect(pdf.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(pdf.bytes).toBe((await stat(join(FIXTURES, 'layout-parser-paper-fast.pdf'))).size);
    expect(pdf.metadata.chunking).toEqual({ strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 });

    const whole = await Promise.all(docs.map((d) => wholeDocument(d.source)));
    const sizes = (await json(await studioFetch('/studio/knowledge-bases'))).data as Record<
      string,
      unknown
    >[];
    expect(sizes).toContainEqual({
      listingId,
      documentCount: 3,
      chunkCount: docs.reduce((n, d) => n + d.chunkCount, 0),
      bytes: whole.reduce((n, d) => n + d.bytes, 0),
    });
  });

  it('re-ingests a document from its kept file with new chunking, as a job, keeping the file', async () => {
    const before = await wholeDocument('layout-parser-paper-fast.pdf');
    expect(before.metadata.chunking).toEqual({ strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 });
    const res = await reingest(before.id, { chunkSize: 128, chunkOverlap: 16 });
    const started = await json(res);
    expect(res.status, JSON.stringify(started)).toBe(202);
    expect(started.data.job).toMatchObject({ listingId, state: 'running' });
    const job = await settled(started.data.jobId);
    expect(job.state).toBe('done');
    expect(job.result!.documents).toEqual([
      expect.objectContaining({ source: 'layout-parser-paper-fast.pdf', status: 'ingested' }),
    ]);
    const after = await wholeDocument('layout-parser-paper-fast.pdf');
    expect(after.metadata.chunking).toEqual({ strategy: 'recursive', chunkSize: 128, chunkOverlap: 16 });
    expect(after.chunkCount).toBeGreaterThan(before.chunkCount * 2);
    expect(job.result!.documents[0]!.chunks).toBe(after.chunkCount);
    // The other documents are untouched, and the kept copy is still there for the next time.
    expect((await documents()).length).toBe(3);
    expect(await readFile(studio.services.sources.pathOf(after.contentHash))).toEqual(
      await readFile(join(FIXTURES, 'layout-parser-paper-fast.pdf')),
    );

    // Without settings it keeps the ones the document has: the same bytes and chunking change nothing.
    const again = await json(await reingest(after.id, {}));
    const unchanged = await settled(again.data.jobId);
    expect(unchanged.result!.documents[0]).toMatchObject({ status: 'unchanged', chunks: after.chunkCount });

    // A smaller size alone: the kept overlap (16) does not fit 16 tokens, so the size's default (2).
    const smaller = await reingest(after.id, { chunkSize: 16 });
    expect(smaller.status).toBe(202);
    await settled((await json(smaller)).data.jobId);
    const small = await wholeDocument('layout-parser-paper-fast.pdf');
    expect(small.metadata.chunking).toEqual({ strategy: 'recursive', chunkSize: 16, chunkOverlap: 2 });
    // An overlap the creator does send is still checked, and named.
    const bad = await reingest(small.id, { chunkSize: 16, chunkOverlap: 16 });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toMatch(
      /^chunkOverlap must be an integer from 0 to less than chunkSize \(16\)/,
    );
  });

  it('keeps CSV documents CSV, with their rows, when re-ingested', async () => {
    const csv = (await documents()).find((d) => d.source === 'stanley-cups.csv')!;
    const job = await settled((await json(await reingest(csv.id, { strategy: 'fixed' }))).data.jobId);
    expect(job.result!.documents[0]).toMatchObject({ source: 'stanley-cups.csv', status: 'ingested' });
    // The re-ingested document is a new one under the same name.
    const now = await wholeDocument('stanley-cups.csv');
    expect(now.metadata.chunking).toMatchObject({ strategy: 'fixed', chunkSize: 512 });
    const chunks = (await json(await studioFetch(`/studio/documents/${now.id}/chunks?limit=1`))).data;
    expect(chunks[0].metadata).toMatchObject({ row: 1 });
  });

  it("changes a CSV document's required columns when asked, and keeps them when not", async () => {
    const dir = tempDir();
    try {
      await writeFile(join(dir.path, 'notes.csv'), 'title,notes\nfirst,kept\nsecond,\nthird,\n');
      await studio.services.ingestion.run({
        listingId,
        inputs: [{ path: join(dir.path, 'notes.csv') }],
        csvRequiredColumns: ['notes'],
        atomic: true,
        limits: STUDIO_LIMITS,
      });
    } finally {
      dir.remove();
    }
    const csv = () => wholeDocument('notes.csv');
    const rerun = async (body: Record<string, unknown>) => {
      const res = await reingest((await csv()).id, body);
      expect(res.status).toBe(202);
      return (await settled((await json(res)).data.jobId)).result!.documents[0]!;
    };
    expect((await csv()).metadata.chunking).toMatchObject({ csvRequiredColumns: ['notes'] });
    // Left out: kept, and nothing changed.
    expect(await rerun({})).toMatchObject({ status: 'unchanged' });
    // None: every row is kept.
    expect(await rerun({ csvRequiredColumns: [] })).toMatchObject({ status: 'ingested', chunks: 3 });
    expect((await csv()).metadata.chunking).toMatchObject({ csvRequiredColumns: [] });
    // null: the default again (every named column), recorded as no choice.
    const named = await rerun({ csvRequiredColumns: null });
    expect(named).toMatchObject({ status: 'ingested', chunks: 1 });
    expect(named.skippedRows).toHaveLength(2);
    expect((await csv()).metadata.chunking).not.toHaveProperty('csvRequiredColumns');
    // Only a CSV document has required columns.
    const pdf = (await documents()).find((d) => d.source === 'layout-parser-paper-fast.pdf')!;
    const refused = await reingest(pdf.id, { csvRequiredColumns: ['notes'] });
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.message).toBe(
      "csvRequiredColumns: 'layout-parser-paper-fast.pdf' is not a CSV document (it is pdf).",
    );
  });

  it('answers 409 naming the file when its original was not kept, 404 for an unknown document', async () => {
    const md = await wholeDocument('umlauts-utf8.md');
    await rm(studio.services.sources.pathOf(md.contentHash));
    expect((await wholeDocument('umlauts-utf8.md')).sourceKept).toBe(false);
    const res = await reingest(md.id, {});
    const body = await json(res);
    expect(res.status).toBe(409);
    expect(body.error.code).toBe('conflict');
    expect(body.error.message).toContain('umlauts-utf8.md');
    expect(body.error.message).toContain('drop the file again');

    const missing = await reingest('doc_nope', {});
    expect(missing.status).toBe(404);
  });

  it('refuses chunking settings the chunker would refuse', async () => {
    const pdf = (await documents()).find((d) => d.source === 'layout-parser-paper-fast.pdf')!;
    const res = await reingest(pdf.id, { chunkSize: 64, chunkOverlap: 64 });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toMatch(/chunkOverlap/);
  });
  it("names a JSON item's documentId as an item of its file when asked for it as a document", async () => {
    await studio.services.ingestion.run({
      listingId,
      inputs: [{ path: join(FIXTURES, 'simple.json') }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    const file = (await documents()).find((d) => d.source === 'simple.json')!;
    for (const path of [`/studio/documents/${file.id}.3`, `/studio/documents/${file.id}.3/chunks`]) {
      const res = await studioFetch(path);
      expect(res.status).toBe(404);
      expect((await json(res)).error.message).toBe(
        `No document '${file.id}.3' on its own: it is item 3 of the JSON file 'simple.json' (document '${file.id}'), which the studio keeps, shows and deletes whole; open '${file.id}'.`,
      );
    }
    expect((await studioFetch(`/studio/documents/${file.id}`)).status).toBe(200);
    const unknown = await studioFetch(`/studio/documents/doc_nope.3`);
    expect((await json(unknown)).error.message).toBe("No document 'doc_nope.3'.");
  });

  it('finds no chunk for a search with no word in it, as the API’s lexical search does', async () => {
    const md = (await documents()).find((d) => d.source === 'umlauts-utf8.md')!;
    const search = async (q: string) => {
      const res = await studioFetch(`/studio/documents/${md.id}/chunks?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      return (await json(res)) as { data: unknown[]; pagination: { total: number; hasMore: boolean } };
    };
    const every = await search('');
    expect(every.pagination.total).toBe(md.chunkCount);
    expect((await search('   ')).pagination.total).toBe(md.chunkCount);
    for (const q of ['"', '^', '_', '--', ':', '"^*"']) {
      const none = await search(q);
      expect(none.pagination, q).toEqual({
        total: 0,
        limit: 50,
        offset: 0,
        hasMore: false,
        totalRelation: 'eq',
      });
      expect(none.data, q).toEqual([]);
    }
    // A word among the punctuation is searched for.
    const text = ((every.data[0] as { text: string }).text.match(/\p{L}{4,}/u) ?? [])[0]!;
    expect((await search(`"${text}":`)).pagination.total).toBeGreaterThan(0);
  });
});

describe('/studio chunks of a long document', () => {
  const CHUNKS = MATCH_COUNT_LIMIT + 50;
  let id: string;
  beforeAll(async () => {
    const wallet = studio.services.wallets.defaultWallet().address;
    const big = studio.services.listings.create({ title: 'Big', accessModel: 'one_time', price: 1 }, wallet);
    const vector = Float32Array.from({ length: OFFLINE_MODEL.dimensions }, (_, i) => (i % 7) - 3);
    // `heron` in every chunk, `egret` in every 1,000th.
    const chunks = Array.from({ length: CHUNKS }, (_, i) => {
      const text = `Line ${i}: the heron${i % 1000 ? '' : ' met an egret'} at the pond.`;
      return { text, tokenCount: 9, contentHash: `h${i}`, metadata: {}, vector };
    });
    const result = await commitChunks(studio.services, big.id, 'big.jsonl', chunks, OFFLINE_MODEL);
    id = result.documents[0]!.documentId;
  }, 60_000);

  const page = async (query: string) => {
    const res = await studioFetch(`/studio/documents/${id}/chunks?${query}`);
    expect(res.status).toBe(200);
    const body = (await json(res)) as {
      data: { index: number }[];
      pagination: Record<string, unknown>;
    };
    return { indexes: body.data.map((c) => c.index), pagination: body.pagination };
  };
  const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

  it("pages every chunk to the last, the total the document's", async () => {
    expect(await page(`limit=20&offset=${CHUNKS - 20}`)).toEqual({
      indexes: range(CHUNKS - 20, 20),
      pagination: { total: CHUNKS, limit: 20, offset: CHUNKS - 20, hasMore: false, totalRelation: 'eq' },
    });
    expect((await page('limit=20&offset=5000')).indexes).toEqual(range(5000, 20));
  });

  it(`counts a search's matches up to ${MATCH_COUNT_LIMIT.toLocaleString('en-US')}, then says there are more`, async () => {
    expect(await page('q=heron&limit=20')).toEqual({
      indexes: range(0, 20),
      pagination: { total: MATCH_COUNT_LIMIT, limit: 20, offset: 0, hasMore: true, totalRelation: 'gte' },
    });
    const last = await page(`q=heron&limit=20&offset=${MATCH_COUNT_LIMIT - 20}`);
    expect(last.indexes).toEqual(range(MATCH_COUNT_LIMIT - 20, 20));
    expect(last.pagination).toMatchObject({ total: MATCH_COUNT_LIMIT, hasMore: true, totalRelation: 'gte' });
    // Past the bound, counted to the end of the page: exact once every match is.
    expect(await page(`q=heron&limit=50&offset=${MATCH_COUNT_LIMIT}`)).toEqual({
      indexes: range(MATCH_COUNT_LIMIT, 50),
      pagination: {
        total: CHUNKS,
        limit: 50,
        offset: MATCH_COUNT_LIMIT,
        hasMore: false,
        totalRelation: 'eq',
      },
    });
    expect(await page('q=egret&limit=20')).toEqual({
      indexes: range(0, 11).map((i) => i * 1000),
      pagination: { total: 11, limit: 20, offset: 0, hasMore: false, totalRelation: 'eq' },
    });
  });
});
