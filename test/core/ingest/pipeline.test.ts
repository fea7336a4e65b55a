import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DomainError } from '../../../src/core/errors';
import { countTokens } from '../../../src/core/ingest/chunkers';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { IngestionFailed } from '../../../src/core/ingest/errors';
import { OFFLINE_MODEL } from '../../../src/core/embed/offlineGlove';
import { openServices, type StudioServices } from '../../../src/db/services';
import { FIXTURES, tempDir } from '../../helpers/studio';
import { writeZip } from '../../helpers/zip';

let dir: ReturnType<typeof tempDir>;
let services: StudioServices;
let listingId: string;

beforeEach(() => {
  dir = tempDir();
  services = openServices(join(dir.path, 'data'));
  listingId = services.listings.create(
    { title: 'Fixtures', accessModel: 'one_time', price: 1 },
    services.wallets.defaultWallet().address,
  ).id;
});
afterEach(() => {
  services.close();
  dir.remove();
});

const run = (paths: string[], extra: Partial<Parameters<StudioServices['ingestion']['run']>[0]> = {}) =>
  services.ingestion.run({
    listingId,
    inputs: paths.map((path) => ({ path })),
    atomic: false,
    limits: STUDIO_LIMITS,
    ...extra,
  });

interface ChunkRow {
  id: number;
  text: string;
  metadata: string;
  document_id: string;
}
const chunks = (where = '1 = 1', ...params: unknown[]) =>
  (
    services.db
      .prepare(`SELECT id, text, metadata, document_id FROM chunks WHERE ${where} ORDER BY id`)
      .all(...params) as ChunkRow[]
  ).map((r) => ({ ...r, metadata: JSON.parse(r.metadata) as Record<string, unknown> }));
const chunksOf = (source: string) => chunks(`json_extract(metadata, '$.source') = ?`, source);

