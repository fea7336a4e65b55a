import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, tempDir } from '../helpers/studio';
import { BIN, cliInTerminal, cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';

const dir = tempDir();
afterAll(() => dir.remove());

const dataDir = join(dir.path, 'data');
// What a command prints and its exit code do not depend on its running in a process of its own: most
// cases run main() in this one (a spawned kbstudio costs a second or more). Terminals, Ctrl-C, another
// user, and one command seen end to end from outside keep a real process.
const cli = cliInProcess(dataDir);
const cliProcess = cliRunner(dataDir);
/** Runs `run` in the folder `cwd`, where relative paths such as `.` are read, and comes back. */
const inFolder = async <T>(cwd: string, run: () => Promise<T>): Promise<T> => {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    return await run();
  } finally {
    process.chdir(before);
  }
};
/** `kbstudio --json ...args` run in the folder `cwd`. */
const cliIn = (cwd: string, ...args: string[]) => inFolder(cwd, () => cli('--json', ...args));
const createListing = async (title: string, run = cli): Promise<{ id: string }> =>
  JSON.parse(
    (
      await run(
        '--json',
        'listings',
        'create',
        '--title',
        title,
        '--access-model',
        'one_time',
        '--price',
        '1',
      )
    ).stdout,
  );

describe('kbstudio ingest', () => {
  it('prints the DESIGN §6 summary, exits 1 when a file was rejected, and keeps the others', async () => {
    const listing = await createListing('Docs');
    const csv = join(dir.path, 'people.csv');
    writeFileSync(csv, 'name,city\nAda,London\nBob,\nCy,Paris\n');
    // The one command of this file seen end to end from outside: a real process, its exit status.
    const result = await cliProcess(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      join(FIXTURES, 'fake-memo.pdf'),
      join(FIXTURES, 'loremipsum-flat.pdf'),
      csv,
    );
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      listingId: listing.id,
      chunks: expect.any(Number),
      durationMs: expect.any(Number),
    });
    const bySource = Object.fromEntries(summary.documents.map((d: { source: string }) => [d.source, d]));
    expect(bySource['fake-memo.pdf']).toMatchObject({ format: 'pdf', status: 'ingested' });
    expect(bySource['loremipsum-flat.pdf']).toMatchObject({
      status: 'rejected',
      error: { code: 'no_text_layer' },
    });
    expect(bySource['people.csv']).toMatchObject({
      status: 'ingested',
      chunks: 2,
      skippedRows: [{ row: 2, reason: expect.stringContaining('city') }],
    });

    const again = await cli(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      join(FIXTURES, 'fake-memo.pdf'),
      csv,
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).documents.map((d: { status: string }) => d.status)).toEqual([
      'unchanged',
      'unchanged',
    ]);
    const shown = JSON.parse((await cli('--json', 'listings', 'show', listing.id)).stdout);
    expect(shown.documentCount).toBe(2);
    expect(shown.chunkCount).toBe(summary.chunks);
  });

  it('ingests the fixtures folder whole: its ZIP extracted, the PDF without text rejected alone', async () => {
    const listing = await createListing('Fixtures');
    const result = await cli('--json', 'ingest', '--listing', listing.id, FIXTURES);
    expect(result.code).toBe(1);
    const documents = JSON.parse(result.stdout).documents as { source: string; status: string }[];
    const files = readdirSync(FIXTURES).filter((f) => f !== 'simple.zip');
    expect(documents.map((d) => d.source).sort()).toEqual(
      [...files.map((f) => `${basename(FIXTURES)}/${f}`), 'ideas-page.html', 'stanley-cups.csv'].sort(),
    );
    expect(documents.filter((d) => d.status !== 'ingested')).toEqual([
      expect.objectContaining({ source: `${basename(FIXTURES)}/loremipsum-flat.pdf`, status: 'rejected' }),
    ]);
  }, 60_000); // every fixture, the PDFs included: 17 s in a slow CI run

  it("prints the parsers' warnings under the table, and counts them in the document's notes", async () => {
    const listing = await createListing('Warnings');
    const csv = join(dir.path, 'report.csv');
    writeFileSync(csv, 'Quarterly report,,\nregion,sales,owner\nnorth,10,Ada\nsouth,,Bob\n');
    const result = await cli('ingest', '--listing', listing.id, csv);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /report\.csv\s+csv\s+ingested\s+1\s+1 row skipped \(row 2\); 1 warning, below/,
    );
    expect(result.stdout).toMatch(
      /\nWarnings:\n {2}report\.csv: The first line "Quarterly report" is a title above the header row/,
    );
  });

  it("says how many documents a JSON file's items made, and counts them in the knowledge base", async () => {
    const listing = await createListing('Items');
    const result = await cli('ingest', '--listing', listing.id, join(FIXTURES, 'simple.json'));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/simple\.json\s+json\s+ingested\s+8\s+8 documents \(JSON items\)/);
    expect(result.stdout).toMatch(/The knowledge base now holds 8 documents, 8 chunks/);
  });

  it('refuses bad options naming them', async () => {
    const res = await cli(
      '--json',
      'ingest',
      '--listing',
      'lst_x',
      '--chunking',
      'vibes',
      join(FIXTURES, 'codeblock.md'),
    );
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout).error.message).toMatch(/^--chunking: /);
    const missing = await cli('--json', 'ingest', '--listing', 'lst_missing', join(FIXTURES, 'codeblock.md'));
    expect(JSON.parse(missing.stdout).error.code).toBe('listing_not_found');
  });

  it('refuses a chunk overlap not smaller than the chunk size before ingesting anything', async () => {
    const listing = await createListing('Overlap');
    const res = await cli(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      '--chunk-size',
      '16',
      '--chunk-overlap',
      '64',
      join(FIXTURES, 'codeblock.md'),
    );
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(res.json.error.message).toMatch(/^--chunk-overlap: .*--chunk-size/);
    expect((await cli('--json', 'listings', 'show', listing.id)).json.documentCount).toBe(0);
    const notANumber = await cli(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      '--chunk-size',
      'abc',
      FIXTURES,
    );
    expect(notANumber.json.error.message).toMatch(/^--chunk-size: /);
  });

  it('shows a progress bar in a terminal whose first frame has its values, and gives the cursor back', async () => {
    const listing = await createListing('Terminal');
    const { code, output } = await cliInTerminal(dataDir, [
      'ingest',
      '--listing',
      listing.id,
      join(FIXTURES, 'codeblock.md'),
    ]).done;
    expect(code).toBe(0);
    expect(output).toContain('codeblock.md');
    expect(output).not.toMatch(/\{(stage|filesDone|filesTotal|file)\}/);
    // cli-progress hides the cursor and turns line wrap off while it draws; both come back.
    expect(output.lastIndexOf('\x1b[?25h')).toBeGreaterThan(output.lastIndexOf('\x1b[?25l'));
  });

  it('on Ctrl-C restores the terminal, says nothing was stored, and exits 130', async () => {
    // A data directory of its own: the kept copies of the originals are counted before and after.
    const data = join(dir.path, 'interrupted-data');
    const listing = await createListing('Interrupted', cliRunner(data));
    const folder = join(dir.path, 'many');
    mkdirSync(folder);
    const paragraph = (i: number) =>
      `Paragraph ${i} on topic ${i % 97}: ${'retrieval augmented knowledge base chunks '.repeat(12)}\n\n`;
    for (let f = 0; f < 60; f++) {
      writeFileSync(
        join(folder, `doc${f}.md`),
        `# Document ${f}\n\n${Array.from({ length: 250 }, (_, i) => paragraph(f * 1000 + i)).join('')}`,
      );
    }
    const sources = join(data, 'sources');
    const kept = () =>
      existsSync(sources)
        ? readdirSync(sources, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length
        : 0;
    const keptBefore = kept();
    const run = cliInTerminal(data, ['ingest', '--listing', listing.id, folder]);
    // Ctrl-C once a few files are done: the ingestion is under way, and has kept copies of them.
    await expect
      .poll(() => /\b([3-9]|[1-5]\d)\/60 files/.test(run.output()), { timeout: 20_000, interval: 50 })
      .toBe(true);
    run.type('\x03');
    const { code, output } = await run.done;
    expect(code).toBe(130);
    expect(output).toContain('Interrupted: nothing of this ingestion was stored.');
    expect(output.lastIndexOf('\x1b[?25h')).toBeGreaterThan(output.lastIndexOf('\x1b[?25l'));
    expect(output.lastIndexOf('\x1b[?7h')).toBeGreaterThan(output.lastIndexOf('\x1b[?7l'));
    const shown = (await cliInProcess(data)('--json', 'listings', 'show', listing.id)).json;
    expect(shown).toMatchObject({ documentCount: 0, chunkCount: 0 });
    // Nor are the copies of the originals it had kept: nothing refers to them.
    expect(kept()).toBe(keptBefore);
  });

  it('names sources by the real folder name however the path is written, and reads a file given twice once', async () => {
    const parent = join(dir.path, 'paths');
    const sub = join(parent, 'sub');
    mkdirSync(join(sub, 'inner'), { recursive: true });
    copyFileSync(join(FIXTURES, 'codeblock.md'), join(sub, 'codeblock.md'));
    const sourcesOf = (result: { code: number; json: { documents: { source: string }[] } }) => {
      expect(result.code).toBe(0);
      return result.json.documents.map((d) => d.source);
    };
    const listing = await createListing('Paths');
    for (const [cwd, path] of [
      [sub, '.'],
      [sub, './'],
      [join(sub, 'inner'), '..'],
      [parent, 'sub/'],
      [parent, 'sub'],
    ] as const) {
      expect(sourcesOf(await cliIn(cwd, 'ingest', '--listing', listing.id, path))).toEqual([
        'sub/codeblock.md',
      ]);
    }
    const shown = (await cli('--json', 'listings', 'show', listing.id)).json;
    expect(shown.documentCount).toBe(1);

    const files = await createListing('Same file');
    const twice = await cliIn(
      sub,
      'ingest',
      '--listing',
      files.id,
      'codeblock.md',
      'codeblock.md',
      './codeblock.md',
      join(sub, 'codeblock.md'),
    );
    expect(twice.json.documents).toEqual([
      expect.objectContaining({ source: 'codeblock.md', format: 'markdown', status: 'ingested' }),
    ]);
    // Two different files under one name: the second is still refused, with the format name of the first.
    writeFileSync(join(parent, 'codeblock.md'), '# Another\n\nAnother file of the same name.\n');
    const clash = await cliIn(sub, 'ingest', '--listing', files.id, 'codeblock.md', '../codeblock.md');
    expect(clash.code).toBe(1);
    expect(
      clash.json.documents.map((d: { format: string; status: string }) => `${d.format} ${d.status}`).sort(),
    ).toEqual(['markdown rejected', 'markdown unchanged']);
  });

  it('refuses a missing path as a bad request naming it, and an empty folder given alone', async () => {
    const listing = await createListing('Missing');
    const missing = await cli('--json', 'ingest', '--listing', listing.id, '/nonexistent/dir/');
    expect(missing.code).toBe(1);
    expect(missing.json.error).toMatchObject({
      code: 'invalid_request',
      status: 400,
      message: '/nonexistent/dir/: no such file or folder.',
    });
    const empty = join(dir.path, 'empty-folder');
    mkdirSync(empty);
    writeFileSync(join(empty, '.DS_Store'), 'x');
    const refused = await cli('--json', 'ingest', '--listing', listing.id, empty);
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'invalid_document' });
    expect(refused.json.error.message).toMatch(
      new RegExp(
        `^${empty.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no file to ingest: .*\\(supported: \\.pdf, `,
      ),
    );
    // Beside a file, an empty folder is no reason to stop.
    const beside = await cli(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      empty,
      join(FIXTURES, 'codeblock.md'),
    );
    expect(beside.code).toBe(0);
    expect(beside.json.documents.map((d: { source: string }) => d.source)).toEqual(['codeblock.md']);
  });

  it('rejects binary content under a text extension instead of ingesting mojibake', async () => {
    const listing = await createListing('Binary');
    const pdfAsMd = join(dir.path, 'renamed.md');
    writeFileSync(pdfAsMd, readFileSync(join(FIXTURES, 'fake-memo.pdf')));
    const noise = join(dir.path, 'noise.md');
    writeFileSync(noise, Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 97 + 13) % 256)));
    const result = await cli('--json', 'ingest', '--listing', listing.id, pdfAsMd, noise);
    expect(result.code).toBe(1);
    expect(result.json.documents).toHaveLength(2);
    for (const document of result.json.documents) {
      expect(document).toMatchObject({ status: 'rejected', chunks: 0, error: { code: 'invalid_document' } });
      expect(document.error.message).toMatch(new RegExp(`^${document.source}: binary content, not text; `));
    }
    expect((await cli('--json', 'listings', 'show', listing.id)).json.chunkCount).toBe(0);
  });

  it('refuses an unreadable file by itself, naming it and why, and ingests the others (exit 1)', async () => {
    // Root reads a file of mode 000 all the same: as root, the CLI runs as `nobody` (a real EACCES, as
    // the audit saw it), in a data directory and folder that user owns; any other user meets mode 000.
    const asRoot = process.getuid?.() === 0;
    const nobody = { uid: 65534, gid: 65534 };
    const base = join(dir.path, 'unreadable');
    const data = join(base, 'data');
    const folder = join(base, 'fold');
    mkdirSync(folder, { recursive: true });
    mkdirSync(data);
    writeFileSync(join(base, 'secret.md'), '# Secret\n\nNobody may read this.\n');
    writeFileSync(join(base, 'quokka.md'), '# Quokka\n\nA small marsupial.\n');
    writeFileSync(join(folder, 'a.md'), '# A\n\nReadable.\n');
    writeFileSync(join(folder, 'b.md'), '# B\n\nNot readable.\n');
    if (asRoot) {
      // The test's temporary folder is root's (mode 700): `nobody` must be able to pass through it.
      chmodSync(dir.path, 0o711);
      for (const p of [base, data, folder]) chownSync(p, nobody.uid, nobody.gid);
    }
    chmodSync(join(base, 'secret.md'), 0o000);
    chmodSync(join(folder, 'b.md'), 0o000);
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, [BIN, '--data-dir', data, ...args], {
        cwd: base,
        env: { ...process.env, HOME: base },
        ...(asRoot ? nobody : {}),
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
    const created = await run(
      '--json',
      'listings',
      'create',
      '--title',
      'U',
      '--access-model',
      'one_time',
      '--price',
      '0',
    );
    const id = (JSON.parse(created.stdout) as { id: string }).id;

    const files = await run('--json', 'ingest', '--listing', id, 'secret.md', 'quokka.md');
    expect(files.code).toBe(1);
    const summary = JSON.parse(files.stdout);
    expect(summary.documents).toEqual([
      { source: 'quokka.md', format: 'markdown', status: 'ingested', chunks: 1 },
      {
        source: 'secret.md',
        format: 'markdown',
        status: 'rejected',
        chunks: 0,
        error: {
          code: 'invalid_document',
          message:
            'secret.md: the file cannot be read (permission denied, EACCES). Make it readable for this user, or leave it out.',
        },
      },
    ]);
    expect(files.stdout).not.toContain('data directory');

    const walked = await run('ingest', '--listing', id, 'fold');
    expect(walked.code).toBe(1);
    expect(walked.stderr).toBe('');
    expect(walked.stdout).toMatch(/fold\/a\.md +markdown +ingested +1\n/);
    expect(walked.stdout).toMatch(
      /fold\/b\.md +markdown +rejected +0 +fold\/b\.md: the file cannot be read \(permission denied, EACCES\)/,
    );
    const shown = JSON.parse((await run('--json', 'listings', 'show', id)).stdout);
    expect(shown).toMatchObject({ documentCount: 2, chunkCount: 2 });
  }, 300_000);

  it('refuses a FIFO given by name by itself instead of waiting on it forever', async () => {
    const listing = await createListing('Fifo');
    const fifo = join(dir.path, 'pipe.md');
    execFileSync('mkfifo', [fifo]);
    const result = await cli(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      fifo,
      join(FIXTURES, 'codeblock.md'),
    );
    expect(result.code).toBe(1);
    expect(result.json.documents).toMatchObject([
      {
        source: fifo,
        status: 'rejected',
        error: {
          code: 'invalid_document',
          message: `${fifo}: not a regular file (a FIFO, socket or device); give files, folders or ZIP archives.`,
        },
      },
      { source: 'codeblock.md', status: 'ingested' },
    ]);
  }, 300_000);

  it('names both paths when two files given share a name, listing the one stored first', async () => {
    const listing = await createListing('Clash');
    const d1 = join(dir.path, 'clash', 'd1');
    const d2 = join(dir.path, 'clash', 'd2');
    mkdirSync(d1, { recursive: true });
    mkdirSync(d2, { recursive: true });
    writeFileSync(join(d1, 'note.md'), '# First copy\n\napples\n');
    writeFileSync(join(d2, 'note.md'), '# Second copy\n\npears\n');
    const human = await inFolder(join(dir.path, 'clash'), () =>
      cli('ingest', '--listing', listing.id, 'd1/note.md', 'd2/note.md'),
    );
    expect(human.code).toBe(1);
    const rows = human.stdout.split('\n').filter((l) => /note\.md/.test(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^note\.md +markdown +ingested +1$/);
    expect(rows[1]).toMatch(
      /^d2\/note\.md +markdown +rejected +0 +d2\/note\.md: not ingested: the name appears twice in this ingestion, and d1\/note\.md took it first as "note\.md"; rename one of them to keep both\.$/,
    );
    expect(human.stdout).toMatch(
      /Stored 1 chunk from 1 file in [\d.]+ s\. The knowledge base now holds 1 document, 1 chunk\./,
    );
  }, 300_000);

  it("prints this run's chunks as `chunks` (DESIGN §6), the knowledge base's totals apart", async () => {
    const listing = await createListing('Counts');
    const first = await cli('--json', 'ingest', '--listing', listing.id, join(FIXTURES, 'codeblock.md'));
    expect(first.code).toBe(0);
    const stored = first.json.documents[0].chunks as number;
    expect(first.json).toEqual({
      listingId: listing.id,
      documents: [expect.objectContaining({ source: 'codeblock.md', status: 'ingested' })],
      chunks: stored,
      durationMs: expect.any(Number),
      knowledgeBase: { documents: 1, chunks: stored },
    });
    const csv = join(dir.path, 'counts.csv');
    writeFileSync(csv, 'name,city\nAda,London\nCy,Paris\n');
    const second = await cli(
      '--json',
      'ingest',
      '--listing',
      listing.id,
      join(FIXTURES, 'codeblock.md'),
      csv,
    );
    expect(second.json.documents.map((d: { status: string }) => d.status)).toEqual(['unchanged', 'ingested']);
    expect(second.json.chunks).toBe(2);
    expect(second.json.knowledgeBase).toEqual({ documents: 2, chunks: stored + 2 });
    expect(second.json).not.toHaveProperty('documentCount');
  }, 300_000);
});
