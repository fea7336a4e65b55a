import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { Buffer } from 'buffer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PreparedListingTransaction, SubmittedListingTransaction } from '../../../src/shared/studio';
import { signAndSubmitListing } from '../../../src/renderer/src/lib/wallet/signListing';
import {
  createStudioWalletTransport,
  StudioWalletAdapter,
} from '../../../src/renderer/src/lib/wallet/studioWalletAdapter';

interface RealStudio {
  url: string;
  studioToken: string;
  services: {
    wallets: { defaultWallet(): { address: string } };
    listings: {
      create(input: Record<string, unknown>, wallet: string): { id: string };
      get(id: string, viewer: 'studio'): { status: string; pdaAddress: string | null };
    };
  };
  close(): Promise<void>;
}

// As in studioWalletAdapter.test.ts: the web project cannot type-check server code, so it is loaded at run time.
const studioHelpers: string = '../../helpers/studio';
const { startStudio } = (await import(/* @vite-ignore */ studioHelpers)) as {
  startStudio(): Promise<RealStudio>;
};

let studio: RealStudio;
let creator: string;
beforeAll(async () => {
  studio = await startStudio();
  creator = studio.services.wallets.defaultWallet().address;
});
afterAll(() => studio.close());

const post = async <T>(path: string, body?: unknown): Promise<T> => {
  const res = await fetch(studio.url + path, {
    method: 'POST',
    headers: { 'X-Studio-Token': studio.studioToken, 'Content-Type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const json = (await res.json()) as { data: T; error?: { message: string } };
  if (!res.ok) throw new Error(json.error!.message);
  return json.data;
};

const prepare = (listingId: string) =>
  post<PreparedListingTransaction>(`/studio/listings/${listingId}/create-listing-transaction`);
const submitter = (listingId: string) => (transaction: string) =>
  post<SubmittedListingTransaction>(`/studio/listings/${listingId}/create-listing-transaction/submit`, {
    transaction,
  });

describe('signing create_listing through a wallet adapter', () => {
  it('signs with the studio wallet adapter; the studio verifies, records and publishes', async () => {
    const { id } = studio.services.listings.create(
      { title: 'Signed', accessModel: 'one_time', price: 3 },
      creator,
    );
    const adapter = new StudioWalletAdapter({
      transport: createStudioWalletTransport({ token: studio.studioToken, baseUrl: studio.url }),
    });
    await adapter.connect();
    const prepared = await prepare(id);
    const result = await signAndSubmitListing(adapter, prepared, submitter(id));
    expect(result.pdaAddress).toBe(prepared.summary.listingPda);
    expect(result.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/);
    expect(studio.services.listings.get(id, 'studio')).toMatchObject({
      status: 'published',
      pdaAddress: prepared.summary.listingPda,
    });
  });

  it('refuses a wallet that is not the listing’s creator before asking it to sign', async () => {
    const { id } = studio.services.listings.create(
      { title: 'Other', accessModel: 'one_time', price: 1 },
      creator,
    );
    const stranger = Keypair.generate();
    let asked = false;
    const signer = {
      name: 'Phantom',
      publicKey: stranger.publicKey,
      signTransaction: async <T>(tx: T) => ((asked = true), tx),
    };
    await expect(signAndSubmitListing(signer, await prepare(id), submitter(id))).rejects.toThrow(
      `Phantom is connected as ${stranger.publicKey.toBase58()}, but this listing was created by ${creator}`,
    );
    expect(asked).toBe(false);
    const noSigning = { name: 'Watch-only', publicKey: new PublicKey(creator) };
    await expect(signAndSubmitListing(noSigning, await prepare(id), submitter(id))).rejects.toThrow(
      'Watch-only cannot sign transactions.',
    );
  });

  it('surfaces the studio’s refusal of a signature that does not verify', async () => {
    const { id } = studio.services.listings.create(
      { title: 'Forged', accessModel: 'one_time', price: 1 },
      creator,
    );
    const forger = {
      name: 'Forger',
      publicKey: new PublicKey(creator),
      signTransaction: async (tx: Transaction) => {
        tx.addSignature(new PublicKey(creator), Buffer.from(new Uint8Array(64).fill(1)));
        return tx;
      },
    };
    await expect(signAndSubmitListing(forger, await prepare(id), submitter(id))).rejects.toThrow(
      'does not verify',
    );
  });
});
