import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_MODEL } from '../../src/core/embed/offlineGlove';
import { IngestJobs } from '../../src/core/ingest/jobs';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import type { IngestJobSnapshot } from '../../src/core/ingest/jobs';
import { recoverInterruptedJobs } from '../../src/db/repositories/jobJournal';
import { JobRows } from '../../src/shared/jobRows';
import { buildZip } from '../hardening/forgeZip';
import { commitChunks } from '../helpers/commitChunks';
import { FIXTURES, json, startStudio, tempDir, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
beforeAll(async () => {
  studio = await startStudio();
});
afterAll(() => studio.close());

const studioFetch = (path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('X-Studio-Token', studio.studioToken);
  return fetch(studio.url + path, { ...init, headers });
};

async function fixtureForm(
  files: { fixture: string; name?: string }[],
  options: Record<string, unknown>,
  field = 'files',
) {
  const form = new FormData();
  form.set('options', JSON.stringify(options));
  for (const f of files) {
    const bytes = await readFile(join(FIXTURES, f.fixture));
    form.append(field, new Blob([bytes]), f.fixture);
  }
  return form;
}

/**
 * The SSE stream of a job, read to its end: each event's name, its snapshot as the page rebuilds it
 * (`files` sent as changes: JobRows), and what was sent.
 */
async function followJob(
  jobId: string,
): Promise<{ event: string; job: IngestJobSnapshot; sent: Record<string, unknown> }[]> {
  const res = await studioFetch(`/studio/jobs/${jobId}/events`);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const text = await res.text();
  const rows = new JobRows();
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)![1]!;
      const sent = JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as Record<string, unknown>;
      return { event, job: rows.apply(sent) as unknown as IngestJobSnapshot, sent };
    });
}

async function createListing(title: string): Promise<string> {
  const res = await studioFetch('/studio/listings', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ title, accessModel: 'one_time', price: 1 }),
  });
  return (await json(res)).data.id as string;
}

