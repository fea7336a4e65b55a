import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/core/errors';
import { precheckUploadFiles } from '../../../src/core/ingest/precheck';
import { BULK_LIMITS } from '../../../src/core/ingest/limits';
import { extractZip } from '../../../src/core/ingest/zip';
import { printableName } from '../../../src/core/ingest/zipEntryNames';
import { buildZip, type ZipEntrySpec } from '../../hardening/forgeZip';

const work = mkdtempSync(join(tmpdir(), 'kbs-precheck-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let count = 0;
function zipFile(specs: ZipEntrySpec[]): string {
  const file = join(work, `upload-${count++}.zip`);
  writeFileSync(file, buildZip(specs));
  return file;
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: unknown) => err as DomainError,
  );

describe('printableName', () => {
  it('escapes control characters as JSON does and leaves ordinary names alone', () => {
    expect(printableName('docs/Guide – été.md')).toBe('docs/Guide – été.md');
    expect(printableName('a\nb\r\tc\u0000d\u001be')).toBe('a\\nb\\r\\tc\\u0000d\\u001be');
    // DEL, a C1 control, a line separator and a right-to-left override.
    expect(printableName('x\u007fy\u0085z\u2028w\u202eexe.md')).toBe(
      'x\\u007fy\\u0085z\\u2028w\\u202eexe.md',
    );
  });
});

describe('precheckUploadFiles', () => {
  it('refuses an entry name with a newline, escaped in the message (no forged line)', async () => {
    const file = zipFile([{ name: 'docs/a\nFAKE: all good.md', data: '# A' }]);
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'bad.zip' }]));
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('invalid_document');
    // The message extraction gives, as every precheck refusal now is.
    expect(err.message).toBe(
      'bad.zip: entry "docs/a\\nFAKE: all good.md" contains control characters; the archive is refused.',
    );
    expect(err.message).not.toContain('\n');
  });

  it('names unsupported entries with their control characters escaped', async () => {
    const file = zipFile([
      { name: 'ok/readme.md', data: '# Fine' },
      { name: 'bin/run\u202egpj.exe', data: 'MZ' },
    ]);
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'mixed.zip' }]));
    expect(err.code).toBe('unsupported_file_type');
    expect(err.message).toContain('mixed.zip/bin/run\\u202egpj.exe (.exe)');
    expect(err.message).not.toMatch(/[\u202e]/);
  });

  it('refuses an archive over the entry limit from its count alone, before reading the names', async () => {
    const file = zipFile(
      Array.from({ length: 100_001 }, (_, i) => ({ name: `f${i}.md`, data: '', method: 0 })),
    );
    const started = performance.now();
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'many.zip' }]));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toContain(
      'many.zip: the archive has 100,001 entries; the limit is 100,000 entries per archive.',
    );
  });

  it('refuses a file that is not a ZIP archive, naming it', async () => {
    const file = join(work, 'not.zip');
    writeFileSync(file, 'plain text, not an archive');
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'not.zip' }]));
    expect(err.code).toBe('invalid_document');
    expect(err.message).toMatch(/^not\.zip: not a ZIP archive, or a damaged one/);
  });

  it('accepts supported entries and skips folders and OS litter', async () => {
    const file = zipFile([
      { name: 'docs/', data: '' },
      { name: 'docs/a.md', data: '# A' },
      { name: '__MACOSX/docs/._a.md', data: 'x' },
      { name: 'data/b.csv', data: 'x,y\n1,2\n' },
    ]);
    await expect(precheckUploadFiles([{ path: file, name: 'fine.zip' }])).resolves.toBeUndefined();
  });
});

