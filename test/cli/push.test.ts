import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';
import { remoteKey } from '../helpers/pushRemote';
import { FIXTURES, startStudio, tempDir, type TestStudio } from '../helpers/studio';

const dir = tempDir();
// main() in this process (a spawned kbstudio costs about a second): a push to the remote studio on
// loopback does not depend on being a process of its own. Ctrl-C does: that case runs a real process,
// and sees its exit status as a shell would.
const cli = cliInProcess(join(dir.path, 'data'));
let remote: TestStudio;
let key: string;
let listingId: string;

beforeAll(async () => {
  remote = await startStudio({ rateLimits: { perKey: 10_000 } });
  key = remoteKey(remote);
  listingId = JSON.parse(
    (
      await cli(
        '--json',
        'listings',
        'create',
        '--title',
        'CLI handbook',
        '--access-model',
        'one_time',
        '--price',
        '1',
      )
    ).stdout,
  ).id;
  const ingested = await cli(
    '--json',
    'ingest',
    '--listing',
    listingId,
    join(FIXTURES, 'codeblock.md'),
    join(FIXTURES, 'stanley-cups.csv'),
    join(FIXTURES, 'fake.docx'),
    '--chunk-size',
    '200',
    '--chunk-overlap',
    '20',
  );
  expect(ingested.code).toBe(0);
}, 60_000);
afterAll(async () => {
  await remote?.close();
  dir.remove();
});

