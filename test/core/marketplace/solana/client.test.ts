import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CREDENTIAL_ACCOUNT_SPACE,
  LISTING_ACCOUNT_SPACE,
  SolanaProgramClient,
  SolanaRpcError,
  SolanaRpcUnavailable,
  TransactionRejected,
  createListingInstruction,
  withdrawEarningsInstruction,
  credentialPda,
  listingPda,
  type ProgramSigner,
} from '../../../../src/core/marketplace/solana';
import { generateKeypair, signMessage } from '../../../../src/core/wallets/keypair';
import {
  FEE_LAMPORTS_PER_SIGNATURE,
  rentExempt,
  startFakeSolanaRpc,
  type FakeSolanaRpc,
} from '../../../helpers/fakeSolanaRpc';

const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z
const DAY = 86_400;
const SOL = 1_000_000_000n;
const FEE = FEE_LAMPORTS_PER_SIGNATURE;
const LISTING_RENT = rentExempt(LISTING_ACCOUNT_SPACE);
const CREDENTIAL_RENT = rentExempt(CREDENTIAL_ACCOUNT_SPACE);

let fake: FakeSolanaRpc;
let client: SolanaProgramClient;
let creator: ProgramSigner;
let buyer: ProgramSigner;

const newSigner = (): ProgramSigner => {
  const { address, secretKey } = generateKeypair();
  return { publicKey: address, secretKey };
};
const addr = (s: ProgramSigner) => String(s.publicKey);

async function rejection(promise: Promise<unknown>): Promise<TransactionRejected> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TransactionRejected);
  return error as TransactionRejected;
}

beforeEach(async () => {
  fake = await startFakeSolanaRpc({ time: T0 });
  client = new SolanaProgramClient({
    rpcUrl: fake.url,
    pollIntervalMs: 5,
    timeoutMs: 2_000,
    now: () => new Date(fake.time * 1000),
  });
  creator = newSigner();
  buyer = newSigner();
  await client.requestAirdrop(addr(creator), 10n * SOL);
  await client.requestAirdrop(addr(buyer), 10n * SOL);
});

afterEach(async () => {
  expect(fake.unknownMethods).toEqual([]);
  await fake.close();
});