describe('studio ingestion, preview and documents', () => {
  it('ingests a dropped folder in the background, streams progress, and reports each file', async () => {
    const listingId = await createListing('Ingest me');
    const names = ['layout-parser-paper-fast.pdf', 'loremipsum-flat.pdf', 'stanley-cups.csv'];
    const form = await fixtureForm(
      names.map((fixture) => ({ fixture })),
      { strategy: 'recursive', chunkSize: 256, paths: names.map((n) => `papers/${n}`) },
    );
    const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
    expect(res.status).toBe(202);
    const { jobId } = (await json(res)).data;

    const events = await followJob(jobId);
    const last = events.at(-1)!;
    expect(last.event).toBe('done');
    expect(events.slice(0, -1).every((e) => e.event === 'progress')).toBe(true);
    const stages = new Set(events.map((e) => e.job.progress?.stage));
    expect(stages).toContain('embedding');
    expect(stages).toContain('storing');
    expect(last.job.state).toBe('done');
    // Each progress event sends only the files that changed; the page's copy is every file so far.
    const sources = names.map((n) => `papers/${n}`);
    for (const { event, job, sent } of events.slice(1, -1)) {
      expect(event).toBe('progress');
      expect(sent.files).toBeUndefined();
      const changed = (sent.delta as { files: { changed: unknown[] } }).files.changed;
      expect(changed.length).toBeLessThanOrEqual(2);
      expect(job.files.map((f) => f.source)).toEqual(sources.slice(0, job.files.length));
    }
    expect(events.at(-2)!.job.files.map((f) => f.stage)).toEqual(['processed', 'processed', 'processed']);
    const outcomes = last.job.result!.documents;
    expect(outcomes.map((o) => [o.source, o.status])).toEqual([
      ['papers/layout-parser-paper-fast.pdf', 'ingested'],
      ['papers/loremipsum-flat.pdf', 'rejected'],
      ['papers/stanley-cups.csv', 'ingested'],
    ]);
    expect(outcomes[1]!.error).toMatchObject({ code: 'no_text_layer' });
    expect(outcomes[1]!.error!.message).toContain('OCR');

    // A late reader gets the finished snapshot at once.
    const snapshot = (await json(await studioFetch(`/studio/jobs/${jobId}`))).data as IngestJobSnapshot;
    expect(snapshot.state).toBe('done');
    expect(snapshot.files.map((f) => f.stage)).toEqual(['done', 'done', 'done']);

    const docs = (await json(await studioFetch(`/studio/listings/${listingId}/documents`))).data as {
      id: string;
      source: string;
      chunkCount: number;
    }[];
    expect(docs.map((d) => d.source)).toEqual([
      'papers/layout-parser-paper-fast.pdf',
      'papers/stanley-cups.csv',
    ]);
    const pdf = docs[0]!;
    expect(pdf.chunkCount).toBe(outcomes[0]!.chunks);

    const page = await json(await studioFetch(`/studio/documents/${pdf.id}/chunks?limit=5`));
    expect(page.pagination).toMatchObject({ total: pdf.chunkCount, limit: 5, offset: 0, hasMore: true });
    expect(page.data[0].index).toBe(0);
    expect(page.data[0].metadata.page).toBe(1);
    expect(page.data[0].text).toContain('LayoutParser');
    expect(page.data[0].tokenCount).toBeGreaterThan(0);

    const found = await json(
      await studioFetch(`/studio/documents/${pdf.id}/chunks?q=${encodeURIComponent('toolkit')}`),
    );
    expect(found.pagination.total).toBeGreaterThan(0);
    expect(found.pagination.total).toBeLessThan(pdf.chunkCount);
    for (const chunk of found.data) expect(chunk.text).toMatch(/toolkit/i);
    // FTS syntax in the search box is just words.
    const odd = await studioFetch(`/studio/documents/${pdf.id}/chunks?q=${encodeURIComponent('"NEAR(')}`);
    expect(odd.status).toBe(200);

    const csv = docs[1]!;
    const rows = await json(await studioFetch(`/studio/documents/${csv.id}/chunks?limit=1`));
    expect(rows.data[0].metadata).toMatchObject({ row: 1 });

    const deleted = await studioFetch(`/studio/documents/${pdf.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await json(deleted)).data).toMatchObject({ documentCount: 1, chunkCount: csv.chunkCount });
    const listing = (await json(await studioFetch(`/studio/listings/${listingId}`))).data;
    expect(listing).toMatchObject({ documentCount: 1, chunkCount: csv.chunkCount });
    const left = studio.services.db
      .prepare(`SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH 'LayoutParser'`)
      .get() as { n: number };
    expect(left.n).toBe(0);
    expect((await studioFetch(`/studio/documents/${pdf.id}/chunks`)).status).toBe(404);
  });

  it('takes a folder of more files than the 5,000 it once refused, each under its path', async () => {
    const listingId = await createListing('A documentation site');
    const count = 5_001;
    const form = new FormData();
    const paths = Array.from({ length: count }, (_, i) => `site/section-${i % 10}/page-${i}.md`);
    form.set('options', JSON.stringify({ paths }));
    for (let i = 0; i < count; i++) {
      form.append(
        'files',
        new Blob([`# Page ${i}\n\nThe page numbered ${i} of the site.\n`]),
        `page-${i}.md`,
      );
    }
    const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
    expect(res.status).toBe(202);
    const events = await followJob((await json(res)).data.jobId);
    const last = events.at(-1)!;
    expect(last.job.state).toBe('done');
    const documents = last.job.result!.documents;
    expect(documents).toHaveLength(count);
    expect(documents.every((d) => d.status === 'ingested')).toBe(true);
    expect(documents.map((d) => d.source).sort()).toEqual([...paths].sort());
    // The page's list of files, rebuilt from the events, held every file by the end.
    expect(events.at(-2)!.job.files).toHaveLength(count);
  }, 120_000);

  it('keeps the original of a dropped file by moving the received file, not copying it', async () => {
    const listingId = await createListing('Kept sources');
    const store = studio.services.sources;
    const put = store.put.bind(store);
    const asked: { file: string; move: boolean | undefined }[] = [];
    store.put = (hash, file, options) => {
      asked.push({ file, move: options?.move });
      return put(hash, file, options);
    };
    try {
      const form = await fixtureForm([{ fixture: 'codeblock.md' }], {});
      const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
      const last = (await followJob((await json(res)).data.jobId)).at(-1)!;
      expect(last.job.result!.documents.map((o) => o.status)).toEqual(['ingested']);
    } finally {
      store.put = put;
    }
    // The received file, in the data directory's scratch folder, was the ingestion's to move.
    expect(asked).toEqual([
      { file: expect.stringContaining(join(studio.services.dataDir, 'tmp')), move: true },
    ]);
    const [doc] = studio.services.knowledgeBase.documents(listingId);
    expect(await readFile(store.pathOf(doc!.contentHash))).toEqual(
      await readFile(join(FIXTURES, 'codeblock.md')),
    );
  });

  it('previews the chunks of one document with the chosen settings, storing nothing', async () => {
    const form = await fixtureForm(
      [{ fixture: 'layout-parser-paper-fast.pdf' }],
      { chunkSize: 64, chunkOverlap: 8, limit: 3 },
      'file',
    );
    const res = await studioFetch('/studio/preview', { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const preview = (await json(res)).data;
    expect(preview).toMatchObject({
      source: 'layout-parser-paper-fast.pdf',
      format: 'pdf',
      chunking: { strategy: 'recursive', chunkSize: 64, chunkOverlap: 8 },
    });
    expect(preview.chunks).toHaveLength(3);
    expect(preview.totalChunks).toBeGreaterThan(20);
    expect(preview.chunks[0].metadata.page).toBe(1);
    expect(preview.chunks[0].tokenCount).toBeLessThanOrEqual(64);

    // The snake_case spellings are read as the fields they spell, as everywhere in the API.
    const snake = await fixtureForm(
      [{ fixture: 'layout-parser-paper-fast.pdf' }],
      { chunk_size: 64, chunk_overlap: 8, limit: 3 },
      'file',
    );
    const same = (await json(await studioFetch('/studio/preview', { method: 'POST', body: snake }))).data;
    expect(same).toMatchObject({ chunking: preview.chunking, totalChunks: preview.totalChunks });

    const bigger = await fixtureForm(
      [{ fixture: 'layout-parser-paper-fast.pdf' }],
      { chunkSize: 512 },
      'file',
    );
    const coarse = (await json(await studioFetch('/studio/preview', { method: 'POST', body: bigger }))).data;
    expect(coarse.totalChunks).toBeLessThan(preview.totalChunks);

    const flat = await fixtureForm([{ fixture: 'loremipsum-flat.pdf' }], {}, 'file');
    const refused = await studioFetch('/studio/preview', { method: 'POST', body: flat });
    expect(refused.status).toBe(422);
    expect((await json(refused)).error.message).toContain('loremipsum-flat.pdf');

    // An archive can be ingested but not previewed; it is not a "nested archive".
    const zipped = new FormData();
    zipped.append('file', new Blob([buildZip([{ name: 'a.md', data: '# A' }])]), 'papers.zip');
    const archive = await studioFetch('/studio/preview', { method: 'POST', body: zipped });
    const { error } = await json(archive);
    expect(archive.status).toBe(422);
    expect(error).toMatchObject({
      code: 'invalid_document',
      message:
        'papers.zip: an archive holds many documents and the preview shows one: preview a file from it, or ingest the archive.',
    });
  });

  it('refuses bad options, bad paths and unknown jobs with clear messages', async () => {
    const listingId = await createListing('Refusals');
    const bad = await fixtureForm([{ fixture: 'simple.json' }], { chunkSize: 4 });
    const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: bad });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain('chunkSize');

    // A misspelt option is refused, named as sent, not dropped for its default: nothing is ingested.
    for (const [options, message] of [
      [{ chunk_sise: 64 }, "options: unknown field 'chunk_sise'; the fields are strategy, chunkSize"],
      [{ strategi: 'fixed', chunkSize: 64 }, "options: unknown field 'strategi'"],
    ] as const) {
      const misspelt = await fixtureForm([{ fixture: 'simple.json' }], options);
      const answer = await studioFetch(`/studio/listings/${listingId}/ingest`, {
        method: 'POST',
        body: misspelt,
      });
      expect(answer.status).toBe(400);
      expect((await json(answer)).error.message).toContain(message);
      const preview = await studioFetch('/studio/preview', {
        method: 'POST',
        body: await fixtureForm([{ fixture: 'simple.json' }], options, 'file'),
      });
      expect(preview.status).toBe(400);
    }
    expect(studio.services.listings.get(listingId, 'studio').chunkCount).toBe(0);

    const escape = await fixtureForm([{ fixture: 'simple.json' }], { paths: ['../x.json'] });
    const refused = await studioFetch(`/studio/listings/${listingId}/ingest`, {
      method: 'POST',
      body: escape,
    });
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.message).toContain('../x.json');

    const missing = await studioFetch('/studio/jobs/job_nope/events');
    expect(missing.status).toBe(404);
    const noListing = await studioFetch('/studio/listings/lst_nope/documents');
    expect(noListing.status).toBe(404);
  });

  it('ingests and previews a dropped file whose name is past 255 bytes, under that name', async () => {
    // 120 CJK characters: 360 bytes in UTF-8. The received file was named after its part, and the
    // drop was answered 500 (ENAMETOOLONG).
    const listingId = await createListing('Long names');
    const name = `${'文'.repeat(120)}.md`;
    const bytes = await readFile(join(FIXTURES, 'codeblock.md'));
    const form = new FormData();
    form.set('options', '{}');
    form.append('files', new Blob([bytes]), name);
    const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
    const body = await json(res);
    expect(res.status, body.error?.message).toBe(202);
    const last = (await followJob(body.data.jobId)).at(-1)!;
    expect(last.job.result!.documents.map((o) => [o.source, o.status])).toEqual([[name, 'ingested']]);

    const previewForm = new FormData();
    previewForm.append('file', new Blob([bytes]), name);
    const preview = await studioFetch('/studio/preview', { method: 'POST', body: previewForm });
    const previewed = await json(preview);
    expect(preview.status, previewed.error?.message).toBe(200);
    expect(previewed.data).toMatchObject({ source: name, format: 'markdown' });
    expect(previewed.data.chunks.length).toBeGreaterThan(0);
  });
});

