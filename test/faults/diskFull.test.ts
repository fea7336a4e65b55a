import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../helpers/cli';
import { runCli } from '../helpers/e2e';
import { tempDir } from '../helpers/studio';
import {
  integrityCheck,
  retrievals,
  scratchLeft,
  seedStudio,
  serve,
  snapshot,
  storedUpload,
  waitFor,
  writeCorpus,
  type Seeded,
  type ServeChild,
} from './studioProcess';

/**
 * A full disk: the data directory on an 8 MB tmpfs (needs root and mount, which this container
 * allows; elsewhere the suite is skipped with the reason). Uploads and ingestions larger than the
 * space left fail with a message saying the disk is full, store nothing, and the server keeps serving.
 */
const dir = tempDir('kbs-diskfull-');
const mountPoint = join(dir.path, 'mnt');
const dataDir = join(mountPoint, 'data');

function tryMount(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: mounting a tmpfs needs root';
  mkdirSync(mountPoint, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `mount -t tmpfs failed: ${(err as { stderr?: Buffer }).stderr?.toString().trim()}`;
  }
}

const skipReason = tryMount();
if (skipReason) console.warn(`Skipping the full-disk tests: ${skipReason}.`);

let seeded: Seeded;
let server: ServeChild | undefined;

beforeAll(async () => {
  if (skipReason) return;
  seeded = await seedStudio(dataDir);
  const base = await writeCorpus(dir.path, 'base', 3, 4);
  await runCli(dataDir, ['ingest', '--listing', seeded.listingId, base.folder]);
  server = await serve(dataDir, seeded.apiKey);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (!skipReason) execFileSync('umount', ['-l', mountPoint]);
  dir.remove();
});

const freeBytes = () => {
  const s = statfsSync(mountPoint);
  return s.bavail * s.bsize;
};

describe.skipIf(Boolean(skipReason))('a full disk (data directory on an 8 MB tmpfs)', () => {
  it('an upload larger than the space left fails saying the disk is full; nothing is stored and the server keeps serving', async () => {
    const before = {
      kb: snapshot(dataDir, seeded.listingId),
      retrieved: await retrievals(server!, seeded.listingId),
    };
    // 400 files of about 24 KB: ~10 MB of text compressed to a ZIP that fits, staged chunks that do not.
    const corpus = await writeCorpus(dir.path, 'big', 400, 40);
    const form = new FormData();
    form.append('files', new Blob([readFileSync(corpus.zip)]), 'big.zip');
    form.append('config', JSON.stringify({ listing_id: seeded.listingId }));
    const res = await server!.v1('/v1/upload', { method: 'POST', body: form });
    const accepted = (await res.json()) as any;
    let error: { code: string; message: string };
    if (res.status === 202) {
      const id = accepted.data.uploadId as string;
      await waitFor(
        async () => (['failed', 'completed'].includes(storedUpload(dataDir, id).status) ? true : undefined),
        120_000,
        'the upload to end',
      );
      const upload = ((await (await server!.v1(`/v1/upload/${id}`)).json()) as any).data;
      expect(upload.status).toBe('failed');
      error = upload.error;
    } else {
      error = accepted.error;
    }
    console.info(`full disk, upload: ${res.status} ${JSON.stringify(error)}`);
    expect(error.message).toMatch(/disk is full/i);
    expect(error.message).toContain(dataDir);

    expect(snapshot(dataDir, seeded.listingId)).toEqual(before.kb);
    expect(integrityCheck(dataDir)).toBe('ok');
    expect(scratchLeft(dataDir)).toEqual([]);
    expect(freeBytes()).toBeGreaterThan(2 * 1024 * 1024);
    // Still serving: listings and retrieval answer as before.
    expect((await server!.v1('/v1/listings')).status).toBe(200);
    expect(await retrievals(server!, seeded.listingId)).toEqual(before.retrieved);
  }, 300_000);

  it('an archive larger than the space left is refused while it is received, and the server keeps serving', async () => {
    const before = snapshot(dataDir, seeded.listingId);
    // Random bytes do not compress: a 12 MB archive cannot even be received on an 8 MB disk.
    const { randomBytes } = await import('node:crypto');
    const { writeZip } = await import('../helpers/zip');
    const zip = await writeZip(join(dir.path, 'noise.zip'), {
      'noise/data.json': randomBytes(12 * 1024 * 1024).toString('base64'),
    });
    const form = new FormData();
    form.append('files', new Blob([readFileSync(zip)]), 'noise.zip');
    form.append('config', JSON.stringify({ listing_id: seeded.listingId }));
    const res = await server!.v1('/v1/upload', { method: 'POST', body: form });
    const body = (await res.json()) as any;
    console.info(`full disk, receiving: ${res.status} ${JSON.stringify(body.error ?? body.data?.status)}`);
    // The multipart receiver turns ENOSPC into the same clear error as the rest of the studio.
    expect(res.status).toBe(500);
    expect(body.error).toMatchObject({ code: 'internal_error' });
    expect(body.error.message).toMatch(/disk is full/i);
    expect(body.error.message).toContain(dataDir);
    expect(snapshot(dataDir, seeded.listingId)).toEqual(before);
    expect(scratchLeft(dataDir)).toEqual([]);
    expect((await server!.v1('/v1/listings')).status).toBe(200);
  }, 300_000);

  it('`kbstudio ingest` of more than fits fails saying the disk is full, and stores nothing', async () => {
    await server?.stop();
    server = undefined;
    const before = snapshot(dataDir, seeded.listingId);
    const corpus = await writeCorpus(dir.path, 'cli', 400, 40);
    const result = await cliRunner(dataDir)('ingest', '--listing', seeded.listingId, corpus.folder);
    console.info(`full disk, CLI: exit ${result.code}: ${result.stderr.trim()}`);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/disk is full/i);
    expect(result.stderr).toContain(dataDir);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(dataDir, seeded.listingId)).toEqual(before);
    expect(integrityCheck(dataDir)).toBe('ok');
    expect(scratchLeft(dataDir)).toEqual([]);
  }, 300_000);
});
