import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  lstatSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkZip, extractZip } from '../../src/core/ingest/zip';
import { json, startStudio, type TestStudio } from '../helpers/studio';
import { STRESS } from './hostile';
import { buildZip, type ZipEntrySpec } from './forgeZip';

/**
 * Hostile archives sent to POST /v1/upload, as a buyer-facing client would: each is refused at once
 * (4xx) or its upload fails with a clear error, fast, and nothing lands outside the upload's temp folder.
 */
let studio: TestStudio;
let key: string;
let outside: string;
const canary = `kbs-canary-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  studio = await startStudio({ rateLimits: { perKey: 10_000 } });
  key = studio.services.apiKeys.create(studio.services.wallets.defaultWallet().address).key;
  outside = mkdtempSync(join(tmpdir(), 'kbs-outside-'));
});
afterAll(async () => {
  await studio.close();
  rmSync(outside, { recursive: true, force: true });
});

async function upload(
  zip: Buffer,
  name = 'kb.zip',
): Promise<{ status: number; code?: string; message: string }> {
  const form = new FormData();
  form.append('files', new Blob([zip]), name);
  form.append('config', JSON.stringify({ chunking: 'recursive' }));
  const res = await studio.api('/v1/upload', { key, method: 'POST', body: form });
  const body = await json(res);
  if (res.status !== 202)
    return { status: res.status, code: body.error?.code, message: body.error?.message ?? '' };
  await studio.services.uploads.idle();
  const done = (await json(await studio.api(`/v1/upload/${body.data.uploadId}`, { key }))).data;
  return { status: 202, code: done.status, message: done.error?.message ?? '' };
}

/** Every path under a folder, with symbolic links reported as such. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).map((p) =>
    lstatSync(join(dir, p)).isSymbolicLink() ? `${p} -> symlink` : p,
  );
}

const evil = (name: string, data = 'payload'): ZipEntrySpec => ({ name, data });

const CASES: {
  name: string;
  zip: () => Buffer;
  expect: { status: number; code: string; message: RegExp };
}[] = [
  {
    name: '../ path',
    zip: () => buildZip([evil('ok.md', '# ok'), evil(`../../${canary}.md`)]),
    expect: { status: 422, code: 'invalid_document', message: /kb\.zip: .*\.\./ },
  },
  {
    name: 'absolute path',
    zip: () => buildZip([evil(`${join(outside, canary)}.md`)]),
    expect: { status: 422, code: 'invalid_document', message: /kb\.zip: .*absolute/ },
  },
  {
    name: 'backslash ..\\ path',
    zip: () => buildZip([evil(`..\\..\\${canary}.md`)]),
    expect: { status: 422, code: 'invalid_document', message: /kb\.zip: .*\.\./ },
  },
  {
    name: 'symlink entry',
    zip: () => buildZip([{ name: 'docs/link.md', data: outside, externalAttributes: 0o120777 << 16 }]),
    expect: {
      status: 422,
      code: 'invalid_document',
      message: /kb\.zip: entry "docs\/link\.md" is a symbolic link/,
    },
  },
  {
    name: 'duplicate names',
    zip: () => buildZip([evil('a.md', '# one'), evil('a.md', '# two')]),
    expect: {
      status: 422,
      code: 'invalid_document',
      message: /kb\.zip: entry "a\.md" appears more than once/,
    },
  },
  {
    name: 'case-colliding names',
    zip: () => buildZip([evil('Notes.md', '# one'), evil('notes.MD', '# two')]),
    expect: { status: 422, code: 'invalid_document', message: /kb\.zip: .*collide/ },
  },
  {
    name: 'encrypted entry',
    zip: () => buildZip([{ name: 'secret.md', data: 'xxxx', flags: 0x1 }]),
    expect: { status: 422, code: 'encrypted_document', message: /kb\.zip: secret\.md.*encrypted/ },
  },
  {
    name: 'truncated archive',
    zip: () => buildZip([evil('a.md', '# a'.repeat(100))]).subarray(0, 60),
    expect: { status: 422, code: 'invalid_document', message: /kb\.zip: / },
  },
  {
    name: 'nested archive (a ZIP inside the ZIP)',
    zip: () => buildZip([evil('a.md', '# a'), { name: 'inner.zip', data: buildZip([evil('b.md', '# b')]) }]),
    expect: {
      status: 415,
      code: 'unsupported_file_type',
      message: /kb\.zip\/inner\.zip \(nested archive: archives inside archives are not unpacked;/,
    },
  },
  {
    name: 'ratio bomb (honest headers)',
    zip: () =>
      buildZip(['a', 'b', 'c'].map((n) => ({ name: `${n}.csv`, data: Buffer.alloc(30 * 1024 * 1024) }))),
    expect: { status: 422, code: 'invalid_document', message: /kb\.zip: .*refused as a zip bomb/ },
  },
  {
    name: 'size bomb (headers claim 4 GB)',
    zip: () => buildZip([{ name: 'huge.md', data: 'tiny', declaredSize: 4_000_000_000 }]),
    expect: {
      status: 413,
      code: 'payload_too_large',
      message: /kb\.zip: "huge\.md" is 3\.7 GB uncompressed; the limit is 50 MB per file/,
    },
  },
  {
    name: 'size bomb (headers lie small)',
    zip: () => {
      const bomb = Buffer.alloc(40 * 1024 * 1024);
      return buildZip([{ name: 'bomb.md', data: bomb, declaredSize: 1000 }]);
    },
    expect: {
      status: 202,
      code: 'failed',
      message: /"bomb\.md" inflates to more data than its header declares/,
    },
  },
];

describe('hostile archives through POST /v1/upload', () => {
  const timings: Record<string, number> = {};

  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: refused with a clear error, fast',
    async (_name, c) => {
      const started = performance.now();
      const result = await upload(c.zip());
      timings[c.name] = Math.round(performance.now() - started);
      expect(result).toMatchObject({ status: c.expect.status, code: c.expect.code });
      expect(result.message).toMatch(c.expect.message);
      expect(timings[c.name]).toBeLessThan(10_000);
    },
  );

  it('wrote nothing outside the data directory and left no temp files or links behind', () => {
    expect(tree(outside)).toEqual([]);
    for (const dir of [tmpdir(), join(studio.services.dataDir, '..')]) {
      expect(readdirSync(dir).filter((f) => f.includes(canary))).toEqual([]);
    }
    const left = tree(join(studio.services.dataDir, 'tmp'));
    expect(left.filter((p) => /\.(md|csv|zip)$|symlink/.test(p))).toEqual([]);
    expect(tree(studio.services.dataDir).filter((p) => p.includes('symlink') || p.includes(canary))).toEqual(
      [],
    );
  });
});

describe('100,000 tiny entries', () => {
  const work = mkdtempSync(join(tmpdir(), 'kbs-many-'));
  // The stress run leaves 100,000 files to delete: more than the default hook timeout on a busy disk.
  afterAll(() => rmSync(work, { recursive: true, force: true }), 600_000);
  const many = (count: number, last?: ZipEntrySpec) =>
    buildZip([
      ...Array.from({ length: count }, (_, i) => ({
        name: `d${i % 100}/f${i}.md`,
        data: `# ${i}`,
        method: 0,
      })),
      ...(last ? [last] : []),
    ]);

  it('refuses 100,001 entries from the entry count alone, in well under a second', async () => {
    const file = join(work, 'over.zip');
    writeFileSync(file, many(100_001));
    const started = performance.now();
    const err = await extractZip(file, join(work, 'out-over')).catch((e: Error) => e);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((err as Error).message).toContain(
      'the archive has 100,001 entries; the limit is 100,000 entries per archive.',
    );
    expect(tree(join(work, 'out-over'))).toEqual([]);
  });

  it('lists 100,000 entries fast with bounded memory, then refuses the bad last one, writing nothing', async () => {
    const file = join(work, 'last.zip');
    writeFileSync(file, many(99_999, { name: 'z/last.exe', data: 'MZ' }));
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const err = await extractZip(file, join(work, 'out-last')).catch((e: Error) => e);
    const ms = performance.now() - started;
    const growthMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    console.info(
      `100,000-entry archive listed and refused in ${Math.round(ms)} ms, RSS +${growthMb.toFixed(1)} MB`,
    );
    expect((err as Error).message).toContain('z/last.exe (.exe)');
    expect(ms).toBeLessThan(10_000);
    expect(growthMb).toBeLessThan(150);
    expect(tree(join(work, 'out-last'))).toEqual([]);
  });

  it('checkZip (for upload prechecks) checks 100,000 entries in seconds and refuses 100,001 at once', async () => {
    const file = join(work, 'names.zip');
    writeFileSync(file, many(99_999, { name: 'z/last.exe', data: 'MZ' }));
    const started = performance.now();
    const checked = await checkZip(file);
    const ms = performance.now() - started;
    console.info(`checkZip: 100,000 entries in ${Math.round(ms)} ms`);
    expect(checked.files).toHaveLength(99_999);
    expect(checked.files.at(-1)).toBe('d98/f99998.md');
    expect(checked.unsupported).toEqual([{ entry: 'z/last.exe', type: '.exe' }]);
    expect(ms).toBeLessThan(8_000);
    writeFileSync(file, many(100_001));
    await expect(checkZip(file)).rejects.toThrow(
      'the archive has 100,001 entries; the limit is 100,000 entries per archive.',
    );
  });

  // Precheck checks the central directory with checkZip, through the block reader of zipReader.ts
  // (11-18 s with yauzl's own reader).
  it('answers an upload of 100,000 entries with one bad type with 415', async () => {
    const zip = many(99_999, { name: 'z/last.exe', data: 'MZ' });
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const result = await upload(zip, 'many.zip');
    const ms = performance.now() - started;
    const growthMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    console.info(
      `POST /v1/upload of 100,000 entries refused in ${Math.round(ms)} ms, RSS +${growthMb.toFixed(1)} MB`,
    );
    expect(result).toMatchObject({ status: 415, code: 'unsupported_file_type' });
    expect(result.message).toContain('many.zip/z/last.exe (.exe)');
    expect(ms).toBeLessThan(10_000);
    expect(growthMb).toBeLessThan(200);
    expect(tree(join(studio.services.dataDir, 'tmp')).filter((p) => p.endsWith('.zip'))).toEqual([]);
  });

  it('refuses an upload of 100,001 entries at upload time from the entry count, with 413', async () => {
    const started = performance.now();
    const result = await upload(many(100_001), 'over.zip');
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(result.message).toContain(
      'over.zip: the archive has 100,001 entries; the limit is 100,000 entries per archive.',
    );
    expect(tree(join(studio.services.dataDir, 'tmp')).filter((p) => p.endsWith('.zip'))).toEqual([]);
  });

  it.skipIf(!STRESS)(
    'extracts 100,000 tiny entries (KBSTUDIO_STRESS=1 only: minutes on a busy machine)',
    async () => {
      const file = join(work, 'all.zip');
      writeFileSync(file, many(100_000));
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      const result = await extractZip(file, join(work, 'out-all'));
      const growthMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
      console.info(
        `100,000 entries extracted in ${Math.round(performance.now() - started)} ms, RSS +${growthMb.toFixed(1)} MB`,
      );
      expect(result.files).toHaveLength(100_000);
      expect(readFileSync(join(work, 'out-all', 'd42', 'f99942.md'), 'utf8')).toBe('# 99942');
      expect(growthMb).toBeLessThan(300);
      expect(relative(work, result.files[0]!.path).startsWith('out-all')).toBe(true);
    },
    900_000,
  );
});
