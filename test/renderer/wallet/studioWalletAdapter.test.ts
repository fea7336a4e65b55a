import {
  WalletAccountError,
  WalletNotConnectedError,
  WalletReadyState,
  WalletSignMessageError,
  type WalletError,
} from '@solana/wallet-adapter-base';
import { type Connection, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createStudioWalletTransport,
  StudioWalletAdapter,
  type StudioWalletTransport,
} from '../../../src/renderer/src/lib/wallet/studioWalletAdapter';

/** The part of test/helpers/studio.ts this test uses. */
interface RealStudio {
  url: string;
  studioToken: string;
  services: {
    wallets: {
      defaultWallet(): { address: string };
      create(name: string): { address: string };
      show(name: string): { address: string };
    };
  };
  close(): Promise<void>;
}

// The web project type-checks this folder and cannot hold server code, so the real studio and the
// core verifier are loaded at run time (specifiers in variables keep tsc from following them).
const studioHelpers: string = '../../helpers/studio';
const coreKeypair: string = '../../../src/core/wallets/keypair';
const { startStudio } = (await import(/* @vite-ignore */ studioHelpers)) as {
  startStudio(): Promise<RealStudio>;
};
const { verifySignature } = (await import(/* @vite-ignore */ coreKeypair)) as {
  verifySignature(address: string, message: Uint8Array, signature: Uint8Array): boolean;
};

let studio: RealStudio;
let transport: StudioWalletTransport;
let defaultAddress: string;
beforeAll(async () => {
  studio = await startStudio();
  transport = createStudioWalletTransport({ token: studio.studioToken, baseUrl: studio.url });
  defaultAddress = studio.services.wallets.defaultWallet().address;
  studio.services.wallets.create('second');
});
afterAll(() => studio.close());

/** The adapter with its events recorded, as a wallet-adapter UI would listen to them. */
function adapterWithEvents(address?: string) {
  const adapter = new StudioWalletAdapter({ transport, address });
  const events: string[] = [];
  const errors: WalletError[] = [];
  adapter.on('connect', (key) => events.push(`connect ${key.toBase58()}`));
  adapter.on('disconnect', () => events.push('disconnect'));
  adapter.on('error', (err) => errors.push(err));
  return { adapter, events, errors };
}

/** Plain ed25519 verification with Node's WebCrypto, independent of the studio's helpers. */
async function ed25519Verify(address: string, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const key = await crypto.subtle.importKey(
    'raw',
    new Uint8Array(bs58.decode(address)),
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  return crypto.subtle.verify({ name: 'Ed25519' }, key, new Uint8Array(signature), new Uint8Array(message));
}

function transferFrom(payer: PublicKey): Transaction {
  const tx = new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(new Uint8Array(32).fill(7)) });
  tx.add(
    SystemProgram.transfer({
      fromPubkey: payer,
      toPubkey: new PublicKey(new Uint8Array(32).fill(3)),
      lamports: 5000,
    }),
  );
  return tx;
}

