import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../helpers/cli';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../helpers/fakeSolanaRpc';
import { cliInProcess } from '../helpers/mainInProcess';
import { tempDir } from '../helpers/studio';

const SOL = 1_000_000_000;
// A loaded machine makes the steps slow, the real `kbstudio` process below most of all.
const SLOW = 300_000;
const dir = tempDir('kbs-cli-listings-');
const localDir = tempDir('kbs-cli-listings-local-');
// main() in this process (a spawned kbstudio costs about a second): the fake Solana RPC on loopback
// answers it as it would a process. One refusal runs as a real process, to see a command end to end as
// a shell does.
const cli = cliInProcess(dir.path, { json: true });
const human = cliInProcess(dir.path);
let rpc: FakeSolanaRpc;

beforeAll(async () => {
  rpc = await startFakeSolanaRpc({ confirmAfterPolls: 0 });
}, SLOW);
afterAll(async () => {
  await rpc.close();
  dir.remove();
  localDir.remove();
});

const createListing = async (...flags: string[]) =>
  (await cli('listings', 'create', '--title', 'Sub KB', ...flags)).json.id as string;

describe('kbstudio listings on Solana (the audit reproduction)', () => {
  it(
    'refuses a price change after publishing on chain, and the purchase charges the terms shown',
    async () => {
      expect((await cli('settings', 'set', 'solana.rpcUrl', rpc.url)).code).toBe(0);
      const creator = (await cli('wallet', 'show')).json.address as string;
      rpc.fund(creator, 5 * SOL);
      const id = await createListing(
        '--access-model',
        'subscription',
        '--price',
        '1.5',
        '--subscription-days',
        '30',
      );
      expect((await cli('listings', 'publish', id)).code).toBe(0);

      const update = await cli('listings', 'update', id, '--price', '0.5');
      expect(update.code).not.toBe(0);
      expect(update.json.error).toMatchObject({ code: 'conflict', status: 409 });
      expect(update.json.error.message).toMatch(/^--price: .*the program on chain cannot change terms/);
      expect((await cli('listings', 'show', id)).json.price).toBe(1.5);

      await cli('wallet', 'create', '--name', 'alice');
      const alice = (await cli('wallet', 'show', 'alice')).json.address as string;
      rpc.fund(alice, 2 * SOL);
      const bought = await human('credentials', 'purchase', '--listing', id, '--wallet', 'alice');
      expect(bought.code).toBe(0);
      expect(bought.stdout).toContain('Purchased for 1.5 SOL.');
      expect(rpc.account(alice)!.lamports).toBeLessThan(BigInt(0.5 * SOL));
    },
    SLOW,
  );

  it(
    'says a listing is already published and records nothing more',
    async () => {
      const id = await createListing('--access-model', 'one_time', '--price', '0.1');
      expect((await cli('listings', 'publish', id)).code).toBe(0);
      const sent = rpc.calls('sendTransaction').length;
      const again = await human('listings', 'publish', id);
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/^Already published at \w+: nothing was signed or sent\./);
      const json = await cli('listings', 'publish', id);
      expect(json.json).toMatchObject({ id, status: 'published' });
      expect(rpc.calls('sendTransaction')).toHaveLength(sent);
    },
    SLOW,
  );
});

describe('kbstudio listings publish on the embedded ledger', () => {
  const local = cliInProcess(localDir.path, { json: true });

  it(
    'warns on stderr, not in the JSON, when the knowledge base is empty',
    async () => {
      const id = (
        await local('listings', 'create', '--title', 'Empty', '--access-model', 'one_time', '--price', '1')
      ).json.id as string;
      const published = await local('listings', 'publish', id);
      expect(published.code).toBe(0);
      expect(published.json).toMatchObject({ id, status: 'published', chunkCount: 0 });
      expect(published.stderr).toMatch(
        /warning: listing lst_\w+ has no documents .*kbstudio ingest --listing/,
      );

      const again = await local('listings', 'publish', id);
      expect(again.code).toBe(0);
      expect(again.stderr).toBe('');
    },
    SLOW,
  );

  it(
    'refuses a per-query deposit below one query price, naming deposit, before the program sees it',
    async () => {
      const id = (
        await local(
          'listings',
          'create',
          '--title',
          'Metered',
          '--access-model',
          'per_query',
          '--price',
          '0.002',
        )
      ).json.id as string;
      await local('listings', 'publish', id);
      await local('wallet', 'create', '--name', 'meter');
      const res = await local(
        'credentials',
        'purchase',
        '--listing',
        id,
        '--wallet',
        'meter',
        '--deposit',
        '0.001',
      );
      expect(res.code).not.toBe(0);
      expect(res.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(res.json.error.message).toMatch(
        /^--deposit: 0\.001 SOL is less than one query .*\(0\.002 SOL\)/,
      );
    },
    SLOW,
  );
});

describe('kbstudio listings with a creator wallet this studio does not hold', () => {
  const local = cliInProcess(localDir.path, { json: true });

  it(
    'creates it with a warning on stderr, and the publish refusal says how to import the wallet',
    async () => {
      const foreign = '7xHhHgkWFdmhsZKkFnHZBGUJ8LqcmwmJduidDBc54VZ5';
      const created = await local(
        'listings',
        'create',
        '--title',
        'Foreign',
        '--access-model',
        'one_time',
        '--price',
        '0',
        '--wallet',
        foreign,
      );
      // As the studio: a browser wallet may be a listing's creator, and signs in the studio.
      expect(created.code).toBe(0);
      expect(created.json).toMatchObject({ creatorWallet: foreign, status: 'draft' });
      expect(created.stderr).toMatch(
        new RegExp(
          `^kbstudio: warning: listing ${created.json.id} was created, but it cannot be published .*kbstudio wallet import FILE`,
        ),
      );
      const published = await local('listings', 'publish', created.json.id);
      expect(published.code).toBe(1);
      expect(published.json.error.message).toBe(
        `This studio does not hold the secret of wallet ${foreign}: import its keypair with 'kbstudio wallet import FILE' (Solana CLI id.json format), or sign create_listing with that wallet as a browser wallet on the studio's Wallet page (kbstudio serve).`,
      );
      // A wallet it holds: no warning.
      const own = await local(
        'listings',
        'create',
        '--title',
        'Own',
        '--access-model',
        'one_time',
        '--price',
        '0',
      );
      expect(own.stderr).toBe('');
    },
    SLOW,
  );

  it(
    "names the flags typed when the listing's state refuses a change (credentials held)",
    async () => {
      const id = (
        await local('listings', 'create', '--title', 'Held', '--access-model', 'one_time', '--price', '0.01')
      ).json.id as string;
      expect((await local('listings', 'publish', id)).code).toBe(0);
      await local('wallet', 'create', '--name', 'held-buyer');
      expect((await local('credentials', 'grant', '--listing', id, '--wallet', 'held-buyer')).code).toBe(0);
      // A real process: the exit status a shell sees, and the refusal on its stderr.
      const price = await cliRunner(localDir.path)('listings', 'update', id, '--price', '0.003');
      expect(price.code).toBe(1);
      expect(price.stderr).toMatch(new RegExp(`^kbstudio: --price: listing '${id}' has 1 credential held`));
      const terms = await local(
        'listings',
        'update',
        id,
        '--access-model',
        'subscription',
        '--subscription-days',
        '7',
      );
      expect(terms.json.error).toMatchObject({ code: 'conflict', status: 409 });
      expect(terms.json.error.message).toMatch(/^--access-model, --subscription-days: listing /);
    },
    SLOW,
  );
});
