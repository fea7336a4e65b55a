import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, tempDir } from '../helpers/studio';
import { BIN, cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';
import { stopServer } from '../helpers/e2e';
import { numberFlag } from '../../src/cli/context';
import { buildProgram } from '../../src/cli/main';

const dir = tempDir();
afterAll(() => dir.remove());

// main() in this process (a spawned kbstudio costs about a second). Real processes for `serve`, and for
// one command end to end as a shell runs it.
const cli = cliInProcess(dir.path);
const cliProcess = cliRunner(dir.path);

describe('kbstudio CLI', () => {
  let defaultAddress: string;
  beforeAll(async () => {
    defaultAddress = (await cli('--json', 'wallet', 'show')).json.address;
  });

  it('creates a default wallet on first use and shows it without its secret', async () => {
    // A real process: its exit status and all it wrote to stdout.
    const { code, json, stdout } = await cliProcess('--json', 'wallet', 'show');
    expect(code).toBe(0);
    expect(json).toMatchObject({ name: 'default', address: defaultAddress, isDefault: true });
    expect(stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(stdout).not.toMatch(/secret"/i);
  });

  it('creates, imports and lists wallets', async () => {
    const created = await cli('--json', 'wallet', 'create', '--name', 'buyer');
    expect(created.json.name).toBe('buyer');
    const solana = Keypair.generate();
    const file = join(dir.path, 'id.json');
    writeFileSync(file, JSON.stringify(Array.from(solana.secretKey)));
    const imported = await cli('--json', 'wallet', 'import', file, '--name', 'cli');
    expect(imported.json.address).toBe(solana.publicKey.toBase58());
    const again = await cli('--json', 'wallet', 'import', file);
    expect(again.code).toBe(1);
    expect(again.json.error).toMatchObject({ code: 'conflict' });
    const list = await cli('--json', 'wallet', 'list');
    expect(list.json.data.map((w: { name: string }) => w.name)).toEqual(['default', 'buyer', 'cli']);
  });

  it('creates keys shown once, lists them without the key, and revokes them', async () => {
    const created = await cli('--json', 'keys', 'create', '--label', 'ci');
    expect(created.json).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^kbs_[0-9A-Za-z]{32}$/),
      wallet: defaultAddress,
    });
    const list = await cli('--json', 'keys', 'list');
    expect(list.stdout).not.toContain(created.json.key);
    expect(list.json.data.find((k: { id: string }) => k.id === created.json.id)).toMatchObject({
      label: 'ci',
      revokedAt: null,
    });
    const revoked = await cli('--json', 'keys', 'revoke', created.json.id);
    expect(revoked.json.revokedAt).not.toBeNull();
    const bad = await cli('--json', 'keys', 'create', '--wallet', 'nope');
    expect(bad.code).toBe(1);
    expect(bad.json.error.message).toBe(
      "--wallet: 'nope' is neither the name of a wallet of this studio (kbstudio wallet list) nor a base58 wallet address.",
    );
    // A wallet by name, as `wallet show` takes it.
    await cli('wallet', 'create', '--name', 'keyholder');
    const holder = (await cli('--json', 'wallet', 'show', 'keyholder')).json.address;
    expect((await cli('--json', 'keys', 'create', '--wallet', 'keyholder')).json.wallet).toBe(holder);
  });

  it('names a wallet created without a name wallet-N once a default wallet exists under another name', async () => {
    const other = tempDir('kbs-cli-wallets-');
    try {
      const own = cliInProcess(other.path);
      expect((await own('--json', 'wallet', 'create', '--name', 'alice')).json).toMatchObject({
        name: 'alice',
        isDefault: true,
      });
      expect((await own('--json', 'wallet', 'create')).json).toMatchObject({
        name: 'wallet-2',
        isDefault: false,
      });
      expect((await own('--json', 'wallet', 'show')).json.name).toBe('alice');
    } finally {
      other.remove();
    }
  });

  it('says which listing flags are required, in the help and when one is missing', async () => {
    const help = (await cli('listings', 'create', '--help')).stdout.replace(/\s+/g, ' ');
    for (const flag of ['--title <title>', '--access-model <model>', '--price <sol>']) {
      expect(help).toMatch(new RegExp(`${flag} [^-]*\\(required\\)`));
    }
    expect((await cli('listings', 'update', '--help')).stdout).not.toContain('(required)');
    const missing = await cli('--json', 'listings', 'create', '--title', 'x', '--price', '1');
    expect(missing.code).toBe(1);
    expect(missing.json.error.message).toBe('--access-model: required (one_time | subscription | per_query)');
  });

  it('creates, updates, shows, lists and publishes listings', async () => {
    const created = await cli(
      '--json',
      'listings',
      'create',
      '--title',
      'Case law',
      '--domain',
      'legal',
      '--tags',
      'law, cases',
      '--access-model',
      'subscription',
      '--price',
      '0.25',
      '--subscription-days',
      '30',
      '--rate-limit',
      '10',
    );
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({
      title: 'Case law',
      status: 'draft',
      price: 0.25,
      subscriptionDays: 30,
      retrievalRateLimit: 10,
      tags: ['law', 'cases'],
      creatorWallet: defaultAddress,
    });
    const id = created.json.id;
    const updated = await cli('--json', 'listings', 'update', id, '--price', '0.5');
    expect(updated.json.price).toBe(0.5);
    expect((await cli('--json', 'listings', 'show', id)).json.price).toBe(0.5);
    const human = await cli('listings', 'show', id);
    expect(human.stdout).toContain('500000000 lamports');
    expect((await cli('--json', 'listings', 'publish', id)).json.status).toBe('published');
    const list = await cli('--json', 'listings', 'list', '--q', 'case');
    expect(list.json.data.map((l: { id: string }) => l.id)).toEqual([id]);
    expect(list.json.pagination).toEqual({ total: 1, limit: 20, offset: 0, hasMore: false });
  });

  it('prints lists as the API does: { data, pagination } when paged', async () => {
    const create = (title: string) =>
      cli('--json', 'listings', 'create', '--title', title, '--access-model', 'one_time', '--price', '1');
    await create('Paged one');
    await create('Paged two');
    const all = (await cli('--json', 'listings', 'list')).json.pagination.total;
    const first = await cli('--json', 'listings', 'list', '--limit', '1');
    expect(first.json.data).toHaveLength(1);
    expect(first.json.pagination).toEqual({ total: all, limit: 1, offset: 0, hasMore: true });
    const last = await cli('--json', 'listings', 'list', '--limit', '1', '--offset', String(all - 1));
    expect(last.json.pagination).toEqual({ total: all, limit: 1, offset: all - 1, hasMore: false });
    const human = await cli('listings', 'list', '--limit', '1');
    expect(human.stdout).toContain(`(1 of ${all}; use --offset)`);
    const limit = await cli('--json', 'listings', 'list', '--limit', '0');
    expect(limit.json.error.message).toMatch(/^--limit: /);
  });

  it('reports bad input as the API error body with a non-zero exit', async () => {
    const badPrice = await cli(
      '--json',
      'listings',
      'create',
      '--title',
      'x',
      '--access-model',
      'one_time',
      '--price',
      'free',
    );
    expect(badPrice.code).toBe(1);
    expect(badPrice.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(badPrice.json.error.message).toBe('--price: expected a number written in decimal digits');
    const missing = await cli('--json', 'listings', 'show', 'lst_missing');
    expect(missing.json.error).toMatchObject({ code: 'listing_not_found', status: 404 });
    const unknown = await cli('--json', 'frobnicate');
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.message).toContain('frobnicate');
    const human = await cli('listings', 'show', 'lst_missing');
    expect(human.code).toBe(1);
    expect(human.stderr).toContain("Listing 'lst_missing' was not found");
  });

  it('bound to every interface, prints addresses to browse to (loopback) and warns on stderr, --json too', async () => {
    const child = spawn(
      process.execPath,
      [BIN, '--data-dir', dir.path, '--json', 'serve', '--port', '0', '--host', '0.0.0.0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (d: Buffer) => resolve(d.toString()));
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
      const started = JSON.parse(line);
      const port = new URL(started.url).port;
      expect(started).toEqual({
        url: `http://127.0.0.1:${port}`,
        studioUrl: expect.stringMatching(
          new RegExp(`^http://127\\.0\\.0\\.1:${port}/\\?token=[A-Za-z0-9_-]{43}$`),
        ),
        api: `http://127.0.0.1:${port}/v1`,
        dataDir: dir.path,
        listening: `http://0.0.0.0:${port}`,
      });
      expect((await fetch(`${started.api}/openapi.json`)).status).toBe(200);
      expect((await fetch(started.studioUrl, { redirect: 'manual' })).status).toBe(303);
      expect(stderr).toMatch(
        /^kbstudio: warning: bound to 0\.0\.0\.0 \(every network interface of this machine\)\. Anyone who can reach/,
      );
    } finally {
      await stopServer(child);
    }
  }, 300_000);

  it('accepts numbers written in decimal digits only, for every number flag, naming the flag', async () => {
    const refused = async (...args: string[]) => {
      const res = await cli('--json', ...args);
      expect(res.code, args.join(' ')).toBe(1);
      return res.json.error.message as string;
    };
    const create = ['listings', 'create', '--title', 'Hex', '--access-model', 'per_query'];
    expect(await refused(...create, '--price', '0x10')).toBe(
      '--price: expected a number written in decimal digits',
    );
    // The other notations JavaScript reads as numbers are not numbers here either (in process: each
    // refusal below is one process, and they all go through numberFlag).
    expect(['0b1', '0o77', 'Infinity', '-Infinity', '1_000', ' '].map(numberFlag)).toEqual(
      Array(6).fill(NaN),
    );
    expect(['12', '0.5', '.5', '1e-3', '+90', '-2'].map(numberFlag)).toEqual([12, 0.5, 0.5, 0.001, 90, -2]);
    expect(await refused(...create, '--price', '1e400')).toBe('--price: the number is too large');
    expect(await refused('query', '--listing', 'lst_x', '--top-k', '0x2', 'q')).toMatch(/^--top-k: /);
    expect(await refused('ingest', '--listing', 'lst_x', '--chunk-size', '0x20', dir.path)).toMatch(
      /^--chunk-size: /,
    );
    expect(await refused('eval', '--listing', 'lst_x', '--k', '0x2', dir.path)).toMatch(/^--k: /);
    const metered = (await cli('--json', ...create, '--price', '0.001')).json.id as string;
    expect((await cli('--json', 'listings', 'publish', metered)).code).toBe(0);
    const buyer = (await cli('--json', 'wallet', 'create', '--name', 'hex-buyer')).json.address as string;
    expect(
      await refused('credentials', 'grant', '--listing', metered, '--wallet', buyer, '--balance', '0x1'),
    ).toMatch(/^--balance: /);
    // Refused before binding: the old code bound port 16 for `0x10` and served on.
    const serve = await promisify(execFile)(
      process.execPath,
      [BIN, '--data-dir', dir.path, '--json', 'serve', '--port', '0x0'],
      { timeout: 60_000 },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => err,
    );
    expect(serve.code).toBe(1);
    expect(JSON.parse(serve.stdout).error.message).toMatch(/^--port: '0x0' is not a port number/);
    // Decimal notation is still a number: a point, an exponent, a sign.
    const ok = await cli('--json', ...create, '--price', '1.5e-3', '--rate-limit', '+90');
    expect(ok.code).toBe(0);
    expect(ok.json).toMatchObject({ price: 0.0015, retrievalRateLimit: 90 });
  }, 300_000);

  it('names the flag typed in every error about its value, with the pointer to --help', async () => {
    const unsupported = [
      'listings',
      'create',
      '--title',
      'X',
      '--access-model',
      'one_time',
      '--price',
      '1',
      '--embedding-model',
      'foo',
    ];
    const bad = await cli(...unsupported);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^kbstudio: --embedding-model: 'foo' is not supported\./);
    expect(bad.stderr).toContain("(run 'kbstudio listings create --help' for usage)");
    const json = await cli('--json', ...unsupported);
    expect(json.stderr).toBe('');
    expect(json.json.error).toMatchObject({
      code: 'unsupported_embedding_model',
      status: 400,
      message: expect.stringMatching(/^--embedding-model: /),
      requestId: expect.stringMatching(/^req_/),
    });
  }, 300_000);

  it('help: update shows no defaults, required options say so, every option is described', async () => {
    // Read in process from the program `kbstudio` runs (a process per help text took 11 s of CI).
    const program = buildProgram();
    const command = (...names: string[]) =>
      names.reduce((c, name) => c.commands.find((sub) => sub.name() === name)!, program);
    const help = async (...names: string[]) =>
      command(...names)
        .helpInformation()
        .replace(/\s+/g, ' ');
    const update = await help('listings', 'update');
    expect(update).not.toContain('(default');
    expect(update).toContain('every other field keeps its current value');
    expect(await help('listings', 'create')).toMatch(/--rate-limit <n> [^-]*\(default 60\)/);
    for (const command of [
      ['ingest'],
      ['query'],
      ['eval'],
      ['push'],
      ['credentials', 'grant'],
      ['credentials', 'revoke'],
      ['credentials', 'purchase'],
    ]) {
      expect(await help(...command), command.join(' ')).toMatch(/--listing <id> [^-]*\(required\)/);
    }
    expect(await help('credentials', 'grant')).toMatch(/--wallet <name\|address> [^-]*\(required\)/);
    expect(await help('credentials', 'revoke')).toMatch(/--wallet <name\|address> [^-]*\(required\)/);
    const list = command('listings', 'list').helpInformation();
    for (const flag of ['--domain <domain>', '--offset <n>', '--access-model <model>']) {
      expect(list).toMatch(new RegExp(`${flag} +\\S`));
    }
    expect(await help('listings', 'publish')).not.toContain('(again: nothing sent)');
    expect(await help('settings', 'set')).toContain(
      'openai.apiKey, openai.baseUrl, cohere.apiKey, cohere.baseUrl, solana.rpcUrl, solana.programId, hosted.url',
    );
  }, 300_000);

  it('serves /v1 with a key from `keys create` (the README promise)', async () => {
    const { key } = (await cli('--json', 'keys', 'create')).json;
    // The copy an ingestion killed before its commit left, which no document refers to.
    const orphan = join(dir.path, 'sources', 'ab', 'ab'.repeat(32));
    mkdirSync(dirname(orphan), { recursive: true });
    writeFileSync(orphan, '# never committed');
    const child = spawn(process.execPath, [BIN, '--data-dir', dir.path, '--json', 'serve', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
      });
      const { url, api, studioUrl } = JSON.parse(line);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // The studio's link, which signs a browser in (the page alone no longer carries the token).
      expect(studioUrl).toMatch(new RegExp(`^${url}/\\?token=[A-Za-z0-9_-]{43}$`));
      expect((await fetch(studioUrl, { redirect: 'manual' })).status).toBe(303);
      const anonymous = await fetch(`${api}/listings`);
      expect(anonymous.status).toBe(401);
      expect((await json(anonymous)).error.code).toBe('unauthorized');
      const authed = await fetch(`${api}/listings`, { headers: { Authorization: `Bearer ${key}` } });
      expect(authed.status).toBe(200);
      expect(authed.headers.get('x-ratelimit-remaining')).toBe('99');
      const body = await json(authed);
      expect(body.pagination).toMatchObject({ limit: 20, offset: 0 });
      expect(Array.isArray(body.data)).toBe(true);
      // Dropped once the server listens, off the request path.
      await expect.poll(() => existsSync(orphan), { timeout: 10_000 }).toBe(false);
      // A start and ordinary requests write no warning (a library's validation once logged a stack here).
      expect(stderr).toBe('');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
