import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { tempDir } from '../helpers/studio';
import { cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';

const dir = tempDir('kbs-cli-credentials-');
afterAll(() => dir.remove());

// main() in this process (a spawned kbstudio costs about a second), but for one refusal run as a real
// process below, to see a command end to end as a shell does.
const cli = cliInProcess(dir.path, { json: true });
const cliProcess = cliRunner(dir.path, { json: true });

const tester = generateKeypair().address;
let subscription: string;
let perQuery: string;
let published: Awaited<ReturnType<typeof cli>>;

beforeAll(async () => {
  const sub = await cli(
    'listings',
    'create',
    '--title',
    'Monthly digest',
    '--access-model',
    'subscription',
    '--price',
    '0.5',
    '--subscription-days',
    '30',
  );
  subscription = sub.json.id;
  perQuery = (
    await cli('listings', 'create', '--title', 'Metered', '--access-model', 'per_query', '--price', '0.001')
  ).json.id;
  published = await cli('listings', 'publish', subscription);
  await cli('listings', 'publish', perQuery);
}, 60_000);

describe('kbstudio listings publish / withdraw', () => {
  it('publishes with a signed create_listing and records the PDA', async () => {
    expect(published.code).toBe(0);
    expect(published.json).toMatchObject({
      id: subscription,
      status: 'published',
      pdaAddress: expect.any(String),
    });
    expect((await cli('listings', 'show', perQuery)).json.status).toBe('published');
  });

  it('withdraws exactly what a purchase earned, then nothing', async () => {
    await cli('wallet', 'create', '--name', 'shopper');
    const shopper = (await cli('wallet', 'show', 'shopper')).json.address;
    const bought = await cli(
      'credentials',
      'purchase',
      '--listing',
      subscription,
      '--wallet',
      'shopper',
      '--periods',
      '2',
    );
    expect(bought.json).toMatchObject({ paid: 1, credential: { holderWallet: shopper, status: 'active' } });
    const withdrawn = await cli('listings', 'withdraw', subscription);
    expect(withdrawn.json).toEqual({ listingId: subscription, amount: 1, signature: expect.any(String) });
    expect((await cli('listings', 'earnings', subscription)).json).toEqual({
      listingId: subscription,
      earned: 1,
      withdrawn: 1,
      withdrawable: 0,
    });
  });
});

describe('kbstudio credentials', () => {
  it('grants test buyers in the state asked for, lists and revokes them', async () => {
    const expired = await cli(
      'credentials',
      'grant',
      '--listing',
      subscription,
      '--wallet',
      tester,
      '--expires-at',
      '2024-01-01T00:00:00Z',
    );
    expect(expired.code).toBe(0);
    expect(expired.json).toMatchObject({ holderWallet: tester, status: 'expired', testGrant: true });
    const low = await cli(
      'credentials',
      'grant',
      '--listing',
      perQuery,
      '--wallet',
      tester,
      '--balance',
      '0.0005',
    );
    expect(low.json).toMatchObject({ status: 'low_balance', balance: 0.0005 });

    const list = await cli('credentials', 'list', '--listing', perQuery);
    expect(
      list.json.data.map((c: { holderWallet: string; status: string }) => [c.holderWallet, c.status]),
    ).toEqual([[tester, 'low_balance']]);
    const revoked = await cli('credentials', 'revoke', '--listing', perQuery, '--wallet', tester);
    expect(revoked.json).toEqual({ listingId: perQuery, wallet: tester, refunded: 0 });
    expect((await cli('credentials', 'list', '--listing', perQuery)).json).toEqual({ data: [] });
  });

  it('prints the error body for refused grants', async () => {
    // A real process: the exit status a shell sees, and the error body alone on its stdout.
    const wrong = await cliProcess(
      'credentials',
      'grant',
      '--listing',
      perQuery,
      '--wallet',
      tester,
      '--expires-at',
      '2030-01-01',
    );
    expect(wrong.code).toBe(1);
    expect(wrong.json.error).toEqual({
      code: 'invalid_request',
      status: 400,
      message: '--expires-at: does not apply to a per_query credential.',
      requestId: expect.stringMatching(/^req_\w{20}$/),
    });
    const missing = await cli('credentials', 'revoke', '--listing', perQuery, '--wallet', tester);
    expect(missing.json.error).toMatchObject({
      code: 'not_found',
      message: expect.stringMatching(/holds no credential/),
    });
  });
});