describe('SolanaProgramClient against a local JSON-RPC node', () => {
  it('airdrops and reads balances', async () => {
    expect(await client.getBalance(addr(creator))).toBe(10n * SOL);
    expect(await client.getBalance(Keypair.generate().publicKey)).toBe(0n);
  });

  it('creates a listing at its PDA, signed by the creator who pays rent and fee', async () => {
    const sent = await client.createListing(creator, {
      listingId: 'lst_4fQx9KpZ2mTa7bWc',
      accessModel: 'subscription',
      priceLamports: SOL / 4n,
      subscriptionDays: 30,
    });
    expect(sent.address).toBe(
      listingPda(client.programId, addr(creator), 'lst_4fQx9KpZ2mTa7bWc')[0].toBase58(),
    );
    expect(sent.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
    expect(await client.getListing(sent.address)).toEqual({
      address: sent.address,
      lamports: Number(LISTING_RENT),
      creator: addr(creator),
      listingId: 'lst_4fQx9KpZ2mTa7bWc',
      accessModel: 'subscription',
      priceLamports: 250_000_000n,
      subscriptionDays: 30,
      earnedLamports: 0n,
      withdrawnLamports: 0n,
      bump: listingPda(client.programId, addr(creator), 'lst_4fQx9KpZ2mTa7bWc')[1],
    });
    expect(await client.getBalance(addr(creator))).toBe(10n * SOL - LISTING_RENT - FEE);

    // Wire checks: a base64 wire transaction with preflight, then polling until 'confirmed'.
    const [send] = fake.calls('sendTransaction');
    expect(send!.params[1]).toMatchObject({ encoding: 'base64', preflightCommitment: 'confirmed' });
    expect(fake.calls('getSignatureStatuses').length).toBeGreaterThanOrEqual(2);
    expect(fake.transactions.get(sent.signature)?.logs).toContain('Program log: Instruction: CreateListing');
  });

  it('sells a subscription by periods, extends it, and reports it expired once the clock passes', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_sub',
      accessModel: 'subscription',
      priceLamports: SOL / 10n,
      subscriptionDays: 30,
    });
    const bought = await client.purchaseAccess(buyer, { listing, periods: 2 });
    expect(bought.address).toBe(credentialPda(client.programId, listing, addr(buyer))[0].toBase58());
    expect(await client.getCredential(listing, addr(buyer))).toMatchObject({
      address: bought.address,
      listing,
      holder: addr(buyer),
      accessModel: 'subscription',
      expiresAt: T0 + 60 * DAY,
      balanceLamports: 0n,
      createdAt: T0,
    });
    expect(await client.getBalance(addr(buyer))).toBe(10n * SOL - CREDENTIAL_RENT - 2n * (SOL / 10n) - FEE);
    expect((await client.getListing(listing))!.earnedLamports).toBe(2n * (SOL / 10n));
    expect((await client.getListing(listing))!.lamports).toBe(Number(LISTING_RENT + 2n * (SOL / 10n)));

    await client.purchaseAccess(buyer, { listing, periods: 1 });
    expect((await client.getCredential(listing, addr(buyer)))!.expiresAt).toBe(T0 + 90 * DAY);
    expect(await client.verifyCredential(listing, addr(buyer))).toMatchObject({
      status: 'active',
      valid: true,
      expiresAt: new Date((T0 + 90 * DAY) * 1000).toISOString(),
    });

    fake.time = T0 + 90 * DAY + 1;
    expect(await client.verifyCredential(listing, addr(buyer))).toMatchObject({
      status: 'expired',
      valid: false,
    });
  });

  it('asks the program itself through a simulated verify_access (return data, no fee)', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_ver',
      accessModel: 'subscription',
      priceLamports: 1000n,
      subscriptionDays: 7,
    });
    expect(await client.simulateVerifyAccess(listing, addr(buyer))).toBeNull();
    await client.purchaseAccess(buyer, { listing, periods: 1 });
    const balance = await client.getBalance(addr(buyer));
    expect(await client.simulateVerifyAccess(listing, addr(buyer))).toEqual({
      status: 'active',
      expiresAt: T0 + 7 * DAY,
      balanceLamports: 0n,
    });
    fake.time = T0 + 8 * DAY;
    expect((await client.simulateVerifyAccess(listing, addr(buyer)))!.status).toBe('expired');
    expect(await client.getBalance(addr(buyer))).toBe(balance);
    const [simulated] = fake.calls('simulateTransaction');
    expect(simulated!.params[1]).toMatchObject({
      encoding: 'base64',
      sigVerify: false,
      replaceRecentBlockhash: true,
    });
  });

  it('takes a per_query deposit, tops it up, and refuses a deposit below one query', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_pq',
      accessModel: 'per_query',
      priceLamports: 1_000_000n,
    });
    await client.purchaseAccess(buyer, { listing, depositLamports: 5_000_000n });
    expect(await client.getCredential(listing, addr(buyer))).toMatchObject({
      accessModel: 'per_query',
      expiresAt: 0,
      balanceLamports: 5_000_000n,
    });
    await client.purchaseAccess(buyer, { listing, depositLamports: 2_000_000n });
    const verification = await client.verifyCredential(listing, addr(buyer));
    expect(verification).toMatchObject({ status: 'active', valid: true, expiresAt: null });
    expect(verification.credential!.balanceLamports).toBe(7_000_000n);
    expect(verification.listing!.earnedLamports).toBe(7_000_000n);

    const low = await rejection(client.purchaseAccess(buyer, { listing, depositLamports: 999_999n }));
    expect(low.code).toBe('invalid_request');
    expect(low.programError).toMatchObject({ code: 6003, name: 'InvalidDeposit' });
    expect(low.message).toMatch(
      /refused by program \w+: InvalidDeposit \(6003\): deposit_lamports must be 0 unless/,
    );
    expect(low.logs.some((l) => l.includes('Error Number: 6003'))).toBe(true);

    const periods = await rejection(
      client.purchaseAccess(buyer, { listing, periods: 1, depositLamports: 1_000_000n }),
    );
    expect(periods.programError?.name).toBe('InvalidPeriods');
  });

  it('sells one_time access once: a second purchase is a conflict', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_once',
      accessModel: 'one_time',
      priceLamports: SOL,
    });
    await client.purchaseAccess(buyer, { listing });
    expect(await client.verifyCredential(listing, addr(buyer))).toMatchObject({
      status: 'active',
      expiresAt: null,
    });
    const again = await rejection(client.purchaseAccess(buyer, { listing }));
    expect(again.code).toBe('conflict');
    expect(again.programError?.name).toBe('AlreadyPurchased');
    expect(await client.getBalance(addr(buyer))).toBe(10n * SOL - CREDENTIAL_RENT - SOL - FEE);
  });

  it('revokes: by the holder (rent back, then not found), by the creator, never by a stranger', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_rev',
      accessModel: 'one_time',
      priceLamports: 1000n,
    });
    await client.purchaseAccess(buyer, { listing });
    const before = await client.getBalance(addr(buyer));

    const stranger = newSigner();
    await client.requestAirdrop(addr(stranger), SOL);
    const refused = await rejection(client.revokeAccess(stranger, { listing, holder: addr(buyer) }));
    expect(refused.code).toBe('forbidden');
    expect(refused.programError?.name).toBe('Unauthorized');

    await client.revokeAccess(buyer, { listing });
    expect(await client.getCredential(listing, addr(buyer))).toBeNull();
    expect(await client.getBalance(addr(buyer))).toBe(before + CREDENTIAL_RENT - FEE);
    expect(await client.verifyCredential(listing, addr(buyer))).toMatchObject({
      status: 'not_found',
      valid: false,
      credential: null,
      pdaAddress: credentialPda(client.programId, listing, addr(buyer))[0].toBase58(),
    });
    const missing = await rejection(client.revokeAccess(buyer, { listing }));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toMatch(/AccountNotInitialized \(3012\).*\[account: credential\]/);

    await client.purchaseAccess(buyer, { listing });
    await client.revokeAccess(creator, { listing, holder: addr(buyer) });
    expect(await client.getCredential(listing, addr(buyer))).toBeNull();
  });

  it('withdraws earnings to the creator, within what was earned, only for the creator', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_earn',
      accessModel: 'one_time',
      priceLamports: 3n * SOL,
    });
    await client.purchaseAccess(buyer, { listing });
    const before = await client.getBalance(addr(creator));
    await client.withdrawEarnings(creator, { listing, amountLamports: 2n * SOL });
    expect(await client.getBalance(addr(creator))).toBe(before + 2n * SOL - FEE);
    expect(await client.getListing(listing)).toMatchObject({
      earnedLamports: 3n * SOL,
      withdrawnLamports: 2n * SOL,
      lamports: Number(LISTING_RENT + SOL),
    });
    const tooMuch = await rejection(client.withdrawEarnings(creator, { listing, amountLamports: SOL + 1n }));
    expect(tooMuch.programError?.name).toBe('InsufficientEarnings');
    expect(tooMuch.code).toBe('conflict');
    const notCreator = await rejection(client.withdrawEarnings(buyer, { listing, amountLamports: 1n }));
    expect(notCreator.code).toBe('forbidden');
    expect(notCreator.programError?.name).toBe('ConstraintHasOne');
  });

  it('maps a purchase of a listing that does not exist to listing_not_found', async () => {
    const [listing] = listingPda(client.programId, addr(creator), 'lst_nope');
    const error = await rejection(client.purchaseAccess(buyer, { listing }));
    expect(error.code).toBe('listing_not_found');
  });

  it('refuses a wallet without SOL clearly, and one with too little for the price', async () => {
    const poor = newSigner();
    const noFee = await rejection(
      client.createListing(poor, { listingId: 'lst_p', accessModel: 'one_time', priceLamports: 1n }),
    );
    expect(noFee.code).toBe('invalid_request');
    // Which wallet to fund: the one that pays the fee.
    expect(noFee.message).toContain(`the fee payer ${addr(poor)} has no SOL`);

    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_dear',
      accessModel: 'one_time',
      priceLamports: 100n * SOL,
    });
    const short = await rejection(client.purchaseAccess(buyer, { listing }));
    expect(short.message).toMatch(/refused by the System Program: ResultWithNegativeLamports/);
    expect(await client.getCredential(listing, addr(buyer))).toBeNull();
  });

  it('reads accounts seeded straight into the node (the other ledger’s "account present" case)', async () => {
    const listing = fake.seedListing({
      creator: addr(creator),
      listingId: 'lst_seed',
      accessModel: 'per_query',
      priceLamports: 10n,
    });
    fake.seedCredential({ listing, holder: addr(buyer), accessModel: 'per_query', balanceLamports: 5n });
    expect(await client.verifyCredential(listing, addr(buyer))).toMatchObject({
      status: 'low_balance',
      valid: false,
      credential: { balanceLamports: 5n, holder: addr(buyer) },
    });
  });

  it('treats lamports sent to an uninitialized PDA as no account, and a foreign-owned one as an error', async () => {
    const [listing] = listingPda(client.programId, addr(creator), 'lst_x');
    fake.setAccount(listing.toBase58(), { lamports: 5000 });
    expect(await client.getListing(listing)).toBeNull();
    fake.setAccount(listing.toBase58(), {
      lamports: 5000,
      data: Buffer.alloc(10),
      owner: Keypair.generate().publicKey.toBase58(),
    });
    await expect(client.getListing(listing)).rejects.toThrow(/is owned by \w+, not the marketplace program/);
  });

  it('refuses a signer whose secret does not match its address', async () => {
    const other = newSigner();
    await expect(
      client.createListing(
        { publicKey: addr(other), secretKey: buyer.secretKey },
        {
          listingId: 'lst_m',
          accessModel: 'one_time',
          priceLamports: 1n,
        },
      ),
    ).rejects.toThrow(`signer: the secret key belongs to ${addr(buyer)}, not ${addr(other)}.`);
    await expect(
      client.createListing(
        { publicKey: addr(buyer), secretKey: new Uint8Array(10) },
        {
          listingId: 'lst_m',
          accessModel: 'one_time',
          priceLamports: 1n,
        },
      ),
    ).rejects.toThrow(/not a 64-byte Solana keypair/);
  });
});

