import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';
import { tempDir } from '../helpers/studio';

const dir = tempDir();
afterAll(() => dir.remove());
// main() in this process (a spawned kbstudio costs about a second), but for one real process below.
const cli = cliInProcess(join(dir.path, 'data'));
const cliProcess = cliRunner(join(dir.path, 'data'));

describe('kbstudio argument errors', () => {
  let listing: string;
  let doc: string;
  let dataset: string;
  beforeAll(async () => {
    const created = await cli(
      '--json',
      'listings',
      'create',
      '--title',
      'Flags',
      '--access-model',
      'one_time',
      '--price',
      '0',
    );
    listing = created.json.id;
    doc = join(dir.path, 'a.md');
    writeFileSync(doc, '# A\n\nSome text.');
    dataset = join(dir.path, 'beir');
    mkdirSync(dataset, { recursive: true });
  }, 120_000);

  it('points to the command help after a bad value of a flag, as after an unknown flag', async () => {
    const cases: [string[], string, string, typeof cli][] = [
      [
        ['listings', 'create', '--title', 'T', '--access-model', 'bogus', '--price', '0'],
        '--access-model: ',
        'kbstudio listings create',
        // One as a shell sees it: a real process, its exit status and its two streams.
        cliProcess,
      ],
      [['ingest', '--listing', listing, '--chunk-size', '10', doc], '--chunk-size: ', 'kbstudio ingest', cli],
      [['query', '--listing', listing, '--top-k', '21', 'hello'], '--top-k: ', 'kbstudio query', cli],
      [['eval', '--listing', listing, '--k', '0', dataset], '--k: ', 'kbstudio eval', cli],
    ];
    await Promise.all(
      cases.map(async ([args, error, command, runner]) => {
        const run = await runner(...args);
        expect(run.code).toBe(1);
        const lines = run.stderr.split('\n');
        expect(lines[0]).toMatch(new RegExp(`^kbstudio: ${error}`));
        // Printed once, and then the pointer, as for an unknown flag or a missing argument.
        expect(lines.slice(1)).toEqual([`(run '${command} --help' for usage)`, '']);
        expect(run.stdout).toBe('');
      }),
    );
  }, 120_000);

  it('keeps --json to the error body, and gives no pointer for an error about the data', async () => {
    const json = await cli('--json', 'query', '--listing', listing, '--top-k', '21', 'hello');
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(json.json.error).toMatchObject({
      code: 'invalid_request',
      message: '--top-k: Too big: expected number to be <=20',
    });
    const [unknownListing, missingPath] = await Promise.all([
      cli('query', '--listing', 'lst_missing', 'hello'),
      cli('ingest', '--listing', listing, join(dir.path, 'nonexistent')),
    ]);
    for (const run of [unknownListing, missingPath]) {
      expect(run.code).toBe(1);
      expect(run.stderr).not.toContain('--help');
      expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
    expect(unknownListing.stderr).toContain("Listing 'lst_missing' was not found.");
  }, 120_000);
});
