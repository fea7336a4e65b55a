import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_MODEL } from '../../src/core/embed/offlineGlove';
import { DATABASE_FILE } from '../../src/db/open';
import { CLI, FIXTURES, REPO_ROOT, runCli } from '../helpers/e2e';
import { tempDir } from '../helpers/studio';
import {
  integrityCheck,
  prose,
  retrievals,
  scratchLeft,
  seedStudio,
  serve,
  snapshot,
  storedUpload,
  uploadSettled,
  uploadStatus,
  uploadZip,
  waitFor,
  writeCorpus,
  type KbSnapshot,
  type Seeded,
  type ServeChild,
} from './studioProcess';

/**
 * SIGKILL in the middle of an ingestion, three ways in: a bulk /v1/upload and a studio ingest job on a
 * real `kbstudio serve` child, and a `kbstudio ingest` CLI process. After a restart the knowledge base
 * must be exactly as before (or complete), the database intact, the scratch files gone, and the same
 * ingestion must succeed when retried. test/stress/killRounds.test.ts repeats the upload case with
 * random kill times.
 */
// Enough that each ingestion lasts well past the 250 ms between recorded upload progress updates, so
// the kill lands mid-way however fast the pipeline gets (60 files take a few hundred ms now).
// Large enough that each ingestion below lasts well past the upload's progress writes (one per 250 ms):
// with 12 paragraphs a file, 200 files were ingested in about 0.4 s, and the upload was at times seen
// with no chunk staged, then done.
const FILES = 200;
const PARAGRAPHS = 36;

const dir = tempDir('kbs-faults-');
const dataDir = join(dir.path, 'data');
let seeded: Seeded;
let server: ServeChild | undefined;

beforeAll(async () => {
  seeded = await seedStudio(dataDir);
  const base = await writeCorpus(dir.path, 'base', 4, 6);
  await runCli(dataDir, [
    'ingest',
    '--listing',
    seeded.listingId,
    base.folder,
    join(FIXTURES, 'fake-memo.pdf'),
    join(FIXTURES, 'stanley-cups.csv'),
  ]);
}, 120_000);

// A server left running would keep the scratch folder claimed (see claimScratch) for the next test.
afterEach(async () => {
  await server?.stop();
  server = undefined;
});
afterAll(() => dir.remove());

/** The knowledge base and what retrieval returns from it. */
async function state(s: ServeChild): Promise<{ kb: KbSnapshot; retrieved: unknown[] }> {
  return { kb: snapshot(dataDir, seeded.listingId), retrieved: await retrievals(s, seeded.listingId) };
}

const upload = (s: ServeChild, zip: string) => uploadZip(s, zip, seeded.listingId);
const untilSettled = (s: ServeChild, id: string) => uploadSettled(s, dataDir, id);

