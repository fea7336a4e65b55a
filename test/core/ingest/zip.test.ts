import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EncryptedDocument,
  InvalidDocument,
  PayloadTooLarge,
  UnsupportedFileType,
} from '../../../src/core/ingest/errors';
import { extractZip } from '../../../src/core/ingest/zip';
import { NESTED_ARCHIVE_TYPE } from '../../../src/core/ingest/zipEntryNames';
import { buildZip, type ZipEntrySpec } from '../../hardening/forgeZip';

const repoRoot = new URL('../../..', import.meta.url).pathname;
const fixtures = path.join(repoRoot, '../shared/fixtures/docs');

let work: string;
let dest: string;

beforeEach(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'kbs-zip-test-'));
  dest = path.join(work, 'out');
});

afterEach(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

async function writeZip(specs: ZipEntrySpec[], name = 'upload.zip'): Promise<string> {
  const file = path.join(work, name);
  await fs.writeFile(file, buildZip(specs));
  return file;
}

async function listTree(dir: string): Promise<string[]> {
  try {
    const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error('expected the extraction to be refused');
  return err;
}

describe('extractZip', () => {
  it('extracts the real fixture archive', async () => {
    const result = await extractZip(path.join(fixtures, 'simple.zip'), dest);
    expect(result.files.map((f) => [f.entry, f.format, f.bytes])).toEqual([
      ['ideas-page.html', 'html', 6161],
      ['stanley-cups.csv', 'csv', 89],
    ]);
    expect(result.ignored).toEqual([]);
    const html = await fs.readFile(result.files[0]!.path);
    expect(html.equals(await fs.readFile(path.join(fixtures, 'ideas-page.html')))).toBe(true);
    expect(await fs.readFile(result.files[1]!.path, 'utf8')).toContain('Stanley');
  });

  it('writes nested, stored and deflated entries, skips folders and OS litter', async () => {
    const zip = await writeZip([
      { name: 'docs/', method: 0 },
      { name: 'docs/guide.md', data: '# Guide\n\nGrüße 👋 日本語' },
      { name: './docs/sub/data.csv', data: 'a,b\n1,2\n', method: 0 },
      { name: 'vectors.jsonl', data: '{"text":"x","embedding":[1]}\n' },
      { name: '__MACOSX/docs/._guide.md', data: 'resource fork' },
      { name: 'docs/.DS_Store', data: 'finder' },
      { name: 'Thumbs.db', data: 'thumbs' },
      { name: '.git/config', data: '[core]' },
      { name: 'docs/~$report.docx', data: 'lock' },
    ]);
    const result = await extractZip(zip, dest);
    expect(result.files.map((f) => [f.entry, f.format])).toEqual([
      ['docs/guide.md', 'markdown'],
      ['docs/sub/data.csv', 'csv'],
      ['vectors.jsonl', 'embeddings'],
    ]);
    expect(result.ignored).toEqual([
      '__MACOSX/docs/._guide.md',
      'docs/.DS_Store',
      'Thumbs.db',
      '.git/config',
      'docs/~$report.docx',
    ]);
    // Written by number, in the archive's order; the entry names them.
    expect(await fs.readFile(path.join(dest, '1'), 'utf8')).toBe('# Guide\n\nGrüße 👋 日本語');
    expect(result.files[1]!.path).toBe(path.join(dest, '2'));
    expect(result.files[1]!.bytes).toBe(8);
    expect((await listTree(dest)).sort()).toEqual(['1', '2', '3']);
  });

  it('extracts entries whose names the disk would refuse: a segment past 255 bytes, a path past PATH_MAX', async () => {
    // 120 CJK characters are 360 bytes in UTF-8; 40 folders of 120 characters are 4,800. Written under
    // their names, both failed (ENAMETOOLONG) after the archive had been accepted.
    const long = `${'文'.repeat(120)}.md`;
    const deep = `${Array.from({ length: 40 }, (_, i) => `${i}${'d'.repeat(119)}`).join('/')}/deep.md`;
    const zip = await writeZip([
      { name: long, data: '# Long' },
      { name: deep, data: '# Deep' },
    ]);
    const result = await extractZip(zip, dest);
    expect(result.files.map((f) => f.entry)).toEqual([long, deep]);
    expect(await fs.readFile(result.files[0]!.path, 'utf8')).toBe('# Long');
    expect(await fs.readFile(result.files[1]!.path, 'utf8')).toBe('# Deep');
  });

  it('refuses the whole archive when any entry has an unsupported type, listing each, before writing', async () => {
    const zip = await writeZip([
      { name: 'a.md', data: '# A' },
      { name: 'notes.txt', data: 'text' },
      { name: 'bin/README', data: 'readme' },
      { name: 'inner.zip', data: 'PK' },
      { name: 'photo.JPG', data: 'jpeg' },
      { name: '__MACOSX/._notes.txt', data: 'fork' },
    ]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(UnsupportedFileType);
    expect((err as UnsupportedFileType).entries).toEqual([
      { entry: 'notes.txt', type: '.txt' },
      { entry: 'bin/README', type: 'no extension' },
      { entry: 'inner.zip', type: NESTED_ARCHIVE_TYPE },
      { entry: 'photo.JPG', type: '.jpg' },
    ]);
    expect(err.message).toContain(
      'inner.zip (nested archive: archives inside archives are not unpacked; add its files to the outer archive instead)',
    );
    expect(await listTree(dest)).toEqual([]);
  });

  it.each([
    ['../evil.md', 'has a ".." segment'],
    ['docs/../../evil.md', 'has a ".." segment'],
    ['..\\..\\evil.md', 'has a ".." segment'],
    ['/etc/cron.d/evil.md', 'is an absolute path'],
    ['\\evil.md', 'is an absolute path'],
    ['C:/Windows/evil.md', 'starts with a drive letter'],
    ['docs/file.md:stream', 'contains ":"'],
  ])('refuses the unsafe entry name %j, naming the archive and the entry', async (name, problem) => {
    const zip = await writeZip([
      { name: 'ok.md', data: '# fine' },
      { name, data: 'payload' },
    ]);
    const err = await refusal(extractZip(zip, dest, { source: 'kb.zip' }));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain('kb.zip: entry');
    expect(err.message).toContain(`"${name}"`);
    expect(err.message).toContain(problem);
    expect(await listTree(work)).toEqual(['upload.zip']);
  });

  it('refuses symbolic links', async () => {
    const zip = await writeZip([
      { name: 'docs/link.md', data: '/etc/passwd', externalAttributes: 0o120777 << 16 },
    ]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toBe(
      'upload.zip: entry "docs/link.md" is a symbolic link; archives may contain only files and folders.',
    );
  });

  it('refuses encrypted entries with the encrypted_document code', async () => {
    const zip = await writeZip([{ name: 'secret.pdf', data: 'xxxx', flags: 0x1 }]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(EncryptedDocument);
    expect((err as EncryptedDocument).code).toBe('encrypted_document');
    expect(err.message).toContain('upload.zip: secret.pdf: the document is encrypted');
  });

  it('refuses entries compressed with an unsupported method', async () => {
    const zip = await writeZip([{ name: 'a.md', data: 'lzma?', method: 14 }]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain('compression method 14');
  });

  it.each([
    [['a.md', 'a.md'], 'entry "a.md" appears more than once'],
    [['Docs/Read.md', 'docs/read.MD'], 'entries "Docs/Read.md" and "docs/read.MD" collide'],
    [['caf\u00e9.md', 'cafe\u0301.md'], 'collide'],
    [['x.md', 'x.md/y.md'], 'entries "x.md" and "x.md/y.md" collide'],
    [['x.md/y.md', 'X.md'], 'entries "x.md/y.md" and "X.md" collide'],
  ])('refuses colliding names %j', async (names, expected) => {
    const zip = await writeZip(names.map((name) => ({ name, data: '# doc' })));
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain(expected);
    expect(await listTree(dest)).toEqual([]);
  });

  it('refuses an archive with more entries than the limit before reading them', async () => {
    const specs = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.md`, data: 'x' }));
    const err = await refusal(extractZip(await writeZip(specs), dest, { maxEntries: 10 }));
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err.message).toContain('the archive has 11 entries; the limit is 10 entries per archive.');
    expect(err.message).toContain('creator plan upgrade');
  });

  it('extracts hundreds of tiny entries quickly', async () => {
    const specs = Array.from({ length: 500 }, (_, i) => ({ name: `d${i % 10}/f${i}.md`, data: `# ${i}` }));
    const zip = await writeZip(specs);
    const started = performance.now();
    const result = await extractZip(zip, dest);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result.files).toHaveLength(500);
    expect(result.files[497]!.entry).toBe('d7/f497.md');
    expect(await fs.readFile(result.files[497]!.path, 'utf8')).toBe('# 497');
  });

  it('reports each file written, and stops between entries when aborted, removing what it wrote', async () => {
    const specs = Array.from({ length: 2_000 }, (_, i) => ({ name: `d${i % 20}/f${i}.md`, data: `# ${i}` }));
    const zip = await writeZip([{ name: '.DS_Store', data: 'x' }, { name: 'd0/', method: 0 }, ...specs]);
    const controller = new AbortController();
    const reports: [number, number][] = [];
    const err = await refusal(
      extractZip(zip, dest, {
        signal: controller.signal,
        onProgress: (done, total) => {
          reports.push([done, total]);
          if (done === 100) controller.abort(new Error('cancelled by the test'));
        },
      }),
    );
    expect(err.message).toBe('cancelled by the test');
    // Counted against the files to write (the folder and the litter left out), from 0 up, one by one.
    expect(reports.slice(0, 3)).toEqual([
      [0, 2_000],
      [1, 2_000],
      [2, 2_000],
    ]);
    // The entries already being written when it came finish (8 at a time); no other is begun.
    expect(reports.length).toBeLessThan(100 + 10);
    expect(await listTree(dest)).toEqual([]);

    const already = new AbortController();
    already.abort(new Error('cancelled before'));
    expect((await refusal(extractZip(zip, dest, { signal: already.signal }))).message).toBe(
      'cancelled before',
    );
  });

  it('stops inside a large entry when aborted while it is written', async () => {
    // 40 MB to inflate and write: 140-1,600 ms here, so an abort 10 ms in comes while it is written (had
    // it been let finish, the archive's only entry, the extraction would have succeeded).
    const zip = await writeZip([{ name: 'big.csv', data: Buffer.alloc(40 * 1024 * 1024, 'a,b\n') }]);
    const controller = new AbortController();
    const onProgress = (done: number) => {
      if (done === 0) setTimeout(() => controller.abort(new Error('cancelled by the test')), 10);
    };
    const err = await refusal(extractZip(zip, dest, { signal: controller.signal, onProgress }));
    expect(err.message).toBe('cancelled by the test');
    expect(await listTree(dest)).toEqual([]);
  });

  it('refuses a file whose declared size is over the per-file limit without inflating it', async () => {
    const zip = await writeZip([
      { name: 'small.md', data: '# ok' },
      { name: 'huge.pdf', data: 'tiny', declaredSize: 4_000_000_000 },
    ]);
    const started = performance.now();
    const err = await refusal(extractZip(zip, dest));
    expect(performance.now() - started).toBeLessThan(3000);
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err.message).toContain(
      'upload.zip: "huge.pdf" is 3.7 GB uncompressed; the limit is 50 MB per file.',
    );
    expect(await listTree(dest)).toEqual([]);
  });

  it('gives the bytes of an entry just over the limit, where the rounded sizes would read the same', async () => {
    const MB = 1024 * 1024;
    const zip = await writeZip([{ name: 'big.md', data: 'tiny', declaredSize: 50 * MB + 10 }]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(PayloadTooLarge);
    // It read "is 50 MB uncompressed; the limit is 50 MB per file".
    expect(err.message).toMatch(
      /^upload\.zip: "big\.md" is 52,428,810 bytes uncompressed; the limit is 52,428,800 bytes \(50 MB\) per file\. /,
    );
    // Sizes that read apart keep the rounded wording.
    const far = await writeZip([{ name: 'big.md', data: 'tiny', declaredSize: 60 * MB }], 'far.zip');
    expect((await refusal(extractZip(far, dest))).message).toContain(
      '"big.md" is 60 MB uncompressed; the limit is 50 MB per file.',
    );
  });

  it('gives the bytes of an archive just over the archive limit, where the rounded sizes would read the same', async () => {
    const big = await writeZip([{ name: 'a.md', data: Buffer.alloc(3 * 1024, 'a'), method: 0 }], 'big.zip');
    const size = (await fs.stat(big)).size;
    const tight = await refusal(extractZip(big, dest, { maxArchiveBytes: size - 2 }));
    expect(tight).toBeInstanceOf(PayloadTooLarge);
    // It read "the archive is 3.1 KB; the limit is 3.1 KB per archive".
    expect(tight.message).toBe(
      `big.zip: the archive is ${size.toLocaleString('en-US')} bytes; the limit is ${(size - 2).toLocaleString('en-US')} bytes (3.1 KB) per archive. Larger knowledge bases require a creator plan upgrade or contacting support.`,
    );
  });

  it('applies a lowered per-file limit to honest entries', async () => {
    const zip = await writeZip([{ name: 'big.csv', data: Buffer.alloc(2 * 1024 * 1024, 'a') }]);
    const err = await refusal(extractZip(zip, dest, { maxFileBytes: 1024 * 1024 }));
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err.message).toContain('"big.csv" is 2 MB uncompressed; the limit is 1 MB per file.');
  });

  it('holds JSONL embeddings to their own per-file limit, not the document one', async () => {
    const zip = await writeZip([{ name: 'vectors.jsonl', data: Buffer.alloc(2 * 1024 * 1024, 'v') }]);
    const result = await extractZip(zip, dest, { maxFileBytes: 1024 * 1024 });
    expect(result.files.map((f) => [f.entry, f.format, f.bytes])).toEqual([
      ['vectors.jsonl', 'embeddings', 2097152],
    ]);
    const err = await refusal(
      extractZip(zip, path.join(work, 'again'), { maxEmbeddingsFileBytes: 1024 * 1024 }),
    );
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err.message).toContain('"vectors.jsonl" is 2 MB uncompressed; the limit is 1 MB per file.');
  });

  it('refuses an archive whose files total more than the limit, before writing anything', async () => {
    const specs = ['a', 'b', 'c'].map((n) => ({ name: `${n}.md`, data: Buffer.alloc(400 * 1024, n) }));
    const err = await refusal(extractZip(await writeZip(specs), dest, { maxTotalBytes: 1024 * 1024 }));
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err.message).toContain('total more than 1 MB uncompressed; the limit is 1 MB per upload.');
    expect(await listTree(dest)).toEqual([]);
  });

  it('stops a bomb that lies about its size early and removes what was written', async () => {
    const bomb = Buffer.alloc(64 * 1024 * 1024);
    const zip = await writeZip([
      { name: 'first.md', data: '# written first' },
      { name: 'bomb.csv', data: bomb, declaredSize: 1000, crc: zlib.crc32(bomb.subarray(0, 1000)) },
    ]);
    const started = performance.now();
    const err = await refusal(extractZip(zip, dest));
    expect(performance.now() - started).toBeLessThan(5000);
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain('entry "bomb.csv" inflates to more data than its header declares');
    expect(await listTree(dest)).toEqual([]);
    await expect(fs.stat(dest)).rejects.toThrow(/ENOENT/);
  });

  it('keeps files that were in destDir before, removing only its own', async () => {
    await fs.mkdir(dest, { recursive: true });
    await fs.writeFile(path.join(dest, 'keep.txt'), 'mine');
    const zip = await writeZip([
      { name: 'sub/first.md', data: '# one' },
      { name: 'second.md', data: '# two', crc: 12345 },
    ]);
    const err = await refusal(extractZip(zip, dest));
    expect(err.message).toContain('entry "second.md" is damaged (CRC-32 checksum mismatch)');
    expect(await listTree(dest)).toEqual(['keep.txt']);
  });

  it('refuses damaged deflate data', async () => {
    const file = await writeZip([{ name: 'a.md', data: 'some text '.repeat(1000) }]);
    const bytes = await fs.readFile(file);
    bytes.fill(0xff, 30 + 4 + 2, 30 + 4 + 40);
    await fs.writeFile(file, bytes);
    const err = await refusal(extractZip(file, dest));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toMatch(/^upload\.zip: entry "a\.md" is damaged/);
  });

  it('refuses a truncated archive and a file that is not an archive', async () => {
    const full = buildZip([{ name: 'a.md', data: '# a' }]);
    await fs.writeFile(path.join(work, 'cut.zip'), full.subarray(0, full.length - 10));
    const cut = await refusal(extractZip(path.join(work, 'cut.zip'), dest));
    expect(cut).toBeInstanceOf(InvalidDocument);
    expect(cut.message).toContain('cut.zip: not a ZIP archive, or a damaged one');

    await fs.writeFile(path.join(work, 'notes.zip'), 'just some text, not a zip at all');
    const text = await refusal(extractZip(path.join(work, 'notes.zip'), dest));
    expect(text).toBeInstanceOf(InvalidDocument);
    expect(text.message).toContain('notes.zip: not a ZIP archive');
  });

  it('refuses an archive larger than the archive limit', async () => {
    const zip = await writeZip([{ name: 'a.md', data: '# a' }]);
    const err = await refusal(extractZip(zip, dest, { maxArchiveBytes: 10 }));
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err.message).toContain('the limit is 10 bytes per archive');
  });
  it('refuses an honest high-ratio bomb (each file within limits) before writing anything', async () => {
    const zeros = Buffer.alloc(30 * 1024 * 1024);
    const zip = await writeZip(['a', 'b', 'c'].map((n) => ({ name: `${n}.csv`, data: zeros })));
    expect((await fs.stat(zip)).size).toBeLessThan(300 * 1024);
    const started = performance.now();
    const err = await refusal(extractZip(zip, dest));
    expect(performance.now() - started).toBeLessThan(3000);
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toMatch(
      /^upload\.zip: the archive's files inflate to more than 90 MB from \d+(\.\d)? KB \(over 100× compression\), which is refused as a zip bomb/,
    );
    expect(await listTree(dest)).toEqual([]);
  });

  it('accepts a small archive of very compressible files (under the ratio floor)', async () => {
    const zip = await writeZip([{ name: 'blank.csv', data: Buffer.alloc(2 * 1024 * 1024, ',') }]);
    const result = await extractZip(zip, dest);
    expect(result.files.map((f) => [f.entry, f.bytes])).toEqual([['blank.csv', 2 * 1024 * 1024]]);
  });

  it('refuses a real ZIP inside the ZIP as a nested archive, writing nothing', async () => {
    const inner = buildZip([{ name: 'deep.md', data: '# inside' }]);
    const zip = await writeZip([
      { name: 'outer.md', data: '# outside' },
      { name: 'docs/inner.zip', data: inner, method: 0 },
      { name: 'docs/INNER.ZIP', data: inner },
    ]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(UnsupportedFileType);
    expect((err as UnsupportedFileType).entries).toEqual([
      { entry: 'docs/inner.zip', type: NESTED_ARCHIVE_TYPE },
      { entry: 'docs/INNER.ZIP', type: NESTED_ARCHIVE_TYPE },
    ]);
    expect(await listTree(dest)).toEqual([]);
  });

  it('refuses `a.md` and `./a.md` as the same entry', async () => {
    const zip = await writeZip([
      { name: 'a.md', data: '# one' },
      { name: './a.md', data: '# two' },
    ]);
    const err = await refusal(extractZip(zip, dest));
    expect(err.message).toContain('entry "a.md" appears more than once in the archive.');
  });

  it('refuses AES-encrypted entries (method 99 with the encryption flag) as encrypted', async () => {
    const zip = await writeZip([{ name: 'secret.docx', data: 'ciphertext', method: 99, flags: 0x1 }]);
    const err = await refusal(extractZip(zip, dest));
    expect(err).toBeInstanceOf(EncryptedDocument);
    expect(err.message).toContain('secret.docx');
  });

  it('refuses a central directory that points past the end of the file', async () => {
    const bytes = buildZip([{ name: 'a.md', data: '# a' }]);
    const centralStart = bytes.readUInt32LE(bytes.length - 22 + 16);
    bytes.writeUInt32LE(10_000_000, centralStart + 42); // the entry's local header offset
    await fs.writeFile(path.join(work, 'lying.zip'), bytes);
    const err = await refusal(extractZip(path.join(work, 'lying.zip'), dest));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toMatch(/^lying\.zip: entry "a\.md" is damaged/);
    expect(await listTree(dest)).toEqual([]);
  });

  it('refuses an archive cut inside its file data, keeping its central directory', async () => {
    const full = buildZip([{ name: 'a.md', data: 'text '.repeat(5000) }]);
    const centralStart = full.readUInt32LE(full.length - 22 + 16);
    const cut = Buffer.concat([full.subarray(0, 200), full.subarray(centralStart)]);
    cut.writeUInt32LE(200, cut.length - 22 + 16);
    await fs.writeFile(path.join(work, 'cut.zip'), cut);
    const err = await refusal(extractZip(path.join(work, 'cut.zip'), dest));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toMatch(/^cut\.zip: /);
    expect(await listTree(dest)).toEqual([]);
  });
});