describe('precheckUploadFiles runs the central-directory checks of extraction', () => {
  const MB = 1024 * 1024;
  // Each case is refused by the precheck exactly as extraction refuses it: same code, same message.
  const cases: { name: string; specs: () => ZipEntrySpec[]; code: string; message: RegExp }[] = [
    {
      name: 'a duplicate name',
      specs: () => [
        { name: 'a.md', data: '# one' },
        { name: 'a.md', data: '# two' },
      ],
      code: 'invalid_document',
      message: /^dup\.zip: entry "a\.md" appears more than once in the archive\.$/,
    },
    {
      name: 'names colliding on case',
      specs: () => [
        { name: 'Notes.md', data: '# one' },
        { name: 'notes.MD', data: '# two' },
      ],
      code: 'invalid_document',
      message: /^dup\.zip: entries "Notes\.md" and "notes\.MD" collide on disk/,
    },
    {
      name: 'a symbolic link',
      specs: () => [{ name: 'docs/link.md', data: '/etc/passwd', externalAttributes: 0o120777 << 16 }],
      code: 'invalid_document',
      message: /^dup\.zip: entry "docs\/link\.md" is a symbolic link/,
    },
    {
      name: 'an encrypted entry',
      specs: () => [{ name: 'secret.md', data: 'xxxx', flags: 0x1 }],
      code: 'encrypted_document',
      message: /^dup\.zip: secret\.md: the document is encrypted/,
    },
    {
      name: 'an unsupported compression method',
      specs: () => [{ name: 'a.md', data: '# A', method: 12 }],
      code: 'invalid_document',
      message: /^dup\.zip: entry "a\.md" uses compression method 12/,
    },
    {
      name: 'a document over 50 MB uncompressed',
      specs: () => [{ name: 'big.md', data: Buffer.alloc(60 * MB, 'a') }],
      code: 'payload_too_large',
      message: /^dup\.zip: "big\.md" is 60 MB uncompressed; the limit is 50 MB per file\./,
    },
    {
      name: 'a ratio bomb',
      specs: () => ['a', 'b', 'c'].map((n) => ({ name: `${n}.csv`, data: Buffer.alloc(30 * MB) })),
      code: 'invalid_document',
      message: /^dup\.zip: the archive's files inflate to more than .* refused as a zip bomb/,
    },
  ];

  it.each(cases.map((c) => [c.name, c] as const))('refuses %s as extraction does', async (_name, c) => {
    const file = zipFile(c.specs());
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'dup.zip' }]));
    expect(err.code).toBe(c.code);
    expect(err.message).toMatch(c.message);
    const extracted = await refusal(extractZip(file, join(work, `out-${count++}`), { source: 'dup.zip' }));
    expect([extracted.code, extracted.message]).toEqual([err.code, err.message]);
  });

  it('applies the limits the upload will be ingested with', async () => {
    const file = zipFile([{ name: 'a.md', data: Buffer.alloc(2 * MB, 'a') }]);
    const limits = { ...BULK_LIMITS, maxFileBytes: MB };
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'small.zip' }], limits));
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toContain('small.zip: "a.md" is 2 MB uncompressed; the limit is 1 MB per file.');
    await expect(precheckUploadFiles([{ path: file, name: 'small.zip' }])).resolves.toBeUndefined();
  });

  it('keeps naming every unsupported entry of every archive together', async () => {
    const first = zipFile([
      { name: 'a.md', data: '# A' },
      { name: 'run.exe', data: 'MZ' },
    ]);
    const second = zipFile([{ name: 'inner.zip', data: 'PK' }]);
    const err = await refusal(
      precheckUploadFiles([
        { path: first, name: 'one.zip' },
        { path: second, name: 'two.zip' },
        { path: first, name: 'notes.txt' },
      ]),
    );
    expect(err.code).toBe('unsupported_file_type');
    expect(err.message).toContain(
      'one.zip/run.exe (.exe), two.zip/inner.zip (nested archive: archives inside archives are not unpacked; add its files to the outer archive instead), notes.txt (.txt)',
    );
  });

  it('refuses an archive with no entries, naming it', async () => {
    const file = zipFile([]);
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'empty.zip' }]));
    expect(err.code).toBe('invalid_document');
    expect(err.message).toMatch(/^empty\.zip: the archive holds no file to ingest/);
  });

  it('refuses an archive holding only folders and OS litter, naming what it skipped', async () => {
    const file = zipFile([
      { name: 'docs/', data: '' },
      { name: '__MACOSX/._x', data: 'x' },
      { name: '.DS_Store', data: 'x' },
    ]);
    const err = await refusal(precheckUploadFiles([{ path: file, name: 'litter.zip' }]));
    expect(err.code).toBe('invalid_document');
    expect(err.message).toMatch(/^litter\.zip: the archive holds no file to ingest: it has only OS litter/);
    expect(err.message).toContain('"__MACOSX/._x"');
    expect(err.message).toContain('".DS_Store"');
  });

  it('refuses an empty archive beside one with documents', async () => {
    const good = zipFile([{ name: 'a.md', data: '# A' }]);
    const empty = zipFile([]);
    const err = await refusal(
      precheckUploadFiles([
        { path: good, name: 'good.zip' },
        { path: empty, name: 'empty.zip' },
      ]),
    );
    expect(err.message).toMatch(/^empty\.zip: the archive holds no file to ingest/);
  });
});

