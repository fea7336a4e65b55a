import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import iconv from 'iconv-lite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidDocument } from '../../../src/core/ingest/errors';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { collectSources } from '../../../src/core/ingest/sources';
import { checkZip, extractZip } from '../../../src/core/ingest/zip';
import { buildZip } from '../../hardening/forgeZip';

const UTF8_NAMES_FLAG = 0x800;
const CENTRAL_HEADER = 0x02014b50;

interface RawEntry {
  /** The name's bytes as stored, in whatever charset the archiver used. */
  name: Buffer;
  data?: string;
  /** Extra fields, each as [header id, data]. */
  extra?: [number, Buffer][];
}

/**
 * A stored (uncompressed) ZIP as Info-ZIP's zip 3.0 writes one on Unix: names as raw bytes, and no UTF-8
 * flag.
 */
const buildRawZip = (entries: RawEntry[]): Buffer =>
  buildZip(entries.map((entry) => ({ ...entry, method: 0, utf8Flag: false })));

/** The UTF-8 flag (general-purpose bit 11) of every central-directory record of a ZIP built by buildRawZip. */
function utf8Flags(zip: Buffer): number[] {
  const flags: number[] = [];
  for (let at = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at !== -1;) {
    flags.push(zip.readUInt16LE(at + 8) & UTF8_NAMES_FLAG);
    const next = at + 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    at = zip.readUInt32LE(next) === CENTRAL_HEADER ? next : -1;
  }
  return flags;
}

/** Info-ZIP's Unicode Path extra field (0x7075): version 1, the CRC-32 of the stored name, the UTF-8 name. */
function unicodePathField(storedName: Buffer, utf8Name: string): [number, Buffer] {
  const head = Buffer.alloc(5);
  head.writeUInt8(1, 0);
  head.writeUInt32LE(zlib.crc32(storedName) >>> 0, 1);
  return [0x7075, Buffer.concat([head, Buffer.from(utf8Name, 'utf8')])];
}

const utf8 = (name: string) => Buffer.from(name, 'utf8');

let work: string;
beforeEach(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'kbs-zip-names-'));
});
afterEach(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

async function writeRawZip(entries: RawEntry[], name = 'nested.zip'): Promise<string> {
  const zip = buildRawZip(entries);
  const file = path.join(work, name);
  await fs.writeFile(file, zip);
  return file;
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error('expected the archive to be refused');
  return err;
}

describe('ZIP entry names without the UTF-8 flag', () => {
  it('reads a UTF-8 name as UTF-8, as `cd src && zip -qr ../nested.zip .` writes it (it read "├╝")', async () => {
    const entries: RawEntry[] = [
      { name: utf8('other/') },
      { name: utf8('other/name with spaces ü.json'), data: '{"a": 1}' },
    ];
    const zip = await writeRawZip(entries);
    expect(utf8Flags(await fs.readFile(zip))).toEqual([0, 0]);

    const dest = path.join(work, 'out');
    const extracted = await extractZip(zip, dest);
    expect(extracted.files.map((f) => f.entry)).toEqual(['other/name with spaces ü.json']);
    expect(await fs.readFile(extracted.files[0]!.path, 'utf8')).toBe('{"a": 1}');
    expect((await checkZip(zip)).files).toEqual(['other/name with spaces ü.json']);

    const collected = await collectSources([{ path: zip }], path.join(work, 'scratch'), STUDIO_LIMITS);
    expect(collected.files.map((f) => f.source)).toEqual(['other/name with spaces ü.json']);
  });

  it('reads a name that is not valid UTF-8 as CP437, as the ZIP specification says', async () => {
    const name = iconv.encode('Grüße/Café à la carte.md', 'cp437');
    const zip = await writeRawZip([{ name, data: '# Menu' }]);
    expect(utf8Flags(await fs.readFile(zip))).toEqual([0]);
    expect((await checkZip(zip)).files).toEqual(['Grüße/Café à la carte.md']);
  });

  it("takes Info-ZIP's Unicode Path extra field over the stored name, when its checksum matches", async () => {
    // As zip 3.0 writes on Windows: the name in the OEM code page, '?' for what it lacks, and the real one.
    const stored = iconv.encode('Zürich ? ??.md', 'cp437');
    const wrongCrc = unicodePathField(utf8('other'), 'ignored.md');
    const zip = await writeRawZip([
      { name: stored, extra: [unicodePathField(stored, 'Zürich – 東京.md')], data: '# Z' },
      { name: iconv.encode('Genève.md', 'cp437'), extra: [wrongCrc], data: '# G' },
    ]);
    expect(utf8Flags(await fs.readFile(zip))).toEqual([0, 0]);
    expect((await checkZip(zip)).files).toEqual(['Zürich – 東京.md', 'Genève.md']);
  });

  it('runs the path checks on the decoded name', async () => {
    const cases: [RawEntry, string][] = [
      [{ name: utf8('ü/../../evil.md') }, 'entry "ü/../../evil.md" has a ".." segment'],
      [{ name: utf8('a\nü.md') }, 'entry "a\\nü.md" contains control characters'],
      [
        { name: utf8('innocent.md'), extra: [unicodePathField(utf8('innocent.md'), '../evil.md')] },
        'entry "../evil.md" has a ".." segment',
      ],
      [
        { name: utf8('docs/x.md'), extra: [unicodePathField(utf8('docs/x.md'), '/etc/evil.md')] },
        'entry "/etc/evil.md" is an absolute path',
      ],
    ];
    for (const [entry, problem] of cases) {
      const zip = await writeRawZip([
        { name: utf8('ok.md'), data: '# ok' },
        { ...entry, data: 'x' },
      ]);
      const dest = path.join(work, 'out');
      const err = await refusal(extractZip(zip, dest));
      expect(err, problem).toBeInstanceOf(InvalidDocument);
      expect(err.message, problem).toContain(problem);
      await expect(fs.readdir(dest)).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(checkZip(zip)).rejects.toThrow(problem);
    }
  });

  it('never reads an overlong UTF-8 "/" as a separator: such a name is CP437, one safe file name', async () => {
    const slash = [0xc0, 0xaf];
    const name = Buffer.from([
      0x61,
      ...slash,
      0x2e,
      0x2e,
      ...slash,
      0x2e,
      0x2e,
      ...slash,
      ...utf8('evil.md'),
    ]);
    const zip = await writeRawZip([{ name, data: '# x' }]);
    const dest = path.join(work, 'out');
    const extracted = await extractZip(zip, dest);
    expect(extracted.files.map((f) => f.entry)).toEqual(['a└»..└»..└»evil.md']);
    // One file, written inside the extraction folder (by number: the name never reaches the disk).
    expect(await fs.readdir(dest)).toEqual(['1']);
    expect(await fs.readFile(extracted.files[0]!.path, 'utf8')).toBe('# x');
  });
});
