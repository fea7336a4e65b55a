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