describe('kbstudio push', () => {
  it('pushes with --json, prints the report, remembers the target, and pushes again with --to alone', async () => {
    const first = await cli(
      '--json',
      'push',
      '--listing',
      listingId,
      '--to',
      remote.url,
      '--api-key',
      key,
      '--remember',
      '--max-part-files',
      '2',
    );
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = first.json;
    expect(report).toMatchObject({
      listingId,
      target: `${remote.url}/v1`,
      state: 'completed',
      remoteListingId: expect.stringMatching(/^lst_/),
      totals: { files: 3, accepted: 3, unchanged: 0, rejected: 0 },
    });
    expect(report.parts.map((p: { files: { source: string }[] }) => p.files.map((f) => f.source))).toEqual([
      ['codeblock.md', 'fake.docx'],
      ['stanley-cups.csv'],
    ]);
    expect(report.parts[0].chunking).toEqual({ strategy: 'recursive', chunkSize: 200, chunkOverlap: 20 });
    const remoteDocs = remote.services.knowledgeBase.documents(report.remoteListingId);
    expect(remoteDocs.map((d) => d.source)).toEqual(['codeblock.md', 'fake.docx', 'stanley-cups.csv']);

    const again = await cli('--json', 'push', '--listing', listingId, '--to', remote.url);
    expect(again.code).toBe(0);
    expect(again.json).toMatchObject({
      remoteListingId: report.remoteListingId,
      totals: { accepted: 0, unchanged: 3 },
    });
  });

  it('prints a table and a summary for people', async () => {
    const result = await cli('push', '--listing', listingId, '--to', remote.url, '--api-key', key);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/SOURCE\s+STATUS\s+CHUNKS/);
    expect(result.stdout).toMatch(/codeblock\.md\s+unchanged/);
    expect(result.stdout).toContain(`Pushed to ${remote.url}/v1`);
    expect(result.stdout).toContain('0 accepted, 3 unchanged, 0 rejected');
  });

  it('exits 1 with an authentication error naming the target when the key is wrong', async () => {
    const result = await cli(
      '--json',
      'push',
      '--listing',
      listingId,
      '--to',
      remote.url,
      '--api-key',
      'kbs_wrongwrongwrongwrongwrongwrong0',
    );
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({
      code: 'unauthorized',
      status: 401,
      message: expect.stringContaining(`Authentication failed at ${remote.url}/v1`),
      requestId: expect.stringMatching(/^req_\w{20}$/),
    });
    expect(result.json.error.details.report.state).toBe('failed');

    const human = await cli(
      'push',
      '--listing',
      listingId,
      '--to',
      remote.url,
      '--api-key',
      'kbs_wrong0000000000000000000000000',
    );
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('kbstudio: Authentication failed at');
  });

  it(
    '--remember saves a key only once the service accepted it: a failed push keeps the working one',
    { timeout: 90_000 },
    async () => {
      const push = (...args: string[]) => cli('--json', 'push', '--listing', listingId, ...args);
      // Saved by the first test; a typo'd key is refused and must not replace it.
      const typo = await push(
        '--to',
        remote.url,
        '--api-key',
        'kbs_typotypotypotypotypotypotoTyp',
        '--remember',
      );
      expect(typo.code).toBe(1);
      expect(typo.json.error.code).toBe('unauthorized');
      const unknown = await cli(
        '--json',
        'push',
        '--listing',
        'lst_nope',
        '--to',
        remote.url,
        '--api-key',
        'kbs_otherotherotherotherotherother1',
        '--remember',
      );
      expect(unknown.json.error.code).toBe('listing_not_found');
      // The saved key is still the one that works.
      const again = await push('--to', remote.url);
      expect(again.code).toBe(0);
      expect(again.json.totals).toMatchObject({ unchanged: 3 });

      // An address that is not the API: nothing saved for it.
      const notApi = await push('--to', `${remote.url}/api/v1`, '--api-key', key, '--remember');
      expect(notApi.json.error.code).toBe('not_a_marketplace_api');
      const noKeySaved = await push('--to', `${remote.url}/api/v1`);
      expect(noKeySaved.json.error.message).toContain(`none saved for ${remote.url}/api/v1`);
    },
  );

  it('reports the studio API given as --to as not the API, naming the address', async () => {
    const result = await cli(
      '--json',
      'push',
      '--listing',
      listingId,
      '--to',
      `${remote.url}/studio`,
      '--api-key',
      'kbs_x',
    );
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({
      code: 'not_a_marketplace_api',
      status: 400,
      message: expect.stringMatching(
        new RegExp(`^${remote.url}/studio does not answer as a Knowledge Marketplace API`),
      ),
    });
  });

  it('Ctrl-C (SIGINT) cancels a push waiting on the service and exits 130 with the cancelled report', async () => {
    // A service that takes every request and never answers: the push waits until it is interrupted.
    let received!: () => void;
    const first = new Promise<void>((resolve) => (received = resolve));
    const silent: Server = createServer(() => received());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    try {
      const child = spawn(
        process.execPath,
        [
          BIN,
          '--data-dir',
          join(dir.path, 'data'),
          '--json',
          'push',
          '--listing',
          listingId,
          '--to',
          url,
          '--api-key',
          key,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      await first;
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(JSON.parse(stdout).error).toMatchObject({ code: 'cancelled' });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('pushes to the hosted.url setting without --to, with the key saved for it', async () => {
    const hosted = cliInProcess(join(dir.path, 'data'), { env: { KBSTUDIO_HOSTED_URL: remote.url } });
    const result = await hosted('--json', 'push', '--listing', listingId);
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ target: `${remote.url}/v1`, totals: { unchanged: 3 } });
  });

  it('asks for a key when none is given or saved, and refuses unknown listings', async () => {
    const noTarget = await cli('--json', 'push', '--listing', listingId);
    expect(noTarget.code).toBe(1);
    expect(noTarget.json.error.message).toMatch(/^--to: give the service's base URL/);
    const noKey = await cli('--json', 'push', '--listing', listingId, '--to', 'http://127.0.0.1:9');
    expect(noKey.code).toBe(1);
    expect(noKey.json.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('--api-key'),
    });
    const unknown = await cli(
      '--json',
      'push',
      '--listing',
      'lst_nope',
      '--to',
      remote.url,
      '--api-key',
      key,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.code).toBe('listing_not_found');
  });
});
