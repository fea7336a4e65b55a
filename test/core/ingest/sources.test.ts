import { copyFileSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KnowledgeBaseTooLarge, UnsupportedFileType } from '../../../src/core/ingest/errors';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import {
  collectSources,
  tooLargeMessage,
  type CollectOptions,
  type IngestInput,
} from '../../../src/core/ingest/sources';
import { NESTED_ARCHIVE_TYPE } from '../../../src/core/ingest/zipEntryNames';
import type { UnpackingProgress } from '../../../src/shared/uploads';
import { buildZip } from '../../hardening/forgeZip';
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

const collect = (inputs: (string | IngestInput)[], options?: CollectOptions) =>
  collectSources(
    inputs.map((input) => (typeof input === 'string' ? { path: input } : input)),
    join(dir.path, 'work'),
    STUDIO_LIMITS,
    options,
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
    // Each refused copy named by its path as given, beside the name it shares (its row follows that one).
    expect(rejected.map((r) => [r.source, r.format, r.error.code, r.clashesWith])).toEqual([
      [join(other, 'codeblock.md'), 'markdown', 'invalid_document', 'codeblock.md'],
      [join(other, 'rows.csv'), 'csv', 'invalid_document', 'rows.csv'],
    ]);
    expect(rejected[0]!.error.message).toBe(
      `${join(other, 'codeblock.md')}: not ingested: the name appears twice in this ingestion, and ${join(sub, 'codeblock.md')} took it first as "codeblock.md"; rename one of them to keep both.`,
    );
  });

  it('stores a name in its composed spelling, and one name spelled both ways is one name', async () => {
    const composed = 'caf\u00e9.md';
    const decomposed = 'cafe\u0301.md';
    const other = join(dir.path, 'other');
    mkdirSync(other);
    writeFileSync(join(sub, decomposed), '# Decomposed, as macOS names it\n');
    writeFileSync(join(other, composed), '# Composed, as Windows names it\n');
    expect(await sourcesOf([join(sub, decomposed)])).toEqual([composed]);
    const archive = join(dir.path, 'x.zip');
    writeFileSync(archive, buildZip([{ name: `docs/${decomposed}`, data: '# In an archive' }]));
    expect(await sourcesOf([archive])).toEqual([`docs/${composed}`]);

    const { files, rejected } = await collect([join(sub, decomposed), join(other, composed)]);
    expect(files.map((f) => f.source)).toEqual([composed]);
    expect(rejected.map((r) => [r.source, r.error.code, r.clashesWith])).toEqual([
      [join(other, composed), 'invalid_document', composed],
    ]);
    expect(rejected[0]!.error.message).toMatch(/the name appears twice in this ingestion/);
  });

  it('names both files of a shared name once, and says to rename an archive’s entry inside its archive', async () => {
    const x = join(dir.path, 'x.zip');
    writeFileSync(x, buildZip([{ name: 'codeblock.md', data: '# Other' }]));
    const entryLost = await collect([join(sub, 'codeblock.md'), x]);
    expect(entryLost.rejected.map((r) => [r.source, r.error.message])).toEqual([
      [
        'x.zip/codeblock.md',
        `x.zip/codeblock.md: not ingested: the name appears twice in this ingestion, and ${join(sub, 'codeblock.md')} took it first as "codeblock.md"; rename the entry inside x.zip to keep both, or leave x.zip out to keep only ${join(sub, 'codeblock.md')}.`,
      ],
    ]);
    // A file sent by itself can be renamed where it is: the entry that took its name is named with its archive.
    const fileLost = await collectSources(
      [{ path: x }, { path: join(sub, 'codeblock.md') }],
      join(dir.path, 'work-2'),
      STUDIO_LIMITS,
    );
    expect(fileLost.rejected.map((r) => r.error.message)).toEqual([
      `${join(sub, 'codeblock.md')}: not ingested: the name appears twice in this ingestion, and x.zip/codeblock.md took it first as "codeblock.md"; rename one of them to keep both.`,
    ]);
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
    // A symbolic link is not followed, and the refusal says so rather than "the folder is empty".
    const linked = join(dir.path, 'linked');
    mkdirSync(linked);
    symlinkSync(join(FIXTURES, 'codeblock.md'), join(linked, 'notes.md'));
    await expect(collect([linked])).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringMatching(
        new RegExp(
          `^${esc(linked)}: no file to ingest: the folder holds only symbolic links or special files \\("notes\\.md"\\), which are not followed: a folder's walk stays inside it \\(supported: `,
        ),
      ),
    });
    writeFileSync(join(linked, '.DS_Store'), 'litter');
    await expect(collect([linked])).rejects.toMatchObject({
      message: expect.stringContaining(
        'the folder holds only OS litter (".DS_Store"), which is skipped, and symbolic links or special files ("notes.md"), which are not followed',
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

/** The files under `folder` (none if there is no such folder), as paths relative to it. */
const filesUnder = (folder: string): string[] =>
  (existsSync(folder) ? readdirSync(folder, { recursive: true, withFileTypes: true }) : [])
    .filter((e) => e.isFile())
    .map((e) => relative(folder, join(e.parentPath, e.name)).split('\\').join('/'));

/** What the studio's route makes of a folder dropped whole: each file an input, named by its path in the drop. */
const dropOf = (folder: string): IngestInput[] =>
  filesUnder(folder).map((rel) => ({
    path: join(folder, rel),
    name: `${basename(folder)}/${rel}`,
    disposable: true,
    fromDrop: true,
  }));

describe('collectSources for a drop on the studio', () => {
  /** A folder as an audit found it: six documents, and the litter an editor and Office leave. */
  const handbook = () => {
    const folder = join(dir.path, 'handbook');
    for (const sub of ['guides', '.github', '.obsidian']) mkdirSync(join(folder, sub), { recursive: true });
    copyFileSync(join(FIXTURES, 'codeblock.md'), join(folder, 'codeblock.md'));
    copyFileSync(join(FIXTURES, 'simple-table.md'), join(folder, 'guides', 'table.md'));
    copyFileSync(join(FIXTURES, 'simple.docx'), join(folder, 'simple.docx'));
    copyFileSync(join(FIXTURES, 'stanley-cups.csv'), join(folder, 'stanley-cups.csv'));
    copyFileSync(join(FIXTURES, 'simple.json'), join(folder, 'simple.json'));
    copyFileSync(join(FIXTURES, 'fake-html.html'), join(folder, 'guides', 'page.html'));
    writeFileSync(join(folder, '.draft.md'), '# Not yet\n');
    writeFileSync(join(folder, '.github', 'CONTRIBUTING.md'), '# Contributing\n');
    writeFileSync(join(folder, '.obsidian', 'app.json'), '{"theme":"dark"}');
    writeFileSync(join(folder, '~$simple.docx'), 'a Word lock file');
    writeFileSync(join(folder, '.DS_Store'), 'x');
    return folder;
  };

  it('gives the sources `kbstudio ingest <folder>` gives: dot-files, dot-folders and lock files left out', async () => {
    const folder = handbook();
    const cli = await collect([folder]);
    expect(cli.files.map((f) => f.source)).toEqual([
      'handbook/codeblock.md',
      'handbook/guides/page.html',
      'handbook/guides/table.md',
      'handbook/simple.docx',
      'handbook/simple.json',
      'handbook/stanley-cups.csv',
    ]);
    const drop = await collect(dropOf(folder));
    expect(drop.files.map((f) => f.source)).toEqual(cli.files.map((f) => f.source));
    expect(drop.rejected).toEqual([]);
  });

  it('reads a file dropped by itself, as the CLI reads a file it is named', async () => {
    const folder = handbook();
    const lone = { path: join(folder, '.draft.md'), name: '.draft.md', disposable: true, fromDrop: true };
    expect(await sourcesOf([lone])).toEqual(['.draft.md']);
    expect(await sourcesOf([join(folder, '.draft.md')])).toEqual(['.draft.md']);
  });

  it('refuses a drop of only litter as the CLI refuses the folder, naming it', async () => {
    const folder = join(dir.path, 'vault');
    mkdirSync(join(folder, '.obsidian'), { recursive: true });
    writeFileSync(join(folder, '.obsidian', 'app.json'), '{}');
    writeFileSync(join(folder, '.DS_Store'), 'x');
    const cli = await collect([folder]).catch((e: unknown) => e);
    expect(cli).toMatchObject({ code: 'invalid_document' });
    expect((cli as Error).message).toMatch(/: no file to ingest: the folder holds only OS litter/);
    await expect(collect(dropOf(folder))).rejects.toMatchObject({
      code: 'invalid_document',
      message: expect.stringMatching(
        /^vault: no file to ingest: the folder holds only OS litter \("(\.DS_Store|\.obsidian\/app\.json)", "(\.DS_Store|\.obsidian\/app\.json)"\), which is skipped/,
      ),
    });
  });
});

describe('collectSources and ZIP archives', () => {
  it('names a ZIP inside a ZIP by its path in what was given, beside every other refused type', async () => {
    const nested = join(dir.path, 'nested.zip');
    writeFileSync(
      nested,
      buildZip([
        { name: 'a.md', data: '# A' },
        { name: 'inner.zip', data: buildZip([]) },
      ]),
    );
    const more = join(dir.path, 'more.zip');
    writeFileSync(
      more,
      buildZip([
        { name: 'b.md', data: '# B' },
        { name: 'tools/run.exe', data: 'MZ' },
      ]),
    );
    writeFileSync(join(dir.path, 'notes.txt'), 'text');
    const err = await collect([nested, join(dir.path, 'notes.txt'), more]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedFileType);
    expect((err as UnsupportedFileType).entries).toEqual([
      { entry: 'nested.zip/inner.zip', type: NESTED_ARCHIVE_TYPE },
      { entry: 'notes.txt', type: '.txt' },
      { entry: 'more.zip/tools/run.exe', type: '.exe' },
    ]);
    expect((err as Error).message).toContain(
      'nested.zip/inner.zip (nested archive: archives inside archives are not unpacked; add its files to the outer archive instead)',
    );
    // Refused before anything was extracted.
    expect(filesUnder(join(dir.path, 'work'))).toEqual([]);
  });

  it('reports the unpacking of an archive, and stops it between entries when aborted, leaving nothing', async () => {
    const big = join(dir.path, 'big.zip');
    writeFileSync(
      big,
      buildZip(Array.from({ length: 3_000 }, (_, i) => ({ name: `d${i % 30}/f${i}.md`, data: `# ${i}` }))),
    );
    const controller = new AbortController();
    const reports: UnpackingProgress[] = [];
    const started = performance.now();
    const err = await collect([big], {
      signal: controller.signal,
      onUnpacking: (progress) => {
        reports.push(progress);
        if (progress.filesDone === 50) controller.abort(new Error('cancelled'));
      },
    }).catch((e: unknown) => e);
    expect(err).toEqual(new Error('cancelled'));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(reports.slice(0, 2)).toEqual([
      { archive: 'big.zip', filesDone: 0, filesTotal: 3_000 },
      { archive: 'big.zip', filesDone: 1, filesTotal: 3_000 },
    ]);
    expect(reports.length).toBeLessThan(60);
    expect(filesUnder(join(dir.path, 'work'))).toEqual([]);
  });
});

describe('sizes refused against a limit', () => {
  const MB = 1024 * 1024;
  it('says the bytes when the size and the limit would read the same rounded', () => {
    // It read "the file is 50 MB; the limit is 50 MB per file".
    expect(tooLargeMessage('big.md', 50 * MB + 10, 50 * MB)).toBe(
      'big.md: the file is 52,428,810 bytes; the limit is 52,428,800 bytes (50 MB) per file.',
    );
    expect(tooLargeMessage('big.md', 51 * MB, 50 * MB)).toBe(
      'big.md: the file is 51 MB; the limit is 50 MB per file.',
    );
    expect(new KnowledgeBaseTooLarge(500 * MB + 1, 500 * MB).message).toMatch(
      /^The knowledge base would hold 524,288,001 bytes of documents; the studio limit is 524,288,000 bytes \(500 MB\) per knowledge base /,
    );
  });
});
