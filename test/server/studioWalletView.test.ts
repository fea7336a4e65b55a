import { Keypair, Transaction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listingPda, resolveProgramId } from '../../src/core/marketplace/solana/pda';
import { openServices } from '../../src/db/services';
import { createServer } from '../../src/server/createServer';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../helpers/fakeSolanaRpc';
import { json, startStudio, tempDir, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let creator: string;

const call = (s: { url: string; studioToken: string }, path: string, method = 'GET', body?: unknown) =>
  fetch(s.url + path, {
    method,
    headers: { 'X-Studio-Token': s.studioToken, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

/** Signs a prepared transaction through the studio's own signing endpoint, as the wallet adapter does. */
async function signThroughStudio(s: { url: string; studioToken: string }, wallet: string, unsigned: string) {
  const res = await call(s, `/studio/wallets/${wallet}/sign-transaction`, 'POST', { transaction: unsigned });
  expect(res.status).toBe(200);
  return (await json(res)).data.transaction as string;
}

beforeAll(async () => {
  studio = await startStudio();
  creator = studio.services.wallets.defaultWallet().address;
});
afterAll(() => studio.close());

describe('POST /studio/wallets/import', () => {
  it('imports a Solana CLI id.json and never answers with the secret', async () => {
    const keypair = Keypair.generate();
    const fileText = JSON.stringify([...keypair.secretKey]);
    const res = await call(studio, '/studio/wallets/import', 'POST', { fileText, name: 'cli key' });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(JSON.parse(text).data).toMatchObject({ name: 'cli key', address: keypair.publicKey.toBase58() });
    expect(text).not.toContain(fileText);
    const again = await call(studio, '/studio/wallets/import', 'POST', { fileText, name: 'twice' });
    expect(again.status).toBe(409);
    expect((await json(again)).error.message).toContain("already imported as 'cli key'");
  });

  it('explains what is wrong with a malformed keypair file, naming it', async () => {
    const cases: [string, string][] = [
      ['{not json', 'my-key.json is not JSON'],
      ['[1,2,3]', 'my-key.json must be the Solana CLI format: a JSON array of 64 numbers'],
      [JSON.stringify(new Array(64).fill(300)), 'a JSON array of 64 numbers 0..255'],
      [JSON.stringify([...new Uint8Array(32).fill(1), ...new Uint8Array(32).fill(2)]), 'does not match'],
    ];
    for (const [fileText, message] of cases) {
      const res = await call(studio, '/studio/wallets/import', 'POST', { fileText, fileName: 'my-key.json' });
      expect(res.status, fileText).toBe(400);
      expect((await json(res)).error.message).toContain(message);
    }
    const empty = await call(studio, '/studio/wallets/import', 'POST', { fileText: '' });
    expect((await json(empty)).error.message).toContain('the keypair file is empty');
  });
});

describe('network and balance without an RPC (the embedded ledger)', () => {
  it('reports the embedded ledger and why there is no airdrop', async () => {
    const { data } = await json(await call(studio, '/studio/network'));
    expect(data).toMatchObject({ network: 'ledger', rpcUrl: null, source: 'unset', ledger: 'local' });
    expect(data.airdrop).toEqual({ available: false, reason: expect.stringContaining('moves no real SOL') });
    const res = await call(studio, `/studio/wallets/${creator}/airdrop`, 'POST', { sol: 1 });
    expect(res.status).toBe(409);
    expect((await json(res)).error.message).toContain('Airdrop unavailable');
  });

  it('takes the balance from what the wallet paid and received through the ledger', async () => {
    const buyer = studio.services.wallets.create('payer').address;
    const listing = studio.services.listings.create(
      { title: 'Paid', accessModel: 'one_time', price: 0.3 },
      creator,
    );
    await studio.services.publishing.publish(listing.id);
    await studio.services.credentials.purchase(listing.id, buyer);
    const { data } = await json(await call(studio, `/studio/wallets/${buyer}/balance`));
    expect(data).toEqual({
      address: buyer,
      lamports: -300_000_000,
      sol: -0.3,
      source: 'local_ledger',
      network: 'ledger',
      rpcUrl: null,
      paidLamports: 300_000_000,
      receivedLamports: 0,
    });
  });
});

describe('signing create_listing through the wallet adapter (embedded ledger)', () => {
  it('prepares the transaction with everything it covers, then verifies, records and publishes', async () => {
    const listing = studio.services.listings.create(
      { title: 'Signed', accessModel: 'subscription', price: 1.5, subscriptionDays: 7 },
      creator,
    );
    const res = await call(studio, `/studio/listings/${listing.id}/create-listing-transaction`, 'POST');
    expect(res.status).toBe(200);
    const { data: prepared } = await json(res);
    const pda = listingPda(resolveProgramId(), creator, listing.id)[0].toBase58();
    expect(prepared.summary).toMatchObject({
      instruction: 'create_listing',
      programId: resolveProgramId().toBase58(),
      listingId: listing.id,
      listingPda: pda,
      feePayer: creator,
      accessModel: 'subscription',
      price: 1.5,
      priceLamports: 1_500_000_000,
      subscriptionDays: 7,
      ledger: 'local',
    });
    expect(prepared.summary.accounts).toEqual([
      { name: 'creator', address: creator, signer: true, writable: true },
      { name: 'listing', address: pda, signer: false, writable: true },
      { name: 'system_program', address: '11111111111111111111111111111111', signer: false, writable: false },
    ]);

    const unsignedSubmit = await call(
      studio,
      `/studio/listings/${listing.id}/create-listing-transaction/submit`,
      'POST',
      { transaction: prepared.transaction },
    );
    expect(unsignedSubmit.status).toBe(403);
    expect((await json(unsignedSubmit)).error.message).toContain('not signed by the creator');

    const signed = await signThroughStudio(studio, creator, prepared.transaction);
    const submit = await call(
      studio,
      `/studio/listings/${listing.id}/create-listing-transaction/submit`,
      'POST',
      {
        transaction: signed,
      },
    );
    expect(submit.status).toBe(200);
    const { data } = await json(submit);
    const signature = Transaction.from(Buffer.from(signed, 'base64')).signature!;
    expect(data.pdaAddress).toBe(pda);
    expect(data.listing).toMatchObject({ id: listing.id, status: 'published', pdaAddress: pda });
    expect(data.signature).toBe((await import('bs58')).default.encode(signature));
    const entry = studio.services.db
      .prepare(`SELECT instruction, wallet, signature, message FROM ledger_entries WHERE signature = ?`)
      .get(data.signature) as { message: string };
    expect(entry).toMatchObject({ instruction: 'create_listing', wallet: creator });
    expect(entry.message.startsWith('solana-tx:v1:')).toBe(true);

    const replay = await call(
      studio,
      `/studio/listings/${listing.id}/create-listing-transaction/submit`,
      'POST',
      {
        transaction: signed,
      },
    );
    expect(replay.status).toBe(409);
    expect((await json(replay)).error.message).toContain('already processed');
  });

  it('refuses a signed transaction whose terms are no longer the listing’s', async () => {
    const listing = studio.services.listings.create(
      { title: 'Repriced', accessModel: 'one_time', price: 1 },
      creator,
    );
    const { data: prepared } = await json(
      await call(studio, `/studio/listings/${listing.id}/create-listing-transaction`, 'POST'),
    );
    const signed = await signThroughStudio(studio, creator, prepared.transaction);
    studio.services.listings.update(listing.id, { price: 2 });
    const res = await call(
      studio,
      `/studio/listings/${listing.id}/create-listing-transaction/submit`,
      'POST',
      {
        transaction: signed,
      },
    );
    expect(res.status).toBe(409);
    expect((await json(res)).error.message).toContain('its instruction data differ');
    expect(studio.services.listings.get(listing.id, 'studio').status).toBe('draft');
  });

  it('refuses a transaction signed by a forger for the creator', async () => {
    const listing = studio.services.listings.create(
      { title: 'Forged', accessModel: 'one_time', price: 1 },
      creator,
    );
    const { data: prepared } = await json(
      await call(studio, `/studio/listings/${listing.id}/create-listing-transaction`, 'POST'),
    );
    const tx = Transaction.from(Buffer.from(prepared.transaction, 'base64'));
    tx.addSignature(tx.feePayer!, Buffer.alloc(64, 7));
    const forged = tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64');
    const res = await call(
      studio,
      `/studio/listings/${listing.id}/create-listing-transaction/submit`,
      'POST',
      {
        transaction: forged,
      },
    );
    expect(res.status).toBe(403);
    expect((await json(res)).error.message).toContain('does not verify');
  });
});

describe('with an RPC (a local validator)', () => {
  let rpc: FakeSolanaRpc;
  let chain: { url: string; studioToken: string; close(): Promise<void> };
  let wallet: string;

  beforeAll(async () => {
    rpc = await startFakeSolanaRpc();
    const dir = tempDir();
    const services = openServices(dir.path, { environment: { SOLANA_RPC_URL: rpc.url } });
    const server = createServer({
      services,
      studioToken: 'chain-token-0123456789',
      version: 't',
      log: () => {},
    });
    const { url } = await server.listen(0, '127.0.0.1');
    wallet = services.wallets.defaultWallet().address;
    chain = {
      url,
      studioToken: 'chain-token-0123456789',
      close: async () => {
        await server.close();
        services.close();
        dir.remove();
      },
    };
  });
  afterAll(async () => {
    await chain.close();
    await rpc.close();
  });

  it('reports the local network from the environment, with airdrops', async () => {
    const { data } = await json(await call(chain, '/studio/network'));
    expect(data).toMatchObject({
      network: 'local',
      rpcUrl: rpc.url,
      source: 'environment',
      ledger: 'solana',
    });
    expect(data.airdrop.available).toBe(true);
  });

  it('airdrops and reads the balance over JSON-RPC', async () => {
    const res = await call(chain, `/studio/wallets/${wallet}/airdrop`, 'POST', { sol: 2 });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data.balance).toMatchObject({ lamports: 2_000_000_000, sol: 2, source: 'rpc', network: 'local' });
    expect(rpc.calls('requestAirdrop')).toHaveLength(1);
    const tooMuch = await call(chain, `/studio/wallets/${wallet}/airdrop`, 'POST', { sol: 50 });
    expect(tooMuch.status).toBe(400);
  });

  it('takes an airdrop in whole lamports, named as sol, for wallets the studio holds only', async () => {
    const before = rpc.calls('requestAirdrop').length;
    for (const sol of [0.0000000001, 0.1234567891]) {
      const res = await call(chain, `/studio/wallets/${wallet}/airdrop`, 'POST', { sol });
      expect(res.status, String(sol)).toBe(400);
      expect((await json(res)).error.message).toMatch(/^sol: Use at most 9 decimals/);
    }
    const exact = await call(chain, `/studio/wallets/${wallet}/airdrop`, 'POST', { sol: 0.123456789 });
    expect(exact.status).toBe(200);
    expect(rpc.calls('requestAirdrop')).toHaveLength(before + 1);

    const stranger = '11111111111111111111111111111111';
    for (const [path, method, body] of [
      [`/studio/wallets/${stranger}/airdrop`, 'POST', { sol: 1 }],
      [`/studio/wallets/${stranger}/balance`, 'GET', undefined],
    ] as const) {
      const res = await call(chain, path, method, body);
      expect(res.status, path).toBe(404);
      expect((await json(res)).error.message).toContain(`holds no wallet ${stranger}`);
    }
    expect(rpc.calls('requestAirdrop')).toHaveLength(before + 1);
  });

  it('sends the wallet-signed create_listing to the cluster and records it', async () => {
    const created = await json(
      await call(chain, '/studio/listings', 'POST', {
        title: 'On chain',
        accessModel: 'per_query',
        price: 0.001,
      }),
    );
    const id = created.data.id as string;
    const { data: prepared } = await json(
      await call(chain, `/studio/listings/${id}/create-listing-transaction`, 'POST'),
    );
    expect(prepared.summary.ledger).toBe('solana');
    expect(rpc.calls('getLatestBlockhash').length).toBeGreaterThan(0);
    const signed = await signThroughStudio(chain, wallet, prepared.transaction);
    const res = await call(chain, `/studio/listings/${id}/create-listing-transaction/submit`, 'POST', {
      transaction: signed,
    });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(rpc.transactions.get(data.signature)?.err).toBeNull();
    expect(rpc.account(data.pdaAddress)?.owner).toBe(rpc.programId);
    expect(data.listing.status).toBe('published');

    // On chain now: the Pricing view cannot change its terms, though nobody holds a credential.
    const pricing = {
      accessModel: 'per_query',
      price: 0.002,
      subscriptionDays: null,
      retrievalRateLimit: 60,
      domain: '',
      tags: [],
    };
    const repriced = await call(chain, `/studio/listings/${id}/pricing`, 'PUT', pricing);
    expect(repriced.status).toBe(409);
    expect((await json(repriced)).error).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/^price: .*the program on chain cannot change terms/),
    });
    const renamed = await call(chain, `/studio/listings/${id}/pricing`, 'PUT', {
      ...pricing,
      price: 0.001,
      domain: 'law',
    });
    expect(renamed.status).toBe(200);

    // Publishing again sends nothing and answers the listing as it is.
    const sent = rpc.calls('sendTransaction').length;
    const again = await call(chain, `/studio/listings/${id}/publish`, 'POST');
    expect(again.status).toBe(200);
    expect((await json(again)).data).toMatchObject({ id, status: 'published', pdaAddress: data.pdaAddress });
    expect(rpc.calls('sendTransaction')).toHaveLength(sent);
  });
});
