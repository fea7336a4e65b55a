import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { UploadRepository } from '../../src/core/uploads/uploads';
import { openServices } from '../../src/db/services';
import { FIXTURES, json, startStudio, tempDir, type TestStudio } from '../helpers/studio';
import { writeZip, writeZipEntries, type ZipEntry } from '../helpers/zip';

let studio: TestStudio;
let key: string;
const scratch = tempDir();

beforeAll(async () => {
  studio = await startStudio();
  key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
});
afterAll(async () => {
  await studio.close();
  scratch.remove();
});

function form(files: { path: string; name: string }[], config?: unknown): FormData {
  const body = new FormData();
  for (const f of files) body.append('files', new Blob([readFileSync(f.path)]), f.name);
  if (config !== undefined)
    body.append('config', typeof config === 'string' ? config : JSON.stringify(config));
  return body;
}

const upload = (body: FormData, k = key) => studio.api('/v1/upload', { key: k, method: 'POST', body });

async function waitFor(uploadId: string) {
  await studio.services.uploads.idle();
  const res = await studio.api(`/v1/upload/${uploadId}`, { key });
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

describe('POST /v1/upload', () => {
  it('accepts a ZIP with 202, processes it in the background and reports per-file results', async () => {
    const zip = await writeZip(join(scratch.path, 'kb.zip'), {
      'guides/codeblock.md': { path: join(FIXTURES, 'codeblock.md') },
      'data/stanley-cups.csv': { path: join(FIXTURES, 'stanley-cups.csv') },
      'memo.pdf': { path: join(FIXTURES, 'fake-memo.pdf') },
      'records/simple.json': { path: join(FIXTURES, 'simple.json') },
      '__MACOSX/._memo.pdf': 'litter',
    });
    const res = await upload(
      form([{ path: zip, name: 'kb.zip' }], {
        chunking: 'recursive',
        embedding_model: 'kbs-offline-hybrid-v1',
      }),
    );
    expect(res.status).toBe(202);
    const accepted = (await json(res)).data;
    expect(accepted).toMatchObject({
      uploadId: expect.stringMatching(/^upl_/),
      listingId: expect.stringMatching(/^lst_/),
      status: 'queued',
    });

    const done = await waitFor(accepted.uploadId);
    expect(done.status).toBe('completed');
    expect(done.files.map((f: { source: string; status: string }) => [f.source, f.status])).toEqual([
      ['data/stanley-cups.csv', 'ingested'],
      ['guides/codeblock.md', 'ingested'],
      ['memo.pdf', 'ingested'],
      ['records/simple.json', 'ingested'],
    ]);
    expect(done.chunkCount).toBeGreaterThan(3);
    expect(done.progress).toMatchObject({ stage: 'done', filesDone: 4, filesTotal: 4 });
    // Each of the JSON file's 8 items is one document (spec §2): 3 + 8.
    expect(done.files[3]).toMatchObject({ chunks: 8, documents: 8 });
    expect(done.files[0]).not.toHaveProperty('documents');
    expect(done.documentCount).toBe(11);

    // Without listing_id a new draft listing of the caller was created, and it now holds the chunks.
    const listing = (await json(await studio.api(`/v1/listings/${accepted.listingId}`, { key }))).data;
    expect(listing).toMatchObject({
      title: 'kb',
      status: 'draft',
      chunkCount: done.chunkCount,
      documentCount: 11,
    });
  });

  it('refuses an archive with an unsupported type at upload time with 415 naming type and entry', async () => {
    const zip = await writeZip(join(scratch.path, 'bad.zip'), { 'a.md': '# A', 'tools/setup.exe': 'MZ' });
    const res = await upload(form([{ path: zip, name: 'bad.zip' }], { chunking: 'recursive' }));
    expect(res.status).toBe(415);
    const body = await json(res);
    expect(body.error.code).toBe('unsupported_file_type');
    expect(body.error.message).toContain('bad.zip/tools/setup.exe (.exe)');
  });

  it('leaves the knowledge base as it was when a file fails', async () => {
    const good = await writeZip(join(scratch.path, 'good.zip'), { 'a.md': '# Alpha\n\nFirst version.' });
    const first = (await json(await upload(form([{ path: good, name: 'good.zip' }], {})))).data;
    expect((await waitFor(first.uploadId)).status).toBe('completed');
    const listingId = first.listingId;
    const before = studio.services.db
      .prepare('SELECT id, text FROM chunks WHERE listing_id = ? ORDER BY id')
      .all(listingId);

    const broken = join(scratch.path, 'broken.pdf');
    writeFileSync(broken, '%PDF-1.4\nnot a pdf at all');
    const mixed = await writeZip(join(scratch.path, 'mixed.zip'), {
      'a.md': '# Alpha\n\nSecond version.',
      'b.pdf': { path: broken },
    });
    const second = (
      await json(await upload(form([{ path: mixed, name: 'mixed.zip' }], { listing_id: listingId })))
    ).data;
    const failed = await waitFor(second.uploadId);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('b.pdf');
    expect(failed.files.find((f: { source: string }) => f.source === 'b.pdf')).toMatchObject({
      status: 'rejected',
      error: { code: 'invalid_document' },
    });
    expect(
      studio.services.db
        .prepare('SELECT id, text FROM chunks WHERE listing_id = ? ORDER BY id')
        .all(listingId),
    ).toEqual(before);
  });

  it('gives its scratch space back before it says an upload completed or failed', async () => {
    // A client (or the full-disk test) that sees the final status must find the scratch space freed.
    const uploads = studio.services.uploads;
    const repo = (uploads as unknown as { repo: UploadRepository }).repo;
    const accept = uploads.accept.bind(uploads);
    const update = repo.update.bind(repo);
    const kb = studio.services.knowledgeBase;
    const beginCommit = kb.beginCommit.bind(kb);
    const dirs = new Map<string, string>();
    const seen: [string, boolean][] = [];
    const shownAfterCommit: string[] = [];
    const spies = [
      vi.spyOn(uploads, 'accept').mockImplementation(async (request) => {
        const accepted = await accept(request);
        expect(existsSync(request.dir)).toBe(true);
        dirs.set(accepted.uploadId, request.dir);
        return accepted;
      }),
      vi.spyOn(repo, 'update').mockImplementation((id, patch) => {
        if (patch.status === 'completed' || patch.status === 'failed')
          seen.push([patch.status, existsSync(dirs.get(id)!)]);
        return update(id, patch);
      }),
      // An upload with documents to commit is completed by its commit, in the same transaction.
      vi.spyOn(kb, 'beginCommit').mockImplementation((...args) => {
        const session = beginCommit(...args);
        const finish = session.finish.bind(session);
        session.finish = async (completes) => {
          if (completes) seen.push(['completed', existsSync(dirs.get(completes.uploadId)!)]);
          const result = await finish(completes);
          // Committed, the job's staging database not yet removed: still processing, as clients see it.
          if (completes) {
            const res = await studio.api(`/v1/upload/${completes.uploadId}`, { key });
            shownAfterCommit.push((await json(res)).data.status);
          }
          return result;
        };
        return session;
      }),
    ];
    try {
      const ok = await writeZip(join(scratch.path, 'order-ok.zip'), { 'a.md': '# A\n\ntext' });
      const bad = await writeZip(join(scratch.path, 'order-bad.zip'), {
        'a.md': '# A\n\ntext',
        'b.pdf': '%PDF-1.4\nnot a pdf at all',
      });
      const listings: string[] = [];
      for (const [zip, name] of [
        [ok, 'order-ok.zip'],
        [bad, 'order-bad.zip'],
      ] as const) {
        const res = await upload(form([{ path: zip, name }], {}));
        expect(res.status).toBe(202);
        listings.push((await waitFor((await json(res)).data.uploadId)).listingId);
      }
      // The same file again into the same listing: unchanged, nothing to commit.
      const again = await upload(form([{ path: ok, name: 'order-ok.zip' }], { listing_id: listings[0] }));
      expect(again.status).toBe(202);
      expect(await waitFor((await json(again)).data.uploadId)).toMatchObject({
        status: 'completed',
        files: [{ source: 'a.md', status: 'unchanged' }],
      });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    // The received files were still there when the upload was accepted, and gone at the final status:
    // at the commit that completed the first, at the status written for the others.
    expect(seen).toEqual([
      ['completed', false],
      ['failed', false],
      ['completed', false],
    ]);
    expect(shownAfterCommit).toEqual(['processing']);
  });

  it("is completed by its own commit, or, with nothing to commit, once another connection's commit is done", async () => {
    const zip = await writeZip(join(scratch.path, 'locked.zip'), {
      'notes.md': '# Locked\n\nWritten once the other commit is done.',
    });
    const other = new Database(studio.services.db.name);
    const row = (id: string) =>
      other.prepare(`SELECT status, results FROM uploads WHERE id = ?`).get(id) as {
        status: string;
        results: string;
      };
    let atReturn: { status: string; results: string } | undefined;
    let released: Promise<void> | undefined;
    let lockAfterRun = false;
    const ingestion = studio.services.ingestion;
    const run = ingestion.run.bind(ingestion);
    const spy = vi.spyOn(ingestion, 'run').mockImplementation(async (command) => {
      const result = await run(command);
      atReturn = row(command.upload!.id);
      if (lockAfterRun) {
        // Another connection takes the write lock (as a commit or a JSONL import on a worker does) the
        // moment this upload's ingestion is over, and keeps it 1.5 s: the status has to wait for it.
        other.exec('BEGIN IMMEDIATE');
        released = new Promise((r) => setTimeout(r, 1_500)).then(() => void other.exec('ROLLBACK'));
      }
      return result;
    });
    let turns = 0;
    let longest = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      turns++;
    }, 20);
    try {
      const first = await upload(form([{ path: zip, name: 'locked.zip' }]));
      expect(first.status).toBe(202);
      const firstDone = await waitFor((await json(first)).data.uploadId);
      expect(firstDone).toMatchObject({ status: 'completed', documentCount: 1 });
      // Already completed, with its report, when the ingestion returned: the commit wrote it.
      expect(atReturn?.status).toBe('completed');
      expect(JSON.parse(atReturn!.results)).toMatchObject({
        files: [{ source: 'notes.md', status: 'ingested' }],
        documentCount: 1,
        chunkCount: 1,
      });

      // The same file again: unchanged, nothing to commit, so the status is written after the ingestion.
      lockAfterRun = true;
      const again = await upload(
        form([{ path: zip, name: 'locked.zip' }], { listing_id: firstDone.listingId }),
      );
      expect(again.status).toBe(202);
      const done = await waitFor((await json(again)).data.uploadId);
      expect(atReturn?.status).toBe('processing');
      expect(released).toBeDefined();
      await released;
      expect(done).toMatchObject({ status: 'completed', documentCount: 1, files: [{ status: 'unchanged' }] });
    } finally {
      clearInterval(ticker);
      spy.mockRestore();
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    // The event loop kept turning: the status write did not sit in the connection's 5 s busy timeout.
    expect(turns).toBeGreaterThan(40);
    expect(longest).toBeLessThan(1_000);
  });

  it('stays completed when something fails after its commit', async () => {
    const zip = await writeZip(join(scratch.path, 'after.zip'), {
      'a.md': '# After\n\nStored, then a failure.',
    });
    const ingestion = studio.services.ingestion;
    const run = ingestion.run.bind(ingestion);
    const spy = vi.spyOn(ingestion, 'run').mockImplementation(async (command) => {
      await run(command);
      throw new Error('EBUSY: the scratch folder could not be removed');
    });
    try {
      const res = await upload(form([{ path: zip, name: 'after.zip' }]));
      expect(res.status).toBe(202);
      const done = await waitFor((await json(res)).data.uploadId);
      expect(done).toMatchObject({ status: 'completed', documentCount: 1, error: null });
      expect(done.files).toMatchObject([{ source: 'a.md', status: 'ingested' }]);
    } finally {
      spy.mockRestore();
    }
  });

  it('settles an upload whose studio closes while it is processing; the next start marks it failed', async () => {
    const other = await startStudio();
    const dataDir = other.services.dataDir;
    const wallet = other.services.wallets.defaultWallet().address;
    const otherKey = other.services.apiKeys.create(wallet).key;
    const ingestion = other.services.ingestion;
    const run = ingestion.run.bind(ingestion);
    let began!: () => void;
    const processing = new Promise<void>((resolve) => (began = resolve));
    let closed!: () => void;
    const afterClose = new Promise<void>((resolve) => (closed = resolve));
    // The ingestion goes on once the studio has closed, as one that was under way would.
    vi.spyOn(ingestion, 'run').mockImplementation(async (command) => {
      began();
      await afterClose;
      return run(command);
    });
    try {
      const body = form([{ path: join(FIXTURES, 'codeblock.md'), name: 'codeblock.md' }]);
      const res = await other.api('/v1/upload', { key: otherKey, method: 'POST', body });
      expect(res.status).toBe(202);
      const { uploadId } = (await json(res)).data;
      await processing;
      await other.server.close();
      other.services.close();
      closed();
      // Before, recording the failure on the closed database rejected: an unhandled rejection.
      await expect(other.services.uploads.idle()).resolves.toBeUndefined();

      const reopened = openServices(dataDir);
      try {
        expect(reopened.uploads.get(uploadId, wallet)).toMatchObject({
          status: 'failed',
          error: { code: 'internal_error' },
        });
      } finally {
        reopened.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('reports progress the database could not take while another connection held its write lock', async () => {
    const zip = await writeZip(join(scratch.path, 'progress.zip'), {
      'a.md': '# Alpha\n\nThe first note.',
      'b.md': '# Beta\n\nThe second note.',
    });
    // Another connection holds the write lock from the start of the ingestion, as a JSONL import's commit
    // does while its lines are read: no progress write gets in, and the commit waits for the lock.
    const other = new Database(studio.services.db.name);
    const ingestion = studio.services.ingestion;
    const run = ingestion.run.bind(ingestion);
    const spy = vi.spyOn(ingestion, 'run').mockImplementation((command) => {
      other.exec('BEGIN IMMEDIATE');
      return run(command);
    });
    let uploadId = '';
    try {
      const res = await upload(form([{ path: zip, name: 'progress.zip' }]));
      expect(res.status).toBe(202);
      uploadId = (await json(res)).data.uploadId;
      // Polled every 100 ms for up to 6 s (the /v1 rate limit allows 100 requests a minute per key).
      let seen: { status: string; progress: Record<string, unknown> } | undefined;
      for (let i = 0; i < 60 && seen?.progress.stage !== 'storing'; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        const polled = await studio.api(`/v1/upload/${uploadId}`, { key });
        expect(polled.status).toBe(200);
        seen = (await json(polled)).data;
      }
      expect(seen).toMatchObject({
        status: 'processing',
        progress: { stage: 'storing', filesDone: 2, filesTotal: 2 },
      });
      // The database row itself has no such progress: it was answered from the upload under way.
      const row = other.prepare(`SELECT progress FROM uploads WHERE id = ?`).get(uploadId) as {
        progress: string;
      };
      expect(JSON.parse(row.progress)).not.toMatchObject({ stage: 'storing' });
    } finally {
      spy.mockRestore();
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    const done = await waitFor(uploadId);
    expect(done).toMatchObject({ status: 'completed', documentCount: 2, progress: { stage: 'done' } });
  });

  it('validates config and the form with 400s naming the field', async () => {
    const zip = await writeZip(join(scratch.path, 'ok.zip'), { 'a.md': '# A' });
    const snakeListing = studio.services.listings.create(
      { title: 'Named in snake_case', accessModel: 'one_time', price: 0 },
      studio.services.wallets.defaultWallet().address,
    ).id;
    const cases: [FormData | string, RegExp, number][] = [
      [form([{ path: zip, name: 'ok.zip' }], '{not json'), /^config: not valid JSON/, 400],
      [form([{ path: zip, name: 'ok.zip' }], { chunking: 'by-vibes' }), /^config\.?chunking: /, 400],
      [
        form([{ path: zip, name: 'ok.zip' }], { embedding_model: 'my-own-model' }),
        /not supported.*Other models require contacting support/,
        400,
      ],
      [form([], { chunking: 'recursive' }), /^files: /, 400],
      [form([{ path: zip, name: 'ok.zip' }], { listing_id: 'lst_nope' }), /lst_nope/, 404],
      // The camelCase spelling wins, as everywhere in the API: this one names the unknown listing.
      [
        form([{ path: zip, name: 'ok.zip' }], { listing_id: snakeListing, listingId: 'lst_camel' }),
        /lst_camel/,
        404,
      ],
      [
        (() => {
          const twice = form([{ path: zip, name: 'ok.zip' }], {});
          twice.append('config', JSON.stringify({ chunking: 'fixed' }));
          return twice;
        })(),
        /^config: given more than once; send it once\.$/,
        400,
      ],
      [
        (() => {
          const nameless = new FormData();
          nameless.append('files', new Blob([readFileSync(zip)]), '');
          return nameless;
        })(),
        /^files: part 1 has no file name; send each file with its name/,
        400,
      ],
      [
        (() => {
          // `curl -F files=ok.zip` (no @): the name arrives as a text field.
          const text = new FormData();
          text.append('files', 'ok.zip');
          return text;
        })(),
        /^files: expected a file, got a text field; attach the archive as a file \(curl: -F files=@archive\.zip\)\.$/,
        400,
      ],
      [
        form([{ path: zip, name: 'ok.zip' }], `{"chunking":"${'x'.repeat(70 * 1024)}"}`),
        /^config: the field exceeds 64 KB\.$/,
        413,
      ],
    ];
    for (const [body, message, status] of cases) {
      const res = await upload(body as FormData);
      const err = (await json(res)).error;
      expect(res.status, err.message).toBe(status);
      expect(err.message).toMatch(message);
    }
    const notMultipart = await studio.api('/v1/upload', {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(notMultipart.status).toBe(400);
    expect((await json(notMultipart)).error.message).toMatch(/multipart\/form-data/);
  });

  it('takes every default without a config part', async () => {
    const zip = await writeZip(join(scratch.path, 'bare.zip'), { 'a.md': '# Bare\n\nNo config sent.' });
    const res = await upload(form([{ path: zip, name: 'bare.zip' }]));
    expect(res.status).toBe(202);
    const { uploadId, listingId } = (await json(res)).data;
    expect(await waitFor(uploadId)).toMatchObject({ status: 'completed', chunkCount: 1 });
    expect(studio.services.listings.get(listingId, 'studio')).toMatchObject({
      embeddingModel: 'kbs-offline-hybrid-v1',
      chunkCount: 1,
    });
  });

  it('keeps a long file name whole, and refuses one over 1,000 characters naming the part', async () => {
    // 120 CJK characters are 360 bytes in UTF-8, past the 255 a file name may have on disk: this
    // upload was a 500 (ENAMETOOLONG) while the received file was named after its part. 150 emoji
    // are 300 UTF-16 units: the name was cut to its last 200.
    for (const name of [`${'文'.repeat(120)}.md`, `${'😀'.repeat(150)}.md`]) {
      const res = await upload(form([{ path: join(FIXTURES, 'codeblock.md'), name }]));
      const body = await json(res);
      expect(res.status, body.error?.message).toBe(202);
      const done = await waitFor(body.data.uploadId);
      expect(done.status).toBe('completed');
      expect(done.files.map((f: { source: string }) => f.source)).toEqual([name]);
      const listing = studio.services.listings.get(body.data.listingId, 'studio');
      expect(listing.title).toBe(name.slice(0, -'.md'.length));
    }
    // The same names inside an archive, one of them 40 folders deep (past PATH_MAX): extracted under
    // their names, the upload was accepted and then failed as an internal error.
    const deep = `${Array.from({ length: 40 }, (_, i) => `${i}${'d'.repeat(119)}`).join('/')}/deep.md`;
    const entries = [`${'文'.repeat(120)}.md`, deep];
    const zip = await writeZip(
      join(scratch.path, 'long-names.zip'),
      Object.fromEntries(entries.map((e) => [e, { path: join(FIXTURES, 'codeblock.md') }])),
    );
    const zipped = await json(await upload(form([{ path: zip, name: 'long-names.zip' }])));
    const done = await waitFor(zipped.data.uploadId);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(done.files.map((f: { source: string; status: string }) => [f.source, f.status])).toEqual(
      entries.map((e) => [e, 'ingested']).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );

    const uploads = () => studio.services.db.prepare('SELECT COUNT(*) FROM uploads').pluck().get();
    const before = uploads();
    const res = await upload(form([{ path: join(FIXTURES, 'codeblock.md'), name: `${'a'.repeat(998)}.md` }]));
    const err = (await json(res)).error;
    expect(res.status, err.message).toBe(400);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toMatch(
      /^files: part 1's file name has 1001 characters \('a{40}…'\); a name may have at most 1,000\.$/,
    );
    expect(uploads()).toBe(before);
  });

  it('accepts the config in camelCase too, and keeps uploads private to their wallet', async () => {
    const zip = await writeZip(join(scratch.path, 'camel.zip'), { 'a.md': '# A\n\ntext' });
    const res = await upload(
      form([{ path: zip, name: 'camel.zip' }], {
        chunking: 'fixed',
        embeddingModel: 'kbs-offline-hybrid-v1',
        chunkSize: 64,
        chunkOverlap: 8,
      }),
    );
    expect(res.status).toBe(202);
    const { uploadId } = (await json(res)).data;
    const done = await waitFor(uploadId);
    expect(done.config).toMatchObject({ chunking: 'fixed', chunk_size: 64, chunk_overlap: 8 });
    const other = studio.services.apiKeys.create(studio.services.wallets.create('someone').address).key;
    expect((await studio.api(`/v1/upload/${uploadId}`, { key: other })).status).toBe(404);
  });

  it('drops an upload whose connection is cut mid-body: no scratch files, no upload recorded', async () => {
    const uploadsBefore = studio.services.db.prepare(`SELECT COUNT(*) FROM uploads`).pluck().get();
    const boundary = 'kbs-cut-boundary';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="cut.zip"\r\n` +
      `Content-Type: application/zip\r\n\r\n`;
    const { port } = new URL(studio.url);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/upload',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(10 * 1024 * 1024),
      },
    });
    req.on('error', () => undefined);
    req.write(head);
    req.write(Buffer.alloc(256 * 1024, 7));
    const scratchDir = join(studio.services.dataDir, 'tmp');
    const scratchFiles = () => readdirSync(scratchDir).filter((n) => n !== '.owners');
    // The receiver has started writing the file, then the sender goes away.
    await expect.poll(scratchFiles, { timeout: 10_000 }).not.toEqual([]);
    req.destroy();
    await expect.poll(scratchFiles, { timeout: 10_000 }).toEqual([]);
    expect(studio.services.db.prepare(`SELECT COUNT(*) FROM uploads`).pluck().get()).toBe(uploadsBefore);
  });
});

describe('POST /v1/upload refusals and failures leave nothing behind', () => {
  // A key of its own: these requests must not eat into the rate limit of the tests above.
  let ownKey: string;
  beforeAll(() => {
    ownKey = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
  });
  const send = (body: FormData) => upload(body, ownKey);
  const count = (table: 'listings' | 'uploads') =>
    studio.services.db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;

  /** A ZIP written with archiver, entries in order (names may repeat), symlinks as archiver writes them. */
  async function archive(name: string, entries: ZipEntry[]): Promise<{ path: string; name: string }> {
    return { path: await writeZipEntries(join(scratch.path, name), entries, 9), name };
  }

  it('refuses at upload time, as extraction would, what the central directory shows', async () => {
    const MB = 1024 * 1024;
    const cases = [
      {
        zip: await archive('dup.zip', [
          { name: 'a.md', data: '# One' },
          { name: 'a.md', data: '# Two' },
        ]),
        status: 422,
        code: 'invalid_document',
        message: 'dup.zip: entry "a.md" appears more than once in the archive.',
      },
      {
        zip: await archive('big.zip', [{ name: 'big.md', data: Buffer.alloc(60 * MB, 'a') }]),
        status: 413,
        code: 'payload_too_large',
        message: 'big.zip: "big.md" is 60 MB uncompressed; the limit is 50 MB per file.',
      },
      {
        zip: await archive('link.zip', [
          { name: 'a.md', data: '# A' },
          { name: 'docs/link.md', symlinkTo: '/etc/passwd' },
        ]),
        status: 422,
        code: 'invalid_document',
        message: 'link.zip: entry "docs/link.md" is a symbolic link',
      },
      {
        zip: await archive(
          'bomb.zip',
          ['a', 'b', 'c'].map((n) => ({ name: `${n}.csv`, data: Buffer.alloc(30 * MB) })),
        ),
        status: 422,
        code: 'invalid_document',
        message: 'refused as a zip bomb',
      },
    ];
    for (const c of cases) {
      const listings = count('listings');
      const uploads = count('uploads');
      const res = await send(form([c.zip], { chunking: 'recursive' }));
      const body = await json(res);
      expect(res.status, body.error?.message).toBe(c.status);
      expect(body.error.code).toBe(c.code);
      expect(body.error.message).toContain(c.message);
      // Refused before the 202: no draft listing, no upload.
      expect([count('listings'), count('uploads')]).toEqual([listings, uploads]);
    }
  });

  it('refuses an archive with no file to ingest before the 202, creating no listing', async () => {
    const empty = await archive('empty.zip', []);
    const litter = await archive('litter.zip', [
      { name: '__MACOSX/._x', data: 'x' },
      { name: '.DS_Store', data: 'x' },
    ]);
    for (const zip of [empty, litter]) {
      const listings = count('listings');
      const res = await send(form([zip], {}));
      const body = await json(res);
      expect(res.status, body.error?.message).toBe(422);
      expect(body.error.code).toBe('invalid_document');
      expect(body.error.message).toMatch(new RegExp(`^${zip.name}: the archive holds no file to ingest`));
      expect(count('listings')).toBe(listings);
    }
  });

  it('refuses a name repeated across archives before the 202, as a repeat inside one archive is', async () => {
    const small = await archive('small.zip', [
      { name: 'a/intro.md', data: '# Intro' },
      { name: 'b.md', data: '# B' },
    ]);
    const listings = count('listings');
    const uploads = count('uploads');
    // The same archive sent twice under another name: it was accepted, and the upload then failed.
    const res = await send(form([small, { path: small.path, name: 'copy.zip' }], {}));
    const body = await json(res);
    expect(res.status, body.error?.message).toBe(422);
    expect(body.error).toEqual({
      code: 'invalid_document',
      status: 422,
      message: expect.stringMatching(
        /^copy\.zip: entry "a\/intro\.md" has the same name as "small\.zip\/a\/intro\.md": .*rename one of them to keep both\.$/,
      ),
      requestId: expect.stringMatching(/^req_/),
    });
    // The body of a repeat inside one archive, refused the same way.
    const inOne = await send(
      form(
        [
          await archive('dup-one.zip', [
            { name: 'a.md', data: '# One' },
            { name: 'a.md', data: '# Two' },
          ]),
        ],
        {},
      ),
    );
    const inOneBody = await json(inOne);
    expect(inOne.status).toBe(422);
    expect(Object.keys(inOneBody.error).sort()).toEqual(Object.keys(body.error).sort());
    expect([count('listings'), count('uploads')]).toEqual([listings, uploads]);
  });

  it('refuses a document over 50 MB sent by itself, not zipped, before the 202', async () => {
    const big = join(scratch.path, 'big.md');
    writeFileSync(big, Buffer.alloc(50 * 1024 * 1024 + 10, 'a'));
    const listings = count('listings');
    const uploads = count('uploads');
    const res = await send(form([{ path: big, name: 'big.md' }], {}));
    const body = await json(res);
    expect(res.status, body.error?.message).toBe(413);
    expect(body.error.code).toBe('payload_too_large');
    expect(body.error.message).toMatch(
      /^big\.md: the file is 52,428,810 bytes; the limit is 52,428,800 bytes \(50 MB\) per file\. /,
    );
    expect([count('listings'), count('uploads')]).toEqual([listings, uploads]);
    rmSync(big);
  });

  it('removes the draft listing a failed upload created, and still reports the failure', async () => {
    const jsonl = await archive('vectors.zip', [
      { name: 'vectors.jsonl', data: `${JSON.stringify({ text: 'hello', embedding: [0.1, 0.2, 0.3] })}\n` },
    ]);
    const listings = count('listings');
    const res = await send(form([jsonl], { embedding_model: 'text-embedding-3-small' }));
    expect(res.status).toBe(202);
    const { uploadId, listingId } = (await json(res)).data;
    await studio.services.uploads.idle();

    const polled = await studio.api(`/v1/upload/${uploadId}`, { key: ownKey });
    expect(polled.status).toBe(200);
    const failed = (await json(polled)).data;
    expect(failed).toMatchObject({ uploadId, listingId, status: 'failed' });
    expect(failed.error.message).toMatch(/vectors\.jsonl.*line 1.*1536/s);
    // The listing it created is gone, as if the upload had never been made.
    const listing = await studio.api(`/v1/listings/${listingId}`, { key: ownKey });
    expect(listing.status).toBe(404);
    expect((await json(listing)).error.code).toBe('listing_not_found');
    expect(count('listings')).toBe(listings);
  });

  it('keeps the draft and the failed upload together when writing the upload back fails', async () => {
    // Removing the draft removes its uploads: the failed upload's record is written back in the same
    // transaction, or neither happens. A failing write-back must not leave an upload that reads 404.
    const repo = (studio.services.uploads as unknown as { repo: UploadRepository }).repo;
    const insert = repo.insert.bind(repo);
    let inserts = 0;
    // The first insert registers the upload; the second is the write-back.
    const spy = vi.spyOn(repo, 'insert').mockImplementation((record) => {
      if (++inserts === 2) throw new Error('SQLITE_FULL: database or disk is full');
      insert(record);
    });
    try {
      const jsonl = await archive('vectors-kept.zip', [
        { name: 'vectors.jsonl', data: `${JSON.stringify({ text: 'hello', embedding: [0.1, 0.2] })}\n` },
      ]);
      const res = await send(form([jsonl], { embedding_model: 'text-embedding-3-small' }));
      expect(res.status).toBe(202);
      const { uploadId, listingId } = (await json(res)).data;
      await studio.services.uploads.idle();
      expect(inserts).toBe(2);
      const polled = await studio.api(`/v1/upload/${uploadId}`, { key: ownKey });
      expect(polled.status).toBe(200);
      expect((await json(polled)).data).toMatchObject({ uploadId, status: 'failed' });
      const listing = await studio.api(`/v1/listings/${listingId}`, { key: ownKey });
      expect(listing.status).toBe(200);
      expect((await json(listing)).data).toMatchObject({ status: 'draft', documentCount: 0 });
    } finally {
      spy.mockRestore();
    }
  });

  it('reports the files a failed upload did not store as not_stored, the failing one as rejected', async () => {
    const mixed = await archive('half.zip', [
      { name: 'a.json', data: '[{"text": "Item one."}, {"text": "Item two."}]' },
      { name: 'a.md', data: '# Alpha\n\nRead without error.' },
      { name: 'b.pdf', data: '%PDF-1.4\nnot a pdf at all' },
      { name: 'c.csv', data: 'x,y\n1,2\n' },
    ]);
    const res = await send(form([mixed], {}));
    expect(res.status).toBe(202);
    const { uploadId, listingId } = (await json(res)).data;
    await studio.services.uploads.idle();
    const failed = (await json(await studio.api(`/v1/upload/${uploadId}`, { key: ownKey }))).data;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      code: 'invalid_document',
      message: expect.stringContaining('b.pdf'),
    });
    // Its progress is where the work stopped, not an early write (`reading 0/3` beside three results).
    // Ended on the stage `failed` (it kept `embedding` and the file then read), with the counts reached.
    expect(failed.progress).toMatchObject({ filesTotal: 4, stage: 'failed' });
    expect(failed.progress).not.toHaveProperty('file');
    expect(failed.progress.filesDone).toBeGreaterThan(0);
    const bySource = Object.fromEntries(
      failed.files.map((f: { source: string }) => [f.source, f] as const),
    ) as Record<string, { status: string; chunks: number; error?: { code: string; message: string } }>;
    expect(bySource['b.pdf']).toMatchObject({ status: 'rejected', error: failed.error });
    for (const source of ['a.json', 'a.md', 'c.csv']) {
      // Nothing of it stored: no chunks, and no documents of a JSON file's items.
      expect(bySource[source]).not.toHaveProperty('documents');
      expect(bySource[source]).toMatchObject({
        status: 'not_stored',
        chunks: 0,
        error: {
          code: 'invalid_document',
          message: expect.stringMatching(/^Not stored: the upload failed \(b\.pdf: /),
        },
      });
    }
    expect((await studio.api(`/v1/listings/${listingId}`, { key: ownKey })).status).toBe(404);
  });

  /** A JSONL line of `dimensions` floats. */
  const vectorLine = (text: string, dimensions: number) =>
    `${JSON.stringify({ text, embedding: Array.from({ length: dimensions }, (_, i) => ((i % 7) - 3) / 10) })}\n`;
  const listingOf = (id: string) => studio.services.listings.get(id, 'studio');
  const modelsOf = (id: string) =>
    studio.services.db
      .prepare(`SELECT model FROM vector_indexes WHERE listing_id = ? ORDER BY model`)
      .pluck()
      .all(id);

  it('gives an empty listing the embedding_model asked for when the upload commits, and not when it fails', async () => {
    const wallet = studio.services.wallets.defaultWallet().address;
    const empty = studio.services.listings.create(
      { title: 'Empty', accessModel: 'one_time', price: 0 },
      wallet,
    );
    expect(empty).toMatchObject({ embeddingModel: 'kbs-offline-hybrid-v1', dimensions: 100 });
    // 2 floats where text-embedding-3-small has 1,536: the upload fails, and the listing keeps its model.
    const wrong = await archive('wrong-dims.zip', [{ name: 'v.jsonl', data: vectorLine('hello', 2) }]);
    const config = { listing_id: empty.id, embedding_model: 'text-embedding-3-small' };
    const failed = (await json(await send(form([wrong], config)))).data;
    await studio.services.uploads.idle();
    expect((await json(await studio.api(`/v1/upload/${failed.uploadId}`, { key: ownKey }))).data.status).toBe(
      'failed',
    );
    expect(listingOf(empty.id)).toMatchObject({ embeddingModel: 'kbs-offline-hybrid-v1', dimensions: 100 });

    const right = await archive('right-dims.zip', [{ name: 'v.jsonl', data: vectorLine('hello', 1536) }]);
    const done = (await json(await send(form([right], config)))).data;
    await studio.services.uploads.idle();
    expect((await json(await studio.api(`/v1/upload/${done.uploadId}`, { key: ownKey }))).data.status).toBe(
      'completed',
    );
    expect(listingOf(empty.id)).toMatchObject({
      embeddingModel: 'text-embedding-3-small',
      dimensions: 1536,
      chunkCount: 1,
    });
  });

  it('refuses, at its commit, an upload of another model queued behind one that filled the empty listing', async () => {
    const wallet = studio.services.wallets.defaultWallet().address;
    const empty = studio.services.listings.create(
      { title: 'Queued', accessModel: 'one_time', price: 0 },
      wallet,
    );
    const notes = await archive('notes.zip', [{ name: 'a.md', data: '# Alpha\n\nOffline words.' }]);
    const vectors = await archive('vectors-1536.zip', [{ name: 'v.jsonl', data: vectorLine('hello', 1536) }]);
    // Both accepted while the listing is empty: the second is checked when it commits.
    const first = await send(
      form([notes], { listing_id: empty.id, embedding_model: 'kbs-offline-hybrid-v1' }),
    );
    const second = await send(
      form([vectors], { listing_id: empty.id, embedding_model: 'text-embedding-3-small' }),
    );
    expect([first.status, second.status]).toEqual([202, 202]);
    const [a, b] = [(await json(first)).data, (await json(second)).data];
    await studio.services.uploads.idle();
    const poll = async (id: string) =>
      (await json(await studio.api(`/v1/upload/${id}`, { key: ownKey }))).data;
    expect((await poll(a.uploadId)).status).toBe('completed');
    const refused = await poll(b.uploadId);
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'conflict' } });
    expect(refused.error.message).toContain(
      `listing '${empty.id}' now holds chunks embedded with kbs-offline-hybrid-v1`,
    );
    expect(refused.error.message).toContain('nothing was stored');
    // One model, its chunks only.
    expect(listingOf(empty.id)).toMatchObject({ embeddingModel: 'kbs-offline-hybrid-v1', chunkCount: 1 });
    expect(modelsOf(empty.id)).toEqual(['kbs-offline-hybrid-v1']);
  });

  it('never removes a listing named by listing_id, even an empty draft', async () => {
    const wallet = studio.services.wallets.defaultWallet().address;
    const draft = studio.services.listings.create(
      { title: 'Kept draft', accessModel: 'one_time', price: 0, embeddingModel: 'text-embedding-3-small' },
      wallet,
    );
    const jsonl = await archive('kept.zip', [
      { name: 'vectors.jsonl', data: `${JSON.stringify({ text: 'hello', embedding: [0.1, 0.2] })}\n` },
    ]);
    const res = await send(form([jsonl], { listing_id: draft.id }));
    expect(res.status).toBe(202);
    const { uploadId } = (await json(res)).data;
    await studio.services.uploads.idle();
    const failed = (await json(await studio.api(`/v1/upload/${uploadId}`, { key: ownKey }))).data;
    expect(failed.status).toBe('failed');
    const listing = await studio.api(`/v1/listings/${draft.id}`, { key: ownKey });
    expect(listing.status).toBe(200);
    expect((await json(listing)).data).toMatchObject({ id: draft.id, status: 'draft', documentCount: 0 });
  });

  it('refuses unknown config keys with a 400 naming them and the accepted ones', async () => {
    const zip = await archive('keys.zip', [{ name: 'a.md', data: '# A\n\ntext' }]);
    const listings = count('listings');
    const res = await send(form([zip], { embeding_model: 'bert-base-uncased' }));
    const body = await json(res);
    expect(res.status, body.error?.message).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('config: unknown key "embeding_model"');
    for (const k of [
      'chunking',
      'embedding_model',
      'listing_id',
      'chunk_size',
      'chunk_overlap',
      'required_columns',
    ])
      expect(body.error.message).toContain(k);
    expect(count('listings')).toBe(listings);

    const camel = await send(
      form([zip], { chunking: 'fixed', embeddingModle: 'kbs-offline-hybrid-v1', chunkSize: 64 }),
    );
    expect(camel.status).toBe(400);
    expect((await json(camel)).error.message).toContain('unknown key "embeddingModle"');

    // Every documented key, snake_case or camelCase, is still accepted.
    const ok = await send(
      form([zip], {
        chunking: 'fixed',
        embedding_model: 'kbs-offline-hybrid-v1',
        chunkSize: 64,
        chunk_overlap: 8,
        requiredColumns: ['a'],
      }),
    );
    expect(ok.status).toBe(202);
    expect((await waitFor((await json(ok)).data.uploadId)).status).toBe('completed');
  });
});

describe('POST /v1/upload checks its listing and config before the archives', () => {
  const GB = 1024 ** 3;
  let strangerKey: string;
  let ownerKey: string;
  let othersListing: string;
  let othersDraft: string;
  beforeAll(async () => {
    const owner = studio.services.wallets.defaultWallet().address;
    ownerKey = studio.services.apiKeys.create(owner).key;
    strangerKey = studio.services.apiKeys.create(studio.services.wallets.create('stranger').address).key;
    const published = studio.services.listings.create(
      { title: 'Not yours', accessModel: 'one_time', price: 0 },
      owner,
    );
    othersListing = (await studio.services.publishing.publish(published.id)).id;
    othersDraft = studio.services.listings.create(
      { title: 'Not yours either', accessModel: 'one_time', price: 0 },
      owner,
    ).id;
  });
  const count = (table: 'listings' | 'uploads') =>
    studio.services.db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
  const scratchFiles = () => readdirSync(join(studio.services.dataDir, 'tmp')).filter((n) => n !== '.owners');

  it('answers a stranger to the listing 403 (or 404 for a draft), not what is wrong with the archive', async () => {
    // An archive the precheck refuses (422 invalid_document), sent before the config.
    const empty = await writeZipEntries(join(scratch.path, 'stranger.zip'), [], 9);
    const cases: [string, number, string][] = [
      [othersListing, 403, 'forbidden'],
      [othersDraft, 404, 'listing_not_found'],
    ];
    for (const [listingId, status, code] of cases) {
      const res = await upload(
        form([{ path: empty, name: 'stranger.zip' }], { listing_id: listingId }),
        strangerKey,
      );
      const body = await json(res);
      expect(res.status, body.error?.message).toBe(status);
      expect(body.error.code).toBe(code);
    }
  });

  /**
   * A body announced as 1 GB: the config part, then the start of an archive, and never the rest. Resolves
   * with the answer, or undefined when none came within 5 s (the server waited for the whole body).
   */
  async function configFirst(config: string, k: string) {
    const boundary = 'kbs-config-first';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="config"\r\n\r\n${config}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.zip"\r\n` +
      `Content-Type: application/zip\r\n\r\n`;
    const req = request({
      host: '127.0.0.1',
      port: new URL(studio.url).port,
      method: 'POST',
      path: '/v1/upload',
      headers: {
        Authorization: `Bearer ${k}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(GB),
      },
    });
    req.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => req.on('close', () => resolve()));
    const answer = new Promise<{ status: number; connection: unknown; body: any }>((resolve) =>
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            body: JSON.parse(text),
          }),
        );
      }),
    );
    req.write(head);
    req.write(Buffer.alloc(256 * 1024, 7));
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      answer,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 5_000))),
    ]);
    clearTimeout(timer);
    if (result === undefined) req.destroy();
    return { result, closed };
  }

  it('refuses a config sent before the files as soon as it arrives, closing the connection, keeping nothing', async () => {
    const cases: [string, string, number, string, RegExp][] = [
      ['bogus chunking', '{"chunking":"bogus"}', 400, 'invalid_request', /^config\.?chunking: /],
      ['unknown key', '{"embeding_model":"x"}', 400, 'invalid_request', /unknown key "embeding_model"/],
      ['not JSON', '{not json', 400, 'invalid_request', /^config: not valid JSON/],
      ['unknown listing', '{"listing_id":"lst_nope"}', 404, 'listing_not_found', /lst_nope/],
      [
        "another wallet's listing",
        JSON.stringify({ listing_id: othersListing }),
        403,
        'forbidden',
        /creator/,
      ],
    ];
    for (const [what, config, status, code, message] of cases) {
      const [listings, uploads] = [count('listings'), count('uploads')];
      const { result, closed } = await configFirst(config, strangerKey);
      expect(result, `${what}: answered before the 1 GB body was sent`).toBeDefined();
      expect(result!.status, what).toBe(status);
      expect(result!.body.error).toMatchObject({ code, message: expect.stringMatching(message) });
      // The rest of the body is not read: the server closes the connection after its answer.
      expect(result!.connection, what).toBe('close');
      await closed;
      await expect.poll(scratchFiles, { timeout: 10_000 }).toEqual([]);
      expect([count('listings'), count('uploads')], what).toEqual([listings, uploads]);
    }
    // The connection's end is not taken for a refusal of the next upload: a good one still goes through.
    const zip = await writeZip(join(scratch.path, 'after.zip'), { 'a.md': '# After\n\ntext' });
    const ok = await upload(form([{ path: zip, name: 'after.zip' }], {}), ownerKey);
    expect(ok.status).toBe(202);
    await studio.services.uploads.idle();
  });
});
