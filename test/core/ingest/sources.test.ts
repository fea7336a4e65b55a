import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { collectSources, type IngestInput } from '../../../src/core/ingest/sources';
import { FIXTURES, tempDir } from '../../helpers/studio';
import { writeZip } from '../../helpers/zip';

let dir: ReturnType<typeof tempDir>;
let sub: string;
beforeEach(() => {
  dir = tempDir();
  sub = join(dir.path, 'sub');
  mkdirSync(join(sub, 'inner'), { recursive: true });
  copyFileSync(join(FIXTURES, 'codeblock.md'), join(sub, 'codeblock.md'));
});
afterEach(() => dir.remove());

const collect = (inputs: (string | IngestInput)[]) =>
  collectSources(
    inputs.map((input) => (typeof input === 'string' ? { path: input } : input)),
    join(dir.path, 'work'),
    STUDIO_LIMITS,
  );
const sourcesOf = async (inputs: (string | IngestInput)[]) =>
  (await collect(inputs)).files.map((f) => f.source);
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `path` relative to the current folder, as a user types it, with `suffix` appended as typed. */
const typed = (path: string, suffix = '') => `${relative(process.cwd(), path) || '.'}${suffix}`;

describe('collectSources', () => {
  it('names a folder by its real name however its path is written: `.`, `..`, `./`, a trailing slash', async () => {
    for (const path of [
      sub,
      `${sub}/`,
      typed(sub),
      typed(sub, '/'),
      typed(sub, '/.'),
      typed(sub, '/./'),
      typed(join(sub, 'inner'), '/..'),
    ]) {
      expect(await sourcesOf([path])).toEqual(['sub/codeblock.md']);
    }
    // A file given directly keeps its base name, however its path is written.
    for (const path of [
      join(sub, 'codeblock.md'),
      typed(sub, '/./codeblock.md'),
      typed(sub, '/inner/../codeblock.md'),
    ])
      expect(await sourcesOf([path])).toEqual(['codeblock.md']);
  });

  it('ingests the same file or folder given several times once, silently', async () => {
    const file = join(sub, 'codeblock.md');
    const { files, rejected } = await collect([file, typed(file), typed(sub, '/./codeblock.md'), file]);
    expect(files.map((f) => f.source)).toEqual(['codeblock.md']);
    expect(rejected).toEqual([]);
    const twice = await collect([sub, typed(sub, '/'), typed(join(sub, 'inner'), '/..')]);
    expect(twice.files.map((f) => f.source)).toEqual(['sub/codeblock.md']);
    expect(twice.rejected).toEqual([]);
  });

  it('still refuses different files that would share a name, with the format names of accepted files', async () => {
    const other = join(dir.path, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'codeblock.md'), '# Another file\n\nSame name, other text.\n');
    writeFileSync(join(sub, 'rows.csv'), 'a,b\n1,2\n');
    writeFileSync(join(other, 'rows.csv'), 'a,b\n3,4\n');
    const { files, rejected } = await collect([
      join(sub, 'codeblock.md'),
      join(other, 'codeblock.md'),
      join(sub, 'rows.csv'),
      join(other, 'rows.csv'),
    ]);
    expect(files.map((f) => [f.source, f.format])).toEqual([
      ['codeblock.md', 'markdown'],
      ['rows.csv', 'csv'],
    ]);
    expect(rejected.map((r) => [r.source, r.format, r.error.code])).toEqual([
      ['codeblock.md', 'markdown', 'invalid_document'],
      ['rows.csv', 'csv', 'invalid_document'],
    ]);
    expect(rejected[0]!.error.message).toMatch(/the name appears twice in this ingestion/);
  });

  it('refuses a missing path as a bad request, naming it as given', async () => {
    const missing = join(dir.path, 'nonexistent', 'dir') + '/';
    await expect(collect([missing])).rejects.toMatchObject({
      code: 'invalid_request',
      message: `${missing}: no such file or folder.`,
    });
    await expect(collect([typed(join(dir.path, 'nope.md'))])).rejects.toMatchObject({
      code: 'invalid_request',
      message: `${typed(join(dir.path, 'nope.md'))}: no such file or folder.`,
    });
  });

  it('refuses an empty folder given alone, or with only OS litter, naming it', async () => {
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    await expect(collect([empty])).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringMatching(
        new RegExp(
          `^${esc(empty)}: no file to ingest: the folder is empty \\(supported: \\.pdf, .*\\.zip archives\\)\\.$`,
        ),
      ),
    });
    writeFileSync(join(empty, '.DS_Store'), 'litter');
    await expect(collect([empty])).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringMatching(
        new RegExp(
          `^${esc(empty)}: no file to ingest: the folder holds only OS litter \\("\\.DS_Store"\\), which is skipped`,
        ),
      ),
    });
    // `.` is named by the folder it stands for.
    await expect(collect([typed(empty, '/.')])).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`^${esc(empty)}: no file to ingest`)),
    });
    const empty2 = join(dir.path, 'empty2');
    mkdirSync(empty2);
    await expect(collect([empty, empty2])).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringMatching(new RegExp(`^${esc(empty)}, ${esc(empty2)}: no file to ingest`)),
    });
    const zip = join(dir.path, 'litter.zip');
    await writeZip(zip, { '__MACOSX/._a.md': 'x', '.DS_Store': 'x' });
    await expect(collect([zip])).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringMatching(/^litter\.zip: no file to ingest: the archive holds only OS litter/),
    });
  });

  it('lets an empty folder pass beside inputs that hold files', async () => {
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    expect(await sourcesOf([empty, sub])).toEqual(['sub/codeblock.md']);
  });
});