/** The files under `folder` (none when there is no such folder), as paths relative to it. */
const filesUnder = (folder: string): string[] =>
  (existsSync(folder) ? readdirSync(folder, { recursive: true, withFileTypes: true }) : [])
    .filter((e) => e.isFile())
    .map((e) => relative(folder, join(e.parentPath, e.name)).split('\\').join('/'));

const sourcesOf = async (listingId: string): Promise<string[]> =>
  ((await json(await studioFetch(`/studio/listings/${listingId}/documents`))).data as { source: string }[])
    .map((d) => d.source)
    .sort();

describe('the studio reads what the CLI reads, and says what it is doing', () => {
  it('stores from a dropped folder the documents `kbstudio ingest <folder>` stores, its litter left out', async () => {
    const scratch = tempDir();
    try {
      const folder = join(scratch.path, 'handbook');
      for (const sub of ['guides', '.github', '.obsidian']) mkdirSync(join(folder, sub), { recursive: true });
      for (const [fixture, name] of [
        ['codeblock.md', 'codeblock.md'],
        ['simple-table.md', 'guides/table.md'],
        ['simple.docx', 'simple.docx'],
        ['stanley-cups.csv', 'stanley-cups.csv'],
        ['simple.json', 'simple.json'],
        ['fake-html.html', 'guides/page.html'],
      ])
        copyFileSync(join(FIXTURES, fixture!), join(folder, name!));
      writeFileSync(join(folder, '.draft.md'), '# Not yet\n\nA draft.\n');
      writeFileSync(join(folder, '.github', 'CONTRIBUTING.md'), '# Contributing\n\nOpen an issue.\n');
      writeFileSync(join(folder, '.obsidian', 'app.json'), '{"theme":"dark"}');
      writeFileSync(join(folder, '~$simple.docx'), 'a Word lock file');

      // The CLI's way: the folder given to ingest.
      const cliListing = await createListing('From the CLI');
      await studio.services.ingestion.run({
        listingId: cliListing,
        inputs: [{ path: folder }],
        atomic: false,
        limits: STUDIO_LIMITS,
      });
      // The studio's way, as an API client that does not leave the litter out itself would send it.
      const dropListing = await createListing('From a drop');
      const form = new FormData();
      const paths = filesUnder(folder).map((rel) => `handbook/${rel}`);
      form.set('options', JSON.stringify({ paths }));
      for (const path of paths)
        form.append('files', new Blob([await readFile(join(scratch.path, path))]), path.split('/').pop());
      const res = await studioFetch(`/studio/listings/${dropListing}/ingest`, { method: 'POST', body: form });
      expect(res.status).toBe(202);
      const last = (await followJob((await json(res)).data.jobId as string)).at(-1)!;
      expect(last.job.state).toBe('done');
      expect(last.job.result!.documents.filter((d) => d.status !== 'ingested')).toEqual([]);

      const stored = await sourcesOf(cliListing);
      expect(stored).toEqual([
        'handbook/codeblock.md',
        'handbook/guides/page.html',
        'handbook/guides/table.md',
        'handbook/simple.docx',
        'handbook/simple.json',
        'handbook/stanley-cups.csv',
      ]);
      expect(await sourcesOf(dropListing)).toEqual(stored);
    } finally {
      scratch.remove();
    }
  });

  it('refuses a preview of a document over 50 MB naming the field and the per-document limit', async () => {
    const form = new FormData();
    form.set('options', JSON.stringify({}));
    form.append('file', new Blob([Buffer.alloc(51 * 1024 * 1024, 'word ')]), 'big.md');
    const res = await studioFetch('/studio/preview', { method: 'POST', body: form });
    expect(res.status).toBe(413);
    expect((await json(res)).error.message).toMatch(
      /^file: 'big\.md' exceeds 50 MB, the limit per document\. /,
    );
  });

  it('shows an archive being unpacked, and a cancel stops it at once, storing and leaving nothing', async () => {
    const listingId = await createListing('A large archive');
    const entries = Array.from({ length: 8_000 }, (_, i) => ({
      name: `docs/section-${i % 40}/page-${i}.md`,
      data: `# Page ${i}\n\n${'Some words on the page. '.repeat(20)}`,
    }));
    const form = new FormData();
    form.set('options', JSON.stringify({ paths: ['x.zip'] }));
    form.append('files', new Blob([buildZip(entries)]), 'x.zip');
    const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
    expect(res.status).toBe(202);
    const { jobId } = (await json(res)).data as { jobId: string };

    // The job's events as they come: at the first that shows the archive being unpacked, cancel.
    const stream = await studioFetch(`/studio/jobs/${jobId}/events`);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    const rows = new JobRows();
    let buffered = '';
    let unpacking: IngestJobSnapshot | undefined;
    let cancelledAt = 0;
    let done: IngestJobSnapshot | undefined;
    while (!done) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffered += value;
      const blocks = buffered.split('\n\n');
      buffered = blocks.pop()!;
      for (const block of blocks) {
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (!event || !data) continue;
        const job = rows.apply(JSON.parse(data) as Record<string, unknown>) as unknown as IngestJobSnapshot;
        if (event === 'done') done = job;
        else if (!unpacking && job.progress?.unpacking) {
          unpacking = job;
          cancelledAt = performance.now();
          expect((await studioFetch(`/studio/jobs/${jobId}/cancel`, { method: 'POST' })).status).toBe(200);
        }
      }
    }
    const stoppedIn = performance.now() - cancelledAt;
    expect(unpacking!.progress).toMatchObject({
      stage: 'reading',
      unpacking: { archive: 'x.zip', filesTotal: 8_000 },
    });
    expect(unpacking!.progress!.unpacking!.filesDone).toBeLessThan(8_000);
    // No file of the archive is listed as being read meanwhile.
    expect(unpacking!.files).toEqual([]);
    expect(done).toMatchObject({ state: 'cancelled', error: { code: 'cancelled' } });
    expect(stoppedIn).toBeLessThan(1_000);
    const listing = (await json(await studioFetch(`/studio/listings/${listingId}`))).data;
    expect(listing).toMatchObject({ documentCount: 0, chunkCount: 0 });
    // The received archive and what was extracted from it are gone once the job is seen ended (the
    // scratch folder's marker of the running process stays).
    expect(filesUnder(join(studio.services.dataDir, 'tmp')).filter((f) => !f.startsWith('.owners/'))).toEqual(
      [],
    );
  });
});