describe('StudioWalletAdapter', () => {
  it('connects to the default wallet and emits connect, then disconnect', async () => {
    const { adapter, events, errors } = adapterWithEvents();
    expect(adapter.name).toBe('KB Studio wallet');
    expect(adapter.readyState).toBe(WalletReadyState.Installed);
    expect(adapter.icon).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(adapter.connected).toBe(false);

    await adapter.connect();
    expect(adapter.publicKey?.toBase58()).toBe(defaultAddress);
    expect(adapter.connected).toBe(true);

    await adapter.disconnect();
    expect(adapter.publicKey).toBeNull();
    expect(adapter.connected).toBe(false);
    expect(events).toEqual([`connect ${defaultAddress}`, 'disconnect']);
    expect(errors).toEqual([]);
  });

  it('connects to a chosen wallet by address', async () => {
    const second = studio.services.wallets.show('second').address;
    const { adapter } = adapterWithEvents(second);
    await adapter.connect();
    expect(adapter.publicKey?.toBase58()).toBe(second);
    expect(second).not.toBe(defaultAddress);
  });

  it('signs a ledger message with the studio wallet, verifiable as plain ed25519', async () => {
    const { adapter } = adapterWithEvents();
    await adapter.connect();
    const message = new TextEncoder().encode(`kbs-ledger:v1:purchase_access:lst_abc:${defaultAddress}:1`);
    const signature = await adapter.signMessage(message);

    expect(signature).toHaveLength(64);
    expect(verifySignature(defaultAddress, message, signature)).toBe(true);
    expect(await ed25519Verify(defaultAddress, message, signature)).toBe(true);
    const tampered = message.slice();
    tampered[0] = tampered[0]! ^ 1;
    expect(await ed25519Verify(defaultAddress, tampered, signature)).toBe(false);
  });

  it('signs a legacy transaction in place; its signatures verify for that key', async () => {
    const { adapter } = adapterWithEvents();
    await adapter.connect();
    const tx = transferFrom(adapter.publicKey!);
    const signed = await adapter.signTransaction(tx);

    expect(signed).toBe(tx);
    expect(tx.signature).not.toBeNull();
    expect(tx.verifySignatures()).toBe(true);
    expect(await ed25519Verify(defaultAddress, tx.serializeMessage(), tx.signature!)).toBe(true);

    const [a, b] = await adapter.signAllTransactions([
      transferFrom(adapter.publicKey!),
      transferFrom(adapter.publicKey!),
    ]);
    expect(a!.verifySignatures()).toBe(true);
    expect(b!.verifySignatures()).toBe(true);
  });

  it('sends through the given connection after signing with the studio (sendTransaction)', async () => {
    const { adapter } = adapterWithEvents();
    await adapter.connect();
    const sent: Uint8Array[] = [];
    const connection = {
      getLatestBlockhash: async () => ({
        blockhash: bs58.encode(new Uint8Array(32).fill(5)),
        lastValidBlockHeight: 1,
      }),
      sendRawTransaction: async (raw: Uint8Array) => {
        sent.push(raw);
        return 'sent-signature';
      },
    } as unknown as Connection;
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: adapter.publicKey!, toPubkey: adapter.publicKey!, lamports: 1 }),
    );

    expect(await adapter.sendTransaction(tx, connection)).toBe('sent-signature');
    const onWire = Transaction.from(sent[0]!);
    expect(onWire.feePayer?.toBase58()).toBe(defaultAddress);
    expect(onWire.verifySignatures()).toBe(true);
  });

  it('fails to connect to an address the studio does not hold, with the adapter error', async () => {
    const unknown = new PublicKey(new Uint8Array(32).fill(9)).toBase58();
    const { adapter, events, errors } = adapterWithEvents(unknown);
    await expect(adapter.connect()).rejects.toThrow(WalletAccountError);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(unknown);
    expect(adapter.connected).toBe(false);
    expect(events).toEqual([]);
  });

  it('refuses to sign before connecting', async () => {
    const { adapter, errors } = adapterWithEvents();
    await expect(adapter.signMessage(new Uint8Array([1, 2, 3]))).rejects.toThrow(WalletNotConnectedError);
    expect(errors[0]).toBeInstanceOf(WalletNotConnectedError);
  });

  it('reports a server refusal as a WalletSignMessageError carrying the server message', async () => {
    const { adapter, errors } = adapterWithEvents();
    await adapter.connect();
    const tooLong = new Uint8Array(64 * 1024 + 1);
    const error = await adapter.signMessage(tooLong).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(WalletSignMessageError);
    expect((error as Error).message).toMatch(/^message: /);
    expect(errors).toEqual([error]);
  });

  it('fails every call with a wrong studio token', async () => {
    const bad = createStudioWalletTransport({ token: 'wrong', baseUrl: studio.url });
    const adapter = new StudioWalletAdapter({ transport: bad });
    adapter.on('error', () => {});
    await expect(adapter.connect()).rejects.toThrow(/token/i);
  });
});