describe('SIGKILL during ingestion', () => {
  it('a bulk upload killed mid-way leaves the knowledge base as it was, is reported interrupted, and succeeds on retry', async () => {
    const corpus = await writeCorpus(dir.path, 'bulk', FILES, PARAGRAPHS);
    server = await serve(dataDir, seeded.apiKey);
    const before = await state(server);
    expect(before.kb.documents.length).toBe(6);

    const id = await upload(server, corpus.zip);
    // Killed once chunks are being staged: the files are received, parsed and partly embedded. Not once
    // the last progress says 'done': the commit is in then, and only the final status is still to come.
    await waitFor(
      async () => {
        const u = storedUpload(dataDir, id);
        if (u.status === 'completed' || u.status === 'failed') {
          throw new Error(`The upload ended (${u.status}) before it was seen staging chunks.`);
        }
        return u.status === 'processing' && u.progress.chunks > 0 && u.progress.stage !== 'done'
          ? u
          : undefined;
      },
      120_000,
      'the upload to stage chunks',
    );
    expect(scratchLeft(dataDir).length).toBeGreaterThan(0);
    await server.kill();

    server = await serve(dataDir, seeded.apiKey);
    expect(await state(server)).toEqual(before);
    expect(integrityCheck(dataDir)).toBe('ok');
    expect(scratchLeft(dataDir)).toEqual([]);
    const interrupted = await uploadStatus(server, id);
    expect(interrupted).toMatchObject({ status: 'failed', error: { code: 'internal_error' } });
    expect(interrupted.error.message).toMatch(/interrupted by a restart.*nothing was stored/i);

    const retried = await untilSettled(server, await upload(server, corpus.zip));
    expect(retried.status).toBe('completed');
    const after = snapshot(dataDir, seeded.listingId);
    expect(after.documents.length).toBe(6 + FILES);
    expect(after.chunks).toBe(
      before.kb.chunks + retried.files.reduce((n: number, f: any) => n + f.chunks, 0),
    );
    expect(scratchLeft(dataDir)).toEqual([]);
    await server.stop();
  }, 400_000);

  it('a studio ingest job killed mid-way leaves the knowledge base as it was, is reported interrupted, and can be run again', async () => {
    const corpus = await writeCorpus(dir.path, 'studio', FILES, PARAGRAPHS);
    server = await serve(dataDir, seeded.apiKey);
    const before = await state(server);

    const start = () => {
      const form = new FormData();
      form.append('files', new Blob([readFileSync(corpus.zip)]), 'studio.zip');
      form.append('options', JSON.stringify({ strategy: 'recursive' }));
      return server!.studio(`/studio/listings/${seeded.listingId}/ingest`, { method: 'POST', body: form });
    };
    const jobOf = async (res: Response) => {
      expect(res.status).toBe(202);
      return ((await res.json()) as { data: { jobId: string } }).data.jobId;
    };
    const job = async (id: string) =>
      ((await (await server!.studio(`/studio/jobs/${id}`)).json()) as any).data;

    const jobId = await jobOf(await start());
    await waitFor(
      async () => {
        const j = await job(jobId);
        return j.state === 'running' && (j.progress?.chunks ?? 0) > 0 ? j : undefined;
      },
      120_000,
      'the job to stage chunks',
    );
    await server.kill();

    server = await serve(dataDir, seeded.apiKey);
    expect(await state(server)).toEqual(before);
    expect(integrityCheck(dataDir)).toBe('ok');
    expect(scratchLeft(dataDir)).toEqual([]);
    // The restart found the job in the journal: it is reported interrupted, with what it was given.
    const interrupted = await job(jobId);
    expect(interrupted).toMatchObject({
      state: 'interrupted',
      files: [{ source: 'studio.zip', stage: 'interrupted' }],
      error: { code: 'interrupted' },
    });
    expect(interrupted.error.message).toMatch(
      /stopped before this ingestion ended, so none of its files were stored/,
    );

    const retryId = await jobOf(await start());
    const done = await waitFor(
      async () => {
        const j = await job(retryId);
        return j.state === 'running' ? undefined : j;
      },
      180_000,
      'the retried job',
    );
    expect(done.state).toBe('done');
    expect(snapshot(dataDir, seeded.listingId).documents.length).toBe(before.kb.documents.length + FILES);
    // Completed into the same listing: the interruption is no longer reported.
    expect((await server.studio(`/studio/jobs/${jobId}`)).status).toBe(404);
    await server.stop();
  }, 400_000);

  it('`kbstudio ingest` killed mid-way leaves the knowledge base as it was; the next run cleans up and succeeds', async () => {
    const corpus = await writeCorpus(dir.path, 'cli', FILES, PARAGRAPHS);
    const before = snapshot(dataDir, seeded.listingId);
    const child = spawn(
      process.execPath,
      [CLI, '--data-dir', dataDir, '--json', 'ingest', '--listing', seeded.listingId, corpus.folder],
      { cwd: REPO_ROOT, stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // The staging database exists once the first file's chunks are being written.
    await waitFor(
      async () => (scratchLeft(dataDir).length > 0 ? true : child.exitCode === null ? undefined : false),
      60_000,
      'the CLI to start staging',
    );
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    await exited;
    expect(child.signalCode).toBe('SIGKILL');

    expect(snapshot(dataDir, seeded.listingId)).toEqual(before);
    expect(integrityCheck(dataDir)).toBe('ok');
    expect(scratchLeft(dataDir).length).toBeGreaterThan(0);
    const result = JSON.parse(
      await runCli(dataDir, ['ingest', '--listing', seeded.listingId, corpus.folder], 180_000),
    );
    expect(result.documents.every((d: any) => d.status === 'ingested')).toBe(true);
    expect(result.knowledgeBase.documents).toBe(before.documents.length + FILES);
    expect(scratchLeft(dataDir)).toEqual([]);
    expect(integrityCheck(dataDir)).toBe('ok');
  }, 400_000);

  it('`kbstudio ingest` killed while pre-built embeddings are written into its commit leaves the knowledge base as it was', async () => {
    const lines = 60_000;
    const file = join(dir.path, 'vectors.jsonl');
    const embedding = JSON.stringify(
      Array.from({ length: OFFLINE_MODEL.dimensions }, (_, i) => Math.sin(i + 1)),
    );
    writeFileSync(
      file,
      Array.from(
        { length: lines },
        (_, i) => `{"text":${JSON.stringify(prose(i, 2))},"embedding":${embedding},"metadata":{"item":${i}}}`,
      ).join('\n'),
    );
    const before = snapshot(dataDir, seeded.listingId);
    const wal = join(dataDir, `${DATABASE_FILE}-wal`);
    const walSize = () => {
      try {
        return statSync(wal).size;
      } catch {
        return 0;
      }
    };
    const walBefore = walSize();
    const child = spawn(
      process.execPath,
      [CLI, '--data-dir', dataDir, '--json', 'ingest', '--listing', seeded.listingId, file],
      { cwd: REPO_ROOT, stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // The commit's transaction writes pages to the WAL once its 64 MB page cache is full: by then
    // thousands of lines are in it, and tens of thousands are still to come.
    await waitFor(
      async () =>
        walSize() > walBefore + 32 * 1024 * 1024 ? true : child.exitCode === null ? undefined : false,
      120_000,
      'the commit to write its first pages',
    );
    child.kill('SIGKILL');
    await exited;
    expect(child.signalCode).toBe('SIGKILL');

    expect(snapshot(dataDir, seeded.listingId)).toEqual(before);
    expect(integrityCheck(dataDir)).toBe('ok');
    const result = JSON.parse(
      await runCli(dataDir, ['ingest', '--listing', seeded.listingId, file], 300_000),
    );
    expect(result.documents).toMatchObject([{ source: 'vectors.jsonl', status: 'ingested', chunks: lines }]);
    // `chunks`: what this run stored; `knowledgeBase`: what the listing holds after it.
    expect(result.chunks).toBe(lines);
    expect(result.knowledgeBase.chunks).toBe(before.listing.chunkCount + lines);
    expect(integrityCheck(dataDir)).toBe('ok');
  }, 600_000);
});