describe('ingestions a stop of the studio interrupted', () => {
  const get = async (path: string) => (await json(await studioFetch(path))).data;

  it('lists them with the jobs of this launch until dismissed or until an ingestion into the listing completes', async () => {
    const listingId = await createListing('Interrupted');
    // A job an earlier process journaled and never ended, found by this start (as after a kill:
    // test/faults/kill.test.ts does it with a real process).
    const journal = studio.services.ingestJournal;
    const cut = { listingId, kind: 'ingest' as const, sources: ['handbook.zip', 'notes/a.md'] };
    journal.opened({ ...cut, id: 'job_cut1', startedAt: '2026-11-28T09:00:00.000Z' });
    journal.opened({ ...cut, id: 'job_cut2', startedAt: '2026-11-28T09:30:00.000Z' });
    recoverInterruptedJobs(studio.services.db);

    const reported = (await get(`/studio/jobs?listingId=${listingId}`)) as IngestJobSnapshot[];
    expect(reported.map((j) => [j.id, j.state])).toEqual([
      ['job_cut2', 'interrupted'],
      ['job_cut1', 'interrupted'],
    ]);
    expect(reported[0]).toEqual({
      id: 'job_cut2',
      listingId,
      kind: 'ingest',
      state: 'interrupted',
      startedAt: '2026-11-28T09:30:00.000Z',
      finishedAt: null,
      progress: null,
      files: [
        { source: 'handbook.zip', stage: 'interrupted' },
        { source: 'notes/a.md', stage: 'interrupted' },
      ],
      result: null,
      error: {
        code: 'interrupted',
        message:
          'The studio stopped before this ingestion ended, so none of its files were stored (an ingestion stores them all at its end). Ingest them again.',
      },
    });
    expect(await get(`/studio/jobs/job_cut2`)).toEqual(reported[0]);
    // Its event stream ends at once with it; cancelling it changes nothing.
    const events = await studioFetch('/studio/jobs/job_cut2/events');
    expect(await events.text()).toBe(`event: done\ndata: ${JSON.stringify(reported[0])}\n\n`);
    expect(await json(await studioFetch('/studio/jobs/job_cut2/cancel', { method: 'POST' }))).toEqual({
      data: reported[0],
    });

    const dismissed = await studioFetch('/studio/jobs/job_cut2/dismiss', { method: 'POST' });
    expect(dismissed.status).toBe(200);
    expect((await json(dismissed)).data.id).toBe('job_cut2');
    const gone = await studioFetch('/studio/jobs/job_cut2');
    expect(gone.status).toBe(404);
    expect((await json(gone)).error.message).toContain("No ingestion job 'job_cut2'");
    expect((await studioFetch('/studio/jobs/job_cut2/dismiss', { method: 'POST' })).status).toBe(404);

    // A job of this launch is listed first; it cannot be dismissed (nothing of it is on disk).
    const form = await fixtureForm([{ fixture: 'simple.json' }], { strategy: 'recursive' });
    const started = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
    const { jobId } = (await json(started)).data;
    expect((await followJob(jobId)).at(-1)!.job.state).toBe('done');
    const refused = await studioFetch(`/studio/jobs/${jobId}/dismiss`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.message).toBe(
      `Ingestion job '${jobId}' is done: only an interrupted one can be dismissed.`,
    );
    // Completed into the same listing: job_cut1 is no longer reported, the finished job is.
    const after = (await get(`/studio/jobs?listingId=${listingId}`)) as IngestJobSnapshot[];
    expect(after.map((j) => [j.id, j.state])).toEqual([[jobId, 'done']]);
    expect(journal.interrupted(listingId)).toEqual([]);
    // The job's own journal entry went when it ended.
    expect(studio.services.db.prepare(`SELECT count(*) FROM studio_jobs`).pluck().get()).toBe(0);

    const badQuery = await studioFetch(`/studio/jobs?listingId=`);
    expect(badQuery.status).toBe(400);
    expect((await json(badQuery)).error.message).toContain('listingId');
  });
});