describe('the fake node refuses forged transactions', () => {
  it('rejects a transaction whose signature does not match its message, and applies nothing', async () => {
    const connection = new Connection(fake.url, 'confirmed');
    const keypair = Keypair.fromSecretKey(creator.secretKey);
    const { blockhash } = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: keypair.publicKey, recentBlockhash: blockhash }).add(
      createListingInstruction(client.programId, {
        creator: keypair.publicKey,
        listingId: 'lst_forged',
        accessModel: 'one_time',
        priceLamports: 1n,
      }),
    );
    tx.sign(keypair);
    const wire = tx.serialize();
    // Flip the last byte of the message (the end of the instruction data), leaving the signature.
    wire[wire.length - 1] = wire[wire.length - 1]! ^ 0xff;
    await expect(connection.sendRawTransaction(wire)).rejects.toThrow(/signature verification failure/);
    // Signed by someone else entirely: the creator's slot carries the buyer's signature of the message.
    const forged = new Transaction({ feePayer: keypair.publicKey, recentBlockhash: blockhash }).add(
      createListingInstruction(client.programId, {
        creator: keypair.publicKey,
        listingId: 'lst_forged',
        accessModel: 'one_time',
        priceLamports: 1n,
      }),
    );
    forged.addSignature(
      keypair.publicKey,
      Buffer.from(signMessage(buyer.secretKey, forged.serializeMessage())),
    );
    await expect(
      connection.sendRawTransaction(forged.serialize({ verifySignatures: false })),
    ).rejects.toThrow(/signature verification failure/);
    const [listing] = listingPda(client.programId, keypair.publicKey, 'lst_forged');
    expect(fake.account(listing.toBase58())).toBeUndefined();
    expect(await client.getBalance(keypair.publicKey)).toBe(10n * SOL);
  });
});