describe('extractZip messages', () => {
  it('escapes control characters of a refused entry name', async () => {
    const file = zipFile([{ name: 'a\u0000b.md', data: '# A' }]);
    const err = await refusal(extractZip(file, join(work, 'out-nul'), { source: 'nul.zip' }));
    expect(err.code).toBe('invalid_document');
    expect(err.message).toContain('entry "a\\u0000b.md" contains control characters');
  });

  it('escapes a C1 control in the name of an unsupported entry', async () => {
    const file = zipFile([{ name: 'x\u0085y.exe', data: 'MZ' }]);
    const err = await refusal(extractZip(file, join(work, 'out-c1'), { source: 'c1.zip' }));
    expect(err.code).toBe('unsupported_file_type');
    expect(err.message).toContain('x\\u0085y.exe (.exe)');
  });
});

describe('names from folders and previews', () => {
  it('escapes control characters of a local file name in the unsupported-type refusal', async () => {
    const { collectSources } = await import('../../../src/core/ingest/sources');
    const { STUDIO_LIMITS } = await import('../../../src/core/ingest/limits');
    const dir = mkdtempSync(join(tmpdir(), 'kbs-names-'));
    try {
      writeFileSync(join(dir, 'evil\nname.exe'), 'x');
      const error = await collectSources([{ path: dir }], dir, STUDIO_LIMITS).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain('evil\\nname.exe');
      expect((error as Error).message).not.toContain('evil\nname');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('precheckUploadFiles checks across the upload, as the ingestion of it would', () => {
  const MB = 1024 * 1024;
  const plainFile = (name: string, data: string | Buffer) => {
    const path = join(work, `part-${count++}-${name}`);
    writeFileSync(path, data);
    return { path, name };
  };

  it('refuses a name given in two archives before the 202, as a duplicate inside one archive is', async () => {
    const file = zipFile([
      { name: 'a/intro.md', data: '# Intro' },
      { name: 'b.md', data: '# B' },
    ]);
    const err = await refusal(
      precheckUploadFiles([
        { path: file, name: 'small.zip' },
        { path: file, name: 'copy.zip' },
      ]),
    );
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('invalid_document');
    expect(err.message).toBe(
      'copy.zip: entry "a/intro.md" has the same name as "small.zip/a/intro.md": the files of an upload are stored under their paths inside their archives (a file sent by itself under its own name), so a name may appear only once in the upload; rename one of them to keep both.',
    );
  });

  it('refuses a file sent by itself under the name of an archive entry, and the same name sent twice', async () => {
    const archive = { path: zipFile([{ name: 'a.md', data: '# A' }]), name: 'kb.zip' };
    const bare = plainFile('a.md', '# Bare');
    const beside = await refusal(precheckUploadFiles([archive, bare]));
    expect(beside.code).toBe('invalid_document');
    expect(beside.message).toMatch(/^a\.md: the file has the same name as "kb\.zip\/a\.md": /);
    const before = await refusal(precheckUploadFiles([bare, archive]));
    expect(before.message).toMatch(/^kb\.zip: entry "a\.md" has the same name as "a\.md": /);
    const twice = await refusal(precheckUploadFiles([bare, plainFile('a.md', '# Other')]));
    expect(twice.message).toMatch(/^a\.md: the file has the same name as "a\.md": /);
  });

  it('refuses one name spelled composed and decomposed, as the ingestion stores both under one', async () => {
    const err = await refusal(
      precheckUploadFiles([
        plainFile('caf\u00e9.md', '# Composed'),
        { path: zipFile([{ name: 'cafe\u0301.md', data: '# Decomposed' }]), name: 'mac.zip' },
      ]),
    );
    expect(err.code).toBe('invalid_document');
    expect(err.message).toMatch(/^mac\.zip: entry "cafe\u0301\.md" has the same name as "caf\u00e9\.md": /);
  });

  it('refuses exactly the names the ingestion would refuse, no more (the two never disagree)', async () => {
    const { collectSources } = await import('../../../src/core/ingest/sources');
    const one = zipFile([
      { name: 'docs/a.md', data: '# A' },
      { name: 'Notes.md', data: '# N' },
    ]);
    const other = zipFile([
      { name: 'docs/A.md', data: '# A, other case' },
      { name: 'notes.md', data: '# n' },
      { name: 'docs/b.md', data: '# B' },
    ]);
    const clash = zipFile([{ name: 'docs/b.md', data: '# B again' }]);
    const uploads: { path: string; name: string }[][] = [
      [
        { path: one, name: 'one.zip' },
        { path: other, name: 'other.zip' },
      ],
      [
        { path: other, name: 'other.zip' },
        { path: clash, name: 'clash.zip' },
      ],
      [{ path: one, name: 'one.zip' }, plainFile('notes.md', '# bare')],
      [{ path: other, name: 'other.zip' }, plainFile('notes.md', '# bare')],
    ];
    const verdicts: [boolean, boolean][] = [];
    for (const files of uploads) {
      const workDir = mkdtempSync(join(work, 'collect-'));
      const collected = await collectSources(
        files.map((f) => ({ ...f })),
        workDir,
        BULK_LIMITS,
      );
      const ingestionRefuses = collected.rejected.some((r) =>
        r.error.message.includes('the name appears twice in this ingestion'),
      );
      const precheckRefuses = await precheckUploadFiles(files).then(
        () => false,
        () => true,
      );
      verdicts.push([precheckRefuses, ingestionRefuses]);
    }
    // Names differing in case across archives are no clash for either; the same name is, for both.
    expect(verdicts).toEqual([
      [false, false],
      [true, true],
      [false, false],
      [true, true],
    ]);
  });

  it('refuses a document sent by itself (not zipped) over the per-file limit, as a zipped one is', async () => {
    const limits = { ...BULK_LIMITS, maxFileBytes: MB };
    const big = plainFile('big.md', Buffer.alloc(2 * MB, 'a'));
    const err = await refusal(precheckUploadFiles([big], limits));
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toMatch(/^big\.md: the file is 2 MB; the limit is 1 MB per file\. /);
    // Just over: the rounded sizes would read the same, so the bytes are given.
    const over = plainFile('over.md', Buffer.alloc(MB + 10, 'a'));
    const just = await refusal(precheckUploadFiles([over], limits));
    expect(just.message).toMatch(
      /^over\.md: the file is 1,048,586 bytes; the limit is 1,048,576 bytes \(1 MB\) per file\. /,
    );
    // A file of exactly the limit is taken, and JSONL embeddings (streamed) are exempt.
    await expect(
      precheckUploadFiles([plainFile('exact.md', Buffer.alloc(MB, 'a'))], limits),
    ).resolves.toBeUndefined();
    await expect(
      precheckUploadFiles([plainFile('vectors.jsonl', Buffer.alloc(2 * MB, 'v'))], limits),
    ).resolves.toBeUndefined();
  });

  it('refuses a document over 50 MB under the bulk limits', async () => {
    const big = plainFile('big.csv', Buffer.alloc(50 * MB + 10, 'a'));
    const err = await refusal(precheckUploadFiles([big]));
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toMatch(
      /^big\.csv: the file is 52,428,810 bytes; the limit is 52,428,800 bytes \(50 MB\) per file\. /,
    );
  });
});