describe('IngestJobs', () => {
  it('cancels a running job through its AbortSignal and reports that nothing was stored', async () => {
    let cleaned = false;
    const jobs = new IngestJobs(
      (command) =>
        new Promise((_resolve, reject) => {
          command.onProgress?.({
            stage: 'parsing',
            file: 'a.pdf',
            filesDone: 0,
            filesTotal: 2,
            bytesDone: 0,
            bytesTotal: 10,
            chunks: 0,
          });
          command.signal!.addEventListener('abort', () => reject(command.signal!.reason));
        }),
    );
    const job = jobs.start({
      listingId: 'lst_1',
      inputs: [],
      limits: STUDIO_LIMITS,
      cleanup: () => void (cleaned = true),
    });
    expect(jobs.get(job.id).files).toEqual([{ source: 'a.pdf', stage: 'parsing' }]);
    jobs.cancel(job.id);
    const settled = await jobs.settled(job.id);
    expect(settled.state).toBe('cancelled');
    expect(settled.error!.message).toContain('nothing was stored');
    expect(cleaned).toBe(true);
  });
});

describe('a knowledge base past the studio limits (built by a bulk upload)', () => {
  it('says the limits in /studio/info and refuses a drop at once, before any file is read', async () => {
    const info = (await json(await studioFetch('/studio/info'))).data;
    expect(info.ingestLimits).toEqual(STUDIO_LIMITS);

    // 600 MB of documents, as a bulk upload of pre-built embeddings leaves it: one chunk is enough.
    const listingId = await createListing('Imported in bulk');
    const { services } = studio;
    const vector = Float32Array.from({ length: OFFLINE_MODEL.dimensions }, (_, i) => (i % 7) + 1);
    await commitChunks(
      services,
      listingId,
      'corpus.jsonl',
      [{ text: 'imported puffin', tokenCount: 2, contentHash: 'h1', metadata: {}, vector }],
      OFFLINE_MODEL,
      { bytes: 600 * 1024 * 1024 },
    );
    const sizes = (await json(await studioFetch('/studio/knowledge-bases'))).data;
    expect(sizes.find((s: { listingId: string }) => s.listingId === listingId)).toMatchObject({
      chunkCount: 1,
      bytes: 600 * 1024 * 1024,
    });

    const form = new FormData();
    form.set('options', JSON.stringify({ strategy: 'recursive' }));
    form.append(
      'files',
      new Blob(['# Note\n\nA note of 120 bytes or so, dropped on the Ingest page.\n']),
      'note.md',
    );
    const res = await studioFetch(`/studio/listings/${listingId}/ingest`, { method: 'POST', body: form });
    expect(res.status).toBe(202);
    const events = await followJob((await json(res)).data.jobId);
    // No file was read, parsed or embedded: the job ends with the refusal and no stage of any file.
    expect(events.at(-1)!.event).toBe('done');
    for (const e of events) expect(e.job).toMatchObject({ progress: null, files: [] });
    const { job } = events.at(-1)!;
    expect(job).toMatchObject({ state: 'failed', progress: null, files: [], result: null });
    expect(job.error).toEqual({
      code: 'payload_too_large',
      message:
        'The knowledge base would hold 600 MB of documents; the studio limit is 500 MB per knowledge base (use a bulk upload above that). Larger knowledge bases require a creator plan upgrade or contacting support.',
    });
    expect((await json(await studioFetch(`/studio/listings/${listingId}/documents`))).data).toHaveLength(1);
  });
});