describe('confirmation', () => {
  it('reports a transaction that landed and failed (sent without preflight) with the program error', async () => {
    const { address: listing } = await client.createListing(creator, {
      listingId: 'lst_land',
      accessModel: 'one_time',
      priceLamports: 1n,
    });
    const keypair = Keypair.fromSecretKey(creator.secretKey);
    const { blockhash } = await client.connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: keypair.publicKey, recentBlockhash: blockhash }).add(
      withdrawEarningsInstruction(client.programId, {
        creator: keypair.publicKey,
        listing,
        amountLamports: 5n,
      }),
    );
    tx.sign(keypair);
    const signature = await client.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const error = await rejection(client.confirm(signature));
    expect(error.programError).toMatchObject({ code: 6007, name: 'InsufficientEarnings' });
    expect(error.message).toMatch(new RegExp(`^Transaction ${signature} was refused by program`));
  });

  it('gives up when the signature never reaches the commitment', async () => {
    const patient = new SolanaProgramClient({ rpcUrl: fake.url, pollIntervalMs: 5, confirmTimeoutMs: 100 });
    await expect(patient.confirm('1'.repeat(64))).rejects.toThrow(
      /was not confirmed: it did not reach 'confirmed' within 100 ms/,
    );
  });
});

describe('an RPC that cannot be reached', () => {
  it('fails fast with SolanaRpcUnavailable naming the URL when nothing listens', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const dead = new SolanaProgramClient({ rpcUrl: `http://127.0.0.1:${port}`, timeoutMs: 1_000 });
    const started = Date.now();
    const error = await dead.getCredential(PublicKey.unique(), PublicKey.unique()).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error).toBeInstanceOf(SolanaRpcUnavailable);
    expect((error as SolanaRpcUnavailable).code).toBe('ledger_unavailable');
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Solana RPC http://127\\.0\\.0\\.1:${port} is unavailable \\(getAccountInfo: .*(fetch failed|ECONNREFUSED)`,
      ),
    );
    // A local URL: the validator is most likely not started; the message says so and where to switch.
    expect((error as Error).message).toMatch(
      /Nothing answers there: start a local validator \(`solana-test-validator`\), or choose another network \(studio: Wallet → Network; CLI: `kbstudio settings set solana\.rpcUrl <url>` or SOLANA_RPC_URL\)\.$/,
    );
    expect(
      new SolanaRpcUnavailable('https://api.devnet.solana.com', 'getBalance', 'fetch failed').message,
    ).toMatch(/\(getBalance: fetch failed\)\. Check the connection to it, or choose another network/);
  });

  it('gives up on a node that never answers after timeoutMs', async () => {
    fake.hang = true;
    const slow = new SolanaProgramClient({ rpcUrl: fake.url, timeoutMs: 300 });
    const started = Date.now();
    await expect(
      slow.createListing(creator, { listingId: 'lst_t', accessModel: 'one_time', priceLamports: 1n }),
    ).rejects.toThrow(/is unavailable \(getLatestBlockhash: no answer within 300 ms\)/);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('tells an HTTP 503 (unavailable) from a JSON-RPC error (answered, refused)', async () => {
    // First a 503 with a text body, then a JSON-RPC error answering the request's id.
    let overloaded = true;
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (overloaded) {
          res.writeHead(503, { 'Content-Type': 'text/plain' });
          return res.end('upstream down');
        }
        const { id } = JSON.parse(body) as { id: string };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            error: { code: -32005, message: 'Node is behind by 42 slots' },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const remote = new SolanaProgramClient({ rpcUrl: url, timeoutMs: 1_000 });
      await expect(remote.getBalance(addr(buyer))).rejects.toThrow(
        new RegExp(
          `^Solana RPC ${url} is unavailable \\(getBalance: .*503 Service Unavailable: upstream down\\)`,
        ),
      );
      overloaded = false;
      const error = await remote.getBalance(addr(buyer)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SolanaRpcError);
      expect((error as Error).message).toMatch(
        new RegExp(`^Solana RPC ${url} refused getBalance: .*Node is behind by 42 slots`),
      );
    } finally {
      server.close();
    }
  });

  it('never quotes the key of an RPC URL (query or path), even when the node echoes the URL', async () => {
    const pathKey = 'Ab3dEf7hIj9kLm1nOp';
    const queryKey = '9f8e7d6c-5b4a-4321-a1b2';
    let refuse = false;
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (!refuse) {
          res.writeHead(503, { 'Content-Type': 'text/plain' });
          return res.end(`rate limited for ${req.url}`);
        }
        const { id } = JSON.parse(body) as { id: string };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: `bad key ${queryKey}` } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as { port: number }).port}`;
    const rpcUrl = `http://${host}/v2/${pathKey}?api-key=${queryKey}`;
    try {
      const remote = new SolanaProgramClient({ rpcUrl, timeoutMs: 1_000 });
      const unavailable = (await remote
        .getBalance(addr(buyer))
        .catch((e: unknown) => e)) as SolanaRpcUnavailable;
      expect(unavailable).toBeInstanceOf(SolanaRpcUnavailable);
      refuse = true;
      const refused = (await remote.getBalance(addr(buyer)).catch((e: unknown) => e)) as SolanaRpcError;
      expect(refused).toBeInstanceOf(SolanaRpcError);
      for (const error of [unavailable, refused]) {
        const quoted = JSON.stringify({ message: error.message, details: error.details });
        expect(quoted).not.toContain(pathKey);
        expect(quoted).not.toContain(queryKey);
        expect(error.message).toContain(`Solana RPC http://${host}/v2/••••?api-key=•••• `);
        expect(error.details).toMatchObject({ rpcUrl: `http://${host}/v2/••••?api-key=••••` });
        // The client itself still talks to the whole URL.
        expect(error.rpcUrl).toBe(rpcUrl);
      }
      expect(unavailable.message).toMatch(/rate limited for \/v2\/••••\?api-key=••••/);
      expect(refused.message).toMatch(/bad key ••••$/);
    } finally {
      server.close();
    }
  });

  it('refuses an RPC URL that is not http(s)', () => {
    expect(() => new SolanaProgramClient({ rpcUrl: 'ws://localhost:8900' })).toThrow(
      "solana.rpcUrl: 'ws://localhost:8900' must be an http(s) URL.",
    );
  });
});