describe('ingestion pipeline', () => {
  it('ingests every fixture with the text a reader expects and the metadata of DESIGN §4', async () => {
    // simple.zip holds two files named like fixtures beside it: it gets its own test below.
    const files = readdirSync(FIXTURES)
      .filter((f) => f !== 'simple.zip')
      .map((f) => join(FIXTURES, f));
    const result = await run(files);
    const bySource = Object.fromEntries(result.documents.map((d) => [d.source, d]));

    // One fixture PDF has no text layer: refused with a message telling the user to OCR it; the rest is kept.
    const rejected = result.documents.filter((d) => d.status === 'rejected');
    expect(rejected.map((d) => d.error?.code)).toEqual(['no_text_layer']);
    expect(rejected[0]!.error?.message).toMatch(/OCR/);
    expect(result.documents.filter((d) => d.status === 'ingested').length).toBe(result.documents.length - 1);
    expect(result.committed).toBe(true);

    const listing = services.listings.get(listingId, 'studio');
    expect(listing.chunkCount).toBe(result.chunkCount);
    expect(listing.documentCount).toBe(result.documentCount);
    expect(chunks()).toHaveLength(result.chunkCount);

    for (const c of chunks()) {
      expect(c.metadata).toMatchObject({
        source: expect.any(String),
        format: expect.any(String),
        // Each item of a JSON file is one document (spec §2).
        documentId: c.metadata.format === 'json' ? `${c.document_id}.${c.metadata.item}` : c.document_id,
        chunkIndex: expect.any(Number),
      });
    }
    // simple.json holds 8 items, arbitrary-records.json 3, single-line-object.json one object.
    const ingested = result.documents.filter((d) => d.status === 'ingested').length;
    expect(listing.documentCount).toBe(ingested - 3 + 8 + 3 + 1);
    // A JSON file's outcome says how many documents its items made; other files (and a single object) are one.
    expect(bySource['simple.json']!.documents).toBe(8);
    expect(bySource['single-line-object.json']!.documents).toBeUndefined();
    expect(bySource['codeblock.md']!.documents).toBeUndefined();
    const again = await run([join(FIXTURES, 'arbitrary-records.json')]);
    expect(again.documents).toEqual([
      { source: 'arbitrary-records.json', format: 'json', status: 'unchanged', chunks: 3, documents: 3 },
    ]);
    // Nothing committed: the totals are still the knowledge base's, in documents (not files).
    expect(again).toMatchObject({
      committed: false,
      documentCount: listing.documentCount,
      chunkCount: listing.chunkCount,
    });
    const records = chunksOf('arbitrary-records.json');
    expect(records.map((c) => [c.metadata.item, c.metadata.chunkIndex])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    // PDF chunks carry their page number.
    const pdf = chunksOf('layout-parser-paper-fast.pdf');
    expect(pdf.length).toBeGreaterThan(1);
    expect(pdf.every((c) => typeof c.metadata.page === 'number')).toBe(true);
    expect(new Set(pdf.map((c) => c.metadata.page)).size).toBeGreaterThan(1);
    // CSV: one chunk per row, columns as metadata.
    const cups = chunksOf('stanley-cups.csv');
    expect(cups.length).toBe(bySource['stanley-cups.csv']!.chunks);
    expect(cups[0]!.metadata.row).toBe(1);
    expect(Object.keys(cups[0]!.metadata).length).toBeGreaterThan(5);
    // Headers and footers of HTML are stripped; headings become the heading path.
    const html = chunksOf('fake-html-with-footer-and-header.html');
    const htmlText = html.map((c) => c.text).join('\n');
    expect(htmlText).toContain('My first paragraph.');
    expect(htmlText).not.toMatch(/Header|Footer/);
    expect(html[0]!.metadata.headings).toEqual(['My First Heading']);
    // Umlauts survive.
    expect(
      chunksOf('umlauts-utf8.md')
        .map((c) => c.text)
        .join(' '),
    ).toMatch(/[äöüÄÖÜß]/);
    // Vectors are stored in the listing's sqlite-vec table, one per chunk except the few whose text has no
    // word the offline model knows (zero vectors stay out of the index).
    const { table_name } = services.db
      .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`)
      .get(listingId) as { table_name: string };
    const vectors = (services.db.prepare(`SELECT count(*) AS n FROM ${table_name}`).get() as { n: number }).n;
    expect(vectors).toBeLessThanOrEqual(result.chunkCount);
    expect(vectors).toBeGreaterThan(result.chunkCount * 0.9);
  });

  it("leaves unchanged files alone and replaces a changed file's chunks", async () => {
    const md = join(dir.path, 'notes.md');
    writeFileSync(md, '# Tides\n\nThe moon pulls the oceans.\n');
    const first = await run([md]);
    expect(first.documents[0]).toMatchObject({ source: 'notes.md', status: 'ingested' });
    const before = chunks();

    const again = await run([md]);
    expect(again.documents[0]).toMatchObject({ status: 'unchanged' });
    expect(again.committed).toBe(false);
    expect(chunks()).toEqual(before);

    writeFileSync(md, '# Tides\n\nThe sun pulls the oceans too.\n');
    const changed = await run([md]);
    expect(changed.documents[0]!.status).toBe('ingested');
    const after = chunks();
    expect(after.map((c) => c.text).join(' ')).toContain('sun pulls');
    expect(after.map((c) => c.text).join(' ')).not.toContain('moon');
    expect(services.listings.get(listingId, 'studio').documentCount).toBe(1);

    // Another chunking configuration is a change too.
    expect(
      (await run([md], { chunking: { strategy: 'fixed', chunkSize: 64, chunkOverlap: 8 } })).documents[0]!
        .status,
    ).toBe('ingested');
  });

  it('replaces a document stored under the decomposed spelling of a name by its new version', async () => {
    const composed = 'caf\u00e9.md';
    const decomposed = 'cafe\u0301.md';
    const md = join(dir.path, decomposed);
    writeFileSync(md, '# Menu\n\nCroissants every morning.\n');
    expect((await run([md])).documents[0]).toMatchObject({ source: composed, status: 'ingested' });
    // As a knowledge base ingested before names were composed holds it.
    services.db.prepare(`UPDATE documents SET source = ? WHERE listing_id = ?`).run(decomposed, listingId);

    const copy = join(dir.path, 'windows');
    mkdirSync(copy);
    copyFileSync(md, join(copy, composed));
    expect((await run([join(copy, composed)])).documents[0]).toMatchObject({ status: 'unchanged' });

    writeFileSync(join(copy, composed), '# Menu\n\nBaguettes every evening.\n');
    const changed = await run([join(copy, composed)]);
    expect(changed.documents[0]).toMatchObject({ source: composed, status: 'ingested' });
    const docs = services.db.prepare(`SELECT source FROM documents WHERE listing_id = ?`).all(listingId);
    expect(docs).toEqual([{ source: composed }]);
    expect(
      chunks()
        .map((c) => c.text)
        .join(' '),
    ).not.toContain('Croissants');
    expect(services.listings.get(listingId, 'studio').documentCount).toBe(1);
  });

  it('an atomic ingestion with a bad file leaves the knowledge base exactly as it was', async () => {
    const good = join(dir.path, 'good.md');
    writeFileSync(good, '# Good\n\nKept.\n');
    await run([good]);
    const before = chunks();

    const other = join(dir.path, 'other.md');
    writeFileSync(other, '# Other\n\nWould be new.\n');
    const broken = join(dir.path, 'broken.pdf');
    writeFileSync(broken, '%PDF-1.7\nthis is not really a pdf');
    writeFileSync(good, '# Good\n\nChanged, but must not land.\n');
    const failure = await run([good, other, broken], { atomic: true }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(IngestionFailed);
    const outcomes = (failure as IngestionFailed).outcomes;
    expect(outcomes.find((o) => o.source === 'broken.pdf')).toMatchObject({
      status: 'rejected',
      error: { code: 'invalid_document' },
    });
    expect((failure as IngestionFailed).message).toContain('broken.pdf');
    expect(chunks()).toEqual(before);
    expect(services.listings.get(listingId, 'studio').documentCount).toBe(1);
  });

  it('enforces the chunk limit and leaves the knowledge base as it was', async () => {
    const csv = join(dir.path, 'rows.csv');
    writeFileSync(csv, 'name,city\n' + Array.from({ length: 30 }, (_, i) => `n${i},c${i}`).join('\n'));
    const err = await run([csv], { limits: { ...STUDIO_LIMITS, maxChunks: 10 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'chunk_limit_exceeded' });
    expect((err as Error).message).toMatch(/limit is 10.*plan upgrade or contacting support/);
    expect(chunks()).toHaveLength(0);
  });

  it('a failed ingestion returns only once the copies of its originals have ended', async () => {
    // The caller removes the received files next: no copy may still be reading them.
    const store = services.ingestion.sources!;
    const put = store.put.bind(store);
    let copying = 0;
    const spy = vi.spyOn(store, 'put').mockImplementation(async (hash, path) => {
      copying++;
      try {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await put(hash, path);
      } finally {
        copying--;
      }
    });
    try {
      const small = join(dir.path, 'small.md');
      writeFileSync(small, '# Small\n\nOne short paragraph.');
      const csv = join(dir.path, 'rows.csv');
      writeFileSync(csv, 'name,city\n' + Array.from({ length: 30 }, (_, i) => `n${i},c${i}`).join('\n'));
      const err = await run([small, csv], { limits: { ...STUDIO_LIMITS, maxChunks: 10 } }).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'chunk_limit_exceeded' });
      expect(spy).toHaveBeenCalled();
      expect(copying).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a file that would take the knowledge base past its byte limit before staging it', async () => {
    const first = join(dir.path, 'first.md');
    writeFileSync(first, '# First\n\n' + 'alpha beta gamma '.repeat(60));
    await run([first]);
    const before = chunks();
    const existing = services.listings.get(listingId, 'studio');
    // A JSONL file whose only line is broken: staged, it would be rejected as invalid_document.
    const big = join(dir.path, 'big.jsonl');
    writeFileSync(big, '{"text": "x", "embedding": "not a vector"}\n' + ' '.repeat(3000));
    const limits = { ...STUDIO_LIMITS, maxKnowledgeBaseBytes: 2048 };
    const err = await run([big], { limits }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'payload_too_large' });
    expect((err as Error).message).toMatch(
      /^The knowledge base would hold 4(\.\d)? KB of documents; the studio limit is 2 KB per knowledge base \(use a bulk upload above that\)\./,
    );
    expect(chunks()).toEqual(before);
    expect(services.listings.get(listingId, 'studio').documentCount).toBe(existing.documentCount);

    // A new version of a document replaces the old one's bytes: it fits where both would not.
    writeFileSync(first, '# First\n\n' + 'delta epsilon zeta '.repeat(55));
    const replaced = await run([first], { limits });
    expect(replaced.documents.map((d) => d.status)).toEqual(['ingested']);
    expect(services.listings.get(listingId, 'studio').documentCount).toBe(1);
  });

  it('says why a file gave nothing to retrieve: every CSV row skipped, or no text at all', async () => {
    const partial = join(dir.path, 'partial.csv');
    writeFileSync(partial, 'name,notes\nAda,\nBob,\n');
    const one = join(dir.path, 'one-row.csv');
    writeFileSync(one, 'name,notes\n,kept\n');
    const blank = join(dir.path, 'blank.md');
    writeFileSync(blank, '---\ntitle: Only front matter\n---\n');
    const result = await run([partial, one, blank]);
    const messages = Object.fromEntries(result.documents.map((d) => [d.source, d.error?.message]));
    expect(messages).toEqual({
      'partial.csv':
        "partial.csv: all 2 data rows were skipped (row 1: empty required field(s): notes), so there is nothing to retrieve. A row needs every named column by default: fill them in, or name the columns a row needs (Required CSV columns under Chunking on the studio's Ingest page, required_columns in an upload's config, --required-columns with kbstudio ingest).",
      'one-row.csv': expect.stringMatching(
        /^one-row\.csv: its only data row was skipped \(row 1: empty required field\(s\): name\), so there is nothing to retrieve\./,
      ),
      'blank.md': 'blank.md: no text was found in the document, so there is nothing to retrieve.',
    });
    // Asked for the columns that are there, the same file is ingested.
    const chosen = await run([partial], { csvRequiredColumns: ['name'] });
    expect(chosen.documents[0]).toMatchObject({ status: 'ingested', chunks: 2 });
  });

  it('refuses a file over the size limit with payload_too_large naming it', async () => {
    const big = join(dir.path, 'big.md');
    writeFileSync(big, '# Big\n\n' + 'word '.repeat(5000));
    const result = await run([big], { limits: { ...STUDIO_LIMITS, maxFileBytes: 1000 } });
    expect(result.documents[0]).toMatchObject({
      source: 'big.md',
      status: 'rejected',
      error: { code: 'payload_too_large' },
    });
    expect(result.documents[0]!.error!.message).toMatch(/big\.md.*limit/);
    expect(result.committed).toBe(false);
  });

  it('refuses a ZIP with unsupported types whole, naming each type and entry', async () => {
    const zip = await writeZip(join(dir.path, 'mixed.zip'), {
      'docs/a.md': '# A\n\ntext',
      'docs/run.exe': 'MZ',
      'notes.txt': 'plain',
      '__MACOSX/._a.md': 'litter',
      '.DS_Store': 'litter',
    });
    const err = await run([zip]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unsupported_file_type' });
    expect((err as Error).message).toContain('docs/run.exe (.exe)');
    expect((err as Error).message).toContain('notes.txt (.txt)');
    expect((err as Error).message).not.toContain('DS_Store');
    expect(chunks()).toHaveLength(0);
  });

  it('imports pre-built embeddings as given, and names the line with wrong dimensions', async () => {
    const model = services.listings.get(listingId, 'studio').embeddingModel;
    const dims = services.listings.get(listingId, 'studio').dimensions;
    const vec = (seed: number) => Array.from({ length: dims }, (_, i) => Math.sin(seed + i));
    const good = join(dir.path, 'vectors.jsonl');
    writeFileSync(
      good,
      [0, 1, 2]
        .map((i) => JSON.stringify({ text: `chunk ${i}`, embedding: vec(i), metadata: { topic: 't' + i } }))
        .join('\n'),
    );
    const result = await run([good]);
    expect(result.documents[0]).toMatchObject({ status: 'ingested', chunks: 3 });
    const stored = chunks();
    expect(stored.map((c) => c.text)).toEqual(['chunk 0', 'chunk 1', 'chunk 2']);
    expect(stored[1]!.metadata).toMatchObject({ topic: 't1', format: 'jsonl' });
    const { table_name } = services.db
      .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ? AND model = ?`)
      .get(listingId, model) as { table_name: string };
    const blob = (
      services.db.prepare(`SELECT embedding FROM ${table_name} WHERE rowid = ?`).get(stored[1]!.id) as {
        embedding: Buffer;
      }
    ).embedding;
    const back = new Float32Array(blob.buffer, blob.byteOffset, dims);
    expect(Array.from(back)).toEqual(vec(1).map((x) => Math.fround(x)));

    const bad = join(dir.path, 'bad.jsonl');
    writeFileSync(
      bad,
      [
        JSON.stringify({ text: 'a', embedding: vec(0) }),
        '',
        JSON.stringify({ text: 'b', embedding: vec(0).slice(1) }),
      ].join('\n'),
    );
    const refused = await run([bad]);
    expect(refused.documents[0]!.status).toBe('rejected');
    expect(refused.documents[0]!.error!.message).toMatch(/bad\.jsonl.*line 3/);
    expect(chunks()).toHaveLength(3);
  });

  it('imports thousands of lines in batches with their token counts, and refuses a bad line in a later batch', async () => {
    const dims = services.listings.get(listingId, 'studio').dimensions;
    const embedding = Array.from({ length: dims }, (_, i) => Math.cos(i));
    const line = (i: number) =>
      JSON.stringify({ text: `Line ${i}: ${'word '.repeat(i % 40)}end.`, embedding });
    const good = join(dir.path, 'many.jsonl');
    writeFileSync(good, Array.from({ length: 4_500 }, (_, i) => line(i)).join('\n'));

    const result = await run([good]);

    expect(result.documents[0]).toMatchObject({ status: 'ingested', chunks: 4_500 });
    const rows = services.db
      .prepare(`SELECT text, token_count AS tokens, metadata FROM chunks ORDER BY id`)
      .all() as { text: string; tokens: number; metadata: string }[];
    expect(rows).toHaveLength(4_500);
    for (const i of [0, 1, 1_999, 2_000, 4_499]) {
      expect(rows[i]!.text).toBe(`Line ${i}: ${'word '.repeat(i % 40)}end.`);
      expect(rows[i]!.tokens).toBe(countTokens(rows[i]!.text));
      expect(JSON.parse(rows[i]!.metadata)).toMatchObject({ line: i + 1 });
    }

    const bad = join(dir.path, 'bad-late.jsonl');
    const lines = Array.from({ length: 4_500 }, (_, i) => line(i));
    lines[4_000] = JSON.stringify({ text: 'short', embedding: embedding.slice(1) });
    writeFileSync(bad, lines.join('\n'));
    const refused = await run([bad]);
    expect(refused.documents[0]!.status).toBe('rejected');
    expect(refused.documents[0]!.error!.message).toMatch(/^bad-late\.jsonl: line 4001: embedding has/);
    expect(chunks()).toHaveLength(4_500);
  });

  it('ingests a ZIP under its entry names, and refuses a name given twice', async () => {
    const result = await run([join(FIXTURES, 'simple.zip')]);
    expect(result.documents.map((d) => [d.source, d.status])).toEqual([
      ['ideas-page.html', 'ingested'],
      ['stanley-cups.csv', 'ingested'],
    ]);
    const twice = await run([join(FIXTURES, 'simple.zip'), join(FIXTURES, 'stanley-cups.csv')]);
    // The message names the copy that was kept; the refused file, named by its path as given, is listed
    // right after the row of the name it lost.
    const given = join(FIXTURES, 'stanley-cups.csv');
    expect(twice.documents.map((d) => [d.source, d.status])).toEqual([
      ['ideas-page.html', 'unchanged'],
      ['stanley-cups.csv', 'unchanged'],
      [given, 'rejected'],
    ]);
    expect(twice.documents[2]!.error?.message).toBe(
      `${given}: not ingested: the name appears twice in this ingestion, and simple.zip/stanley-cups.csv took it first as "stanley-cups.csv"; rename one of them to keep both.`,
    );
    // The other way round, the refused copy is reported under the path it came from.
    const reversed = await run([join(FIXTURES, 'stanley-cups.csv'), join(FIXTURES, 'simple.zip')]);
    expect(reversed.documents.map((d) => [d.source, d.status])).toContainEqual([
      'simple.zip/stanley-cups.csv',
      'rejected',
    ]);
    expect(reversed.documents.filter((d) => d.source === 'stanley-cups.csv')).toHaveLength(1);
  });

  it('extracts a ZIP found in a folder as one given directly, and still refuses a ZIP inside it', async () => {
    const folder = join(dir.path, 'kb');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    copyFileSync(join(FIXTURES, 'codeblock.md'), join(folder, 'codeblock.md'));
    copyFileSync(join(FIXTURES, 'simple.zip'), join(folder, 'sub', 'Simple.ZIP'));
    const result = await run([folder]);
    expect(result.documents.map((d) => [d.source, d.status])).toEqual([
      ['ideas-page.html', 'ingested'],
      ['kb/codeblock.md', 'ingested'],
      ['stanley-cups.csv', 'ingested'],
    ]);
    expect(chunksOf('stanley-cups.csv').length).toBeGreaterThan(0);

    await writeZip(join(folder, 'sub', 'outer.zip'), { 'inner.zip': { path: join(FIXTURES, 'simple.zip') } });
    const err = await run([folder]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unsupported_file_type' });
    // Named by its path in what was given, and said plainly why.
    expect((err as Error).message).toContain(
      'kb/sub/outer.zip/inner.zip (nested archive: archives inside archives are not unpacked;',
    );
  });

  it('gives each PDF and DOCX read ahead on the worker threads its own outcome and text', async () => {
    const folder = join(dir.path, 'office');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    copyFileSync(join(FIXTURES, 'fake-memo.pdf'), join(folder, 'a-memo.pdf'));
    writeFileSync(join(folder, 'b-broken.pdf'), '%PDF-1.7 nothing else');
    copyFileSync(join(FIXTURES, 'fake.docx'), join(folder, 'c-lorem.docx'));
    writeFileSync(join(folder, 'd-broken.docx'), 'not a zip');
    copyFileSync(join(FIXTURES, 'simple.docx'), join(folder, 'e-simple.docx'));
    copyFileSync(join(FIXTURES, 'fake-memo.pdf'), join(folder, 'f-memo-again.pdf'));

    const result = await run([folder]);

    expect(result.documents.map((d) => [d.source, d.status])).toEqual([
      ['office/a-memo.pdf', 'ingested'],
      ['office/b-broken.pdf', 'rejected'],
      ['office/c-lorem.docx', 'ingested'],
      ['office/d-broken.docx', 'rejected'],
      ['office/e-simple.docx', 'ingested'],
      ['office/f-memo-again.pdf', 'ingested'],
    ]);
    expect(result.documents[1]!.error!.message).toMatch(/^office\/b-broken\.pdf: /);
    expect(result.documents[3]!.error!.message).toMatch(/^office\/d-broken\.docx: /);
    expect(chunksOf('office/c-lorem.docx').map((c) => c.text)).toEqual(['Lorem ipsum dolor sit amet.']);
    expect(chunksOf('office/e-simple.docx')[0]!.text).toMatch(/^These are a few of my favorite things:/);
    for (const memo of ['office/a-memo.pdf', 'office/f-memo-again.pdf']) {
      expect(chunksOf(memo)[0]!.text).toMatch(/^May 5, 2023/);
      expect(chunksOf(memo)[0]!.metadata).toMatchObject({ page: 1, format: 'pdf' });
    }
  });

  it('ingests folders, skipping OS litter', async () => {
    const folder = join(dir.path, 'kb');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    copyFileSync(join(FIXTURES, 'codeblock.md'), join(folder, 'sub', 'codeblock.md'));
    writeFileSync(join(folder, '.DS_Store'), 'x');
    const result = await run([folder]);
    expect(result.documents.map((d) => d.source)).toEqual(['kb/sub/codeblock.md']);
  });

  describe('pre-built embeddings written into the commit under way', () => {
    const embeddingLines = (count: number, word: string) => {
      const dims = services.listings.get(listingId, 'studio').dimensions;
      const embedding = Array.from({ length: dims }, (_, i) => Math.sin(i + 1));
      return Array.from({ length: count }, (_, i) =>
        JSON.stringify({ text: `${word} line ${i}`, embedding }),
      );
    };
    const write = (name: string, content: string[] | string) => {
      const path = join(dir.path, name);
      writeFileSync(path, typeof content === 'string' ? content : content.join('\n'));
      return path;
    };
    const integrity = () =>
      services.db.prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run();

    it('come after the other files, and a file refused part-way leaves its old version', async () => {
      const first = await run([write('a-vectors.jsonl', embeddingLines(2_500, 'walrus'))]);
      expect(first.documents[0]).toMatchObject({ status: 'ingested', chunks: 2_500 });
      const oldIds = chunksOf('a-vectors.jsonl').map((c) => c.id);

      // The new version of a-vectors.jsonl goes wrong at line 2,201, after a batch of 2,000 lines was
      // written into the commit; b-notes.md is parsed and staged first although it sorts after it.
      const broken = embeddingLines(2_500, 'narwhal');
      broken[2_200] = '{"text": "cut off';
      const seen: string[] = [];
      const result = await run(
        [
          write('a-vectors.jsonl', broken),
          write('b-notes.md', '# Notes\n\nThe beluga sings under the ice.'),
          write('c-more.jsonl', embeddingLines(30, 'orca')),
        ],
        { onProgress: (p) => p.stage === 'reading' && p.file && seen.push(p.file) },
      );

      expect(seen).toEqual(['b-notes.md', 'a-vectors.jsonl', 'c-more.jsonl']);
      expect(result.documents.map((d) => [d.source, d.status, d.chunks])).toEqual([
        ['a-vectors.jsonl', 'rejected', 0],
        ['b-notes.md', 'ingested', 1],
        ['c-more.jsonl', 'ingested', 30],
      ]);
      expect(result.documents[0]!.error!.message).toMatch(/^a-vectors\.jsonl: line 2201: not valid JSON/);
      expect(result).toMatchObject({ committed: true, documentCount: 3, chunkCount: 2_531 });
      expect(chunksOf('a-vectors.jsonl').map((c) => c.id)).toEqual(oldIds);
      expect(chunksOf('a-vectors.jsonl')[0]!.text).toBe('walrus line 0');
      expect(chunks(`text LIKE 'narwhal%'`)).toEqual([]);
      expect(chunksOf('c-more.jsonl').map((c) => [c.text, c.metadata.chunkIndex, c.metadata.line])).toEqual(
        Array.from({ length: 30 }, (_, i) => [`orca line ${i}`, i, i + 1]),
      );
      expect(chunksOf('b-notes.md').map((c) => c.text)).toEqual(['Notes\n\nThe beluga sings under the ice.']);
      expect(services.listings.get(listingId, 'studio')).toMatchObject({
        documentCount: 3,
        chunkCount: 2_531,
      });
      expect(integrity).not.toThrow();
    });

    it("are hashed as they are read: the stored hash is the file's, and the same file is unchanged next time", async () => {
      const path = write('hashed.jsonl', embeddingLines(2_100, 'auk'));
      const sha256 = createHash('sha256').update(readFileSync(path)).digest('hex');
      await run([path]);
      const stored = () =>
        services.db.prepare(`SELECT content_hash FROM documents WHERE source = 'hashed.jsonl'`).pluck().get();
      expect(stored()).toBe(sha256);

      const again = await run([path]);
      expect(again.documents[0]).toMatchObject({ status: 'unchanged', chunks: 2_100 });
      // Same size, other bytes: hashed first (it could have been unchanged), then ingested.
      const swapped = embeddingLines(2_100, 'auk');
      swapped[0] = swapped[0]!.replace('auk line 0', 'auk line 9');
      writeFileSync(path, swapped.join('\n'));
      const changed = await run([path]);
      expect(changed.documents[0]).toMatchObject({ status: 'ingested', chunks: 2_100 });
      expect(stored()).toBe(createHash('sha256').update(readFileSync(path)).digest('hex'));
      expect(chunksOf('hashed.jsonl')[0]!.text).toBe('auk line 9');
    });

    it('a cancel while they are written rolls back everything, also files already written', async () => {
      await run([write('kept.md', '# Kept\n\nThe kept note stays.')]);
      const before = chunks();
      const controller = new AbortController();
      const reason = new Error('cancelled by the user');
      const cancelled = run(
        [
          write('first.jsonl', embeddingLines(2_500, 'seal')),
          write('second.jsonl', embeddingLines(4_500, 'tern')),
        ],
        {
          signal: controller.signal,
          // first.jsonl is in the commit's transaction by now; second.jsonl stops at its first batch.
          onProgress: (p) => p.file === 'second.jsonl' && controller.abort(reason),
        },
      );
      await expect(cancelled).rejects.toBe(reason);
      expect(chunks()).toEqual(before);
      expect(services.listings.get(listingId, 'studio')).toMatchObject({ documentCount: 1, chunkCount: 1 });

      // Nothing is left holding the knowledge base: the next ingestion commits.
      const next = await run([write('third.jsonl', embeddingLines(10, 'skua'))]);
      expect(next.documents[0]).toMatchObject({ status: 'ingested', chunks: 10 });
      expect(chunks(`text LIKE 'seal%' OR text LIKE 'tern%'`)).toEqual([]);
      expect(integrity).not.toThrow();
    });
  });

  it('gives the event loop turns while it works through files parsed on this thread', async () => {
    // JSON is parsed on this thread and small files are read at once: without the turns, nothing else
    // (a request to the server, a parser worker's answer) ran until the last of these files was staged.
    // Fewer chunks than begin a commit under way, whose takes would give turns of their own.
    const folder = join(dir.path, 'records');
    mkdirSync(folder);
    const record = (i: number) => ({ id: i, text: `Record ${i} of the harbour log: `.repeat(40) });
    for (let f = 0; f < 60; f++) {
      const records = Array.from({ length: 30 }, (_, i) => record(f * 30 + i));
      writeFileSync(join(folder, `${String(f).padStart(2, '0')}.json`), JSON.stringify(records));
    }
    let filesDoneAtTimer: number | undefined;
    let filesDone = 0;
    const result = await run([folder], {
      onProgress: (p) => {
        filesDone = p.filesDone;
        // From the tenth file on: the first ones wait for the offline model to load.
        if (p.stage === 'reading' && p.file === 'records/10.json') {
          setTimeout(() => (filesDoneAtTimer = filesDone), 0);
        }
      },
    });
    expect(result.documents.filter((d) => d.status === 'ingested')).toHaveLength(60);
    expect(filesDoneAtTimer).toBeDefined();
    expect(filesDoneAtTimer!).toBeLessThan(59);
  });

  describe('files parsed ahead on the worker threads', () => {
    // Many small Markdown and HTML files (all parsed ahead of their turn) around a JSON file parsed on
    // this thread, and an MDX file that fails to parse.
    function writeFolder(): string {
      const folder = join(dir.path, 'many');
      mkdirSync(folder);
      for (let i = 0; i < 40; i++) {
        const n = String(i).padStart(2, '0');
        const name = i % 2 === 0 ? `${n}-note.md` : `${n}-page.html`;
        const body =
          i % 2 === 0
            ? `# Note ${n}\n\nThe tide table of harbour ${n} lists the high waters.\n`
            : `<html><head><title>Page ${n}</title></head><body><h1>Page ${n}</h1><p>The lighthouse ${n} keeps its lamp lit.</p></body></html>`;
        writeFileSync(join(folder, name), body);
      }
      writeFileSync(join(folder, '05-broken.mdx'), '# Broken\n\n<Note>never closed\n');
      copyFileSync(join(FIXTURES, 'simple.json'), join(folder, '11-records.json'));
      return folder;
    }

    it('keep the order of files, give each its own outcome and text, and reject a failed one alone', async () => {
      const folder = writeFolder();
      const result = await run([folder]);

      const sources = readdirSync(folder).sort((a, b) => a.localeCompare(b));
      expect(result.documents.map((d) => d.source)).toEqual(sources.map((f) => `many/${f}`));
      const rejected = result.documents.filter((d) => d.status === 'rejected');
      expect(rejected.map((d) => d.source)).toEqual(['many/05-broken.mdx']);
      expect(rejected[0]!.error).toMatchObject({ code: 'invalid_document' });
      expect(rejected[0]!.error!.message).toMatch(/^many\/05-broken\.mdx: invalid MDX.*Note/);
      expect(result.documents.filter((d) => d.status === 'ingested')).toHaveLength(sources.length - 1);

      expect(chunksOf('many/04-note.md').map((c) => c.text)).toEqual([
        'Note 04\n\nThe tide table of harbour 04 lists the high waters.',
      ]);
      expect(chunksOf('many/33-page.html').map((c) => [c.text, c.metadata.title])).toEqual([
        ['Page 33\n\nThe lighthouse 33 keeps its lamp lit.', 'Page 33'],
      ]);
      // Staged in the order of the files, whatever order their parses ended in.
      const stagedOrder = [...new Set(chunks().map((c) => c.metadata.source as string))];
      expect(stagedOrder).toEqual(
        result.documents.filter((d) => d.status === 'ingested').map((d) => d.source),
      );
    });

    it('a failure while files wait for their turn stages none of them and stores nothing', async () => {
      const folder = writeFolder();
      // Document embeddings wait until the sixth file's chunking fails with an error that stops the
      // ingestion (not a document's own fault), so the files chunked ahead are still waiting then.
      let files = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const offline = services.embedderFor(OFFLINE_MODEL.id);
      const failing = openServices(join(dir.path, 'failing'), {
        embedderFor: () => {
          if (++files === 6) {
            release();
            throw new Error('the embedder is gone');
          }
          return {
            ...offline,
            embed: async (texts, kind) => {
              await gate;
              return offline.embed(texts, kind);
            },
          };
        },
      });
      try {
        const listing = failing.listings.create(
          { title: 'Failing', accessModel: 'one_time', price: 1 },
          failing.wallets.defaultWallet().address,
        ).id;
        const staged: string[] = [];
        const failed = failing.ingestion.run({
          listingId: listing,
          inputs: [{ path: folder }],
          atomic: false,
          limits: STUDIO_LIMITS,
          onProgress: (p) => {
            if (p.stage === 'embedding' && p.file) staged.push(p.file);
          },
        });
        await expect(failed).rejects.toThrow('the embedder is gone');
        // The first file was being staged; the four chunked after it waited, and were not staged.
        expect(staged).toEqual(['many/00-note.md']);
        expect(failing.db.prepare('SELECT COUNT(*) FROM chunks').pluck().get()).toBe(0);
      } finally {
        failing.close();
      }
    });

    it('cancelling while files are parsed ahead stops the ingestion and stores nothing', async () => {
      const folder = writeFolder();
      const controller = new AbortController();
      const reason = new Error('cancelled by the user');
      const staged: string[] = [];
      const cancelled = run([folder], {
        signal: controller.signal,
        onProgress: (p) => {
          if (p.stage === 'embedding' && p.file) staged.push(p.file);
          // The second file is being staged: the files after it are parsed and chunked ahead.
          if (p.stage === 'embedding' && p.file === 'many/01-page.html') controller.abort(reason);
        },
      });
      await expect(cancelled).rejects.toBe(reason);
      expect(staged).toEqual(['many/00-note.md', 'many/01-page.html']);
      expect(chunks()).toEqual([]);
      expect(services.listings.get(listingId, 'studio')).toMatchObject({ documentCount: 0, chunkCount: 0 });

      // The workers are free again: the next ingestion is not queued behind the cancelled files.
      const next = await run([join(folder, '38-note.md'), join(folder, '39-page.html')]);
      expect(next.documents.map((d) => d.status)).toEqual(['ingested', 'ingested']);
      expect(chunksOf('38-note.md').map((c) => c.text)).toEqual([
        'Note 38\n\nThe tide table of harbour 38 lists the high waters.',
      ]);
    });
  });
});
