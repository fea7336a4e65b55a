import { PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/core/wallets/keypair';
import { json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let address: string;
beforeAll(async () => {
  studio = await startStudio();
  address = studio.services.wallets.defaultWallet().address;
});
afterAll(() => studio.close());

const post = (path: string, body: unknown, token: string | null = studio.studioToken) =>
  fetch(studio.url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { 'X-Studio-Token': token } : {}) },
    body: JSON.stringify(body),
  });

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const otherKey = new PublicKey(new Uint8Array(32).fill(9));

function transfer(payer: PublicKey): Transaction {
  return new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(new Uint8Array(32).fill(7)) }).add(
    SystemProgram.transfer({ fromPubkey: payer, toPubkey: otherKey, lamports: 1_000 }),
  );
}
const serialized = (tx: Transaction) =>
  b64(tx.serialize({ requireAllSignatures: false, verifySignatures: false }));

describe('POST /studio/wallets/:address/sign-message', () => {
  it('signs with the held wallet and never returns its secret', async () => {
    const message = new TextEncoder().encode('kbs-ledger:v1:revoke_access:lst_x');
    const res = await post(`/studio/wallets/${address}/sign-message`, { message: b64(message) });
    expect(res.status).toBe(200);
    const text = await res.text();
    const { data } = JSON.parse(text);
    expect(data.address).toBe(address);
    expect(verifySignature(address, message, bs58.decode(data.signature))).toBe(true);
    const secret = studio.services.wallets.secretKeyOf(address);
    expect(text).not.toContain(bs58.encode(secret));
    expect(text).not.toContain(b64(secret));
  });

  it('answers 404 for a wallet the studio does not hold', async () => {
    const res = await post(`/studio/wallets/${otherKey.toBase58()}/sign-message`, {
      message: b64(new Uint8Array([1])),
    });
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toContain(otherKey.toBase58());
  });

  it('answers 400 naming the field for a message over 64 KB, empty or not base64', async () => {
    for (const message of [b64(new Uint8Array(64 * 1024 + 1)), '', 'not base64!', 'abc']) {
      const res = await post(`/studio/wallets/${address}/sign-message`, { message });
      expect(res.status, message.slice(0, 20)).toBe(400);
      const body = await json(res);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message).toMatch(/message/);
    }
    const atLimit = await post(`/studio/wallets/${address}/sign-message`, {
      message: b64(new Uint8Array(64 * 1024)),
    });
    expect(atLimit.status).toBe(200);
  });

  it('answers 400 for an address that is not base58, and 401 without the studio token', async () => {
    const bad = await post('/studio/wallets/not-an-address/sign-message', { message: 'AQ==' });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toMatch(/address/);
    const anonymous = await post(`/studio/wallets/${address}/sign-message`, { message: 'AQ==' }, null);
    expect(anonymous.status).toBe(401);
  });
});

describe('POST /studio/wallets/:address/sign-transaction', () => {
  it('adds a valid signature of the held wallet', async () => {
    const res = await post(`/studio/wallets/${address}/sign-transaction`, {
      transaction: serialized(transfer(new PublicKey(address))),
    });
    expect(res.status).toBe(200);
    const { data } = await json(res);
    const signed = Transaction.from(Buffer.from(data.transaction, 'base64'));
    expect(signed.signatures.map((s) => s.publicKey.toBase58())).toEqual([address]);
    expect(signed.verifySignatures()).toBe(true);
  });

  it('partially signs a transaction that another key must also sign', async () => {
    const tx = transfer(otherKey).add(
      SystemProgram.transfer({ fromPubkey: new PublicKey(address), toPubkey: otherKey, lamports: 1 }),
    );
    const res = await post(`/studio/wallets/${address}/sign-transaction`, { transaction: serialized(tx) });
    expect(res.status).toBe(200);
    const signed = Transaction.from(Buffer.from((await json(res)).data.transaction, 'base64'));
    const ours = signed.signatures.find((s) => s.publicKey.toBase58() === address)!;
    const payer = signed.signatures.find((s) => s.publicKey.equals(otherKey))!;
    expect(verifySignature(address, signed.serializeMessage(), ours.signature!)).toBe(true);
    expect(payer.signature).toBeNull();
    expect(signed.verifySignatures(false)).toBe(true);
  });

  it('answers 400 for bytes that are not a transaction, or one this wallet need not sign', async () => {
    const garbage = await post(`/studio/wallets/${address}/sign-transaction`, {
      transaction: b64(new Uint8Array([1, 2, 3])),
    });
    expect(garbage.status).toBe(400);
    expect((await json(garbage)).error.message).toMatch(/^transaction: /);

    const notOurs = await post(`/studio/wallets/${address}/sign-transaction`, {
      transaction: serialized(transfer(otherKey)),
    });
    expect(notOurs.status).toBe(400);
    expect((await json(notOurs)).error.message).toBe(
      `transaction: wallet ${address} is not one of its signers.`,
    );

    const huge = await post(`/studio/wallets/${address}/sign-transaction`, {
      transaction: b64(new Uint8Array(2000)),
    });
    expect(huge.status).toBe(400);
    expect((await json(huge)).error.message).toMatch(/transaction/);
  });

  it('answers 404 for a wallet the studio does not hold', async () => {
    const res = await post(`/studio/wallets/${otherKey.toBase58()}/sign-transaction`, {
      transaction: serialized(transfer(otherKey)),
    });
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe('not_found');
  });
});
