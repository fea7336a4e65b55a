import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../../../src/core/wallets/keypair';
import { openServices, type StudioServices } from '../../../../src/db/services';
import type { Listing } from '../../../../src/shared/listings';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../../helpers/fakeSolanaRpc';
import { tempDir } from '../../../helpers/studio';

const SOL = 1_000_000_000;
const dir = tempDir('kbs-solana-ledger-');
let rpc: FakeSolanaRpc;
let services: StudioServices;
let creator: string;
let buyer: string;
let listing: Listing;

beforeAll(async () => {
  rpc = await startFakeSolanaRpc({ confirmAfterPolls: 0 });
  services = openServices(dir.path, { environment: { SOLANA_RPC_URL: rpc.url } });
  creator = services.wallets.defaultWallet().address;
  buyer = services.wallets.create('buyer').address;
  rpc.fund(creator, 10n * BigInt(SOL));
  rpc.fund(buyer, 10n * BigInt(SOL));
  const draft = services.listings.create({ title: 'On chain', accessModel: 'one_time', price: 0.5 }, creator);
  listing = await services.publishing.publish(draft.id);
});
afterAll(async () => {
  services.close();
  await rpc.close();
  dir.remove();
});

const sent = () => rpc.calls('sendTransaction').length;

describe('the Solana ledger (against the fake RPC)', () => {
  it('is chosen when solana.rpcUrl is set, and publishes with create_listing on chain', () => {
    expect(services.ledger.kind).toBe('solana');
    expect(listing.pdaAddress).toEqual(expect.any(String));
    expect(rpc.account(listing.pdaAddress!)?.owner).toBe(rpc.programId);
  });

  it('verifies a purchased credential on chain: account present → onChainVerified true', async () => {
    const { credential } = await services.credentials.purchase(listing.id, buyer);
    expect(rpc.account(credential.pdaAddress!)?.owner).toBe(rpc.programId);
    expect(await services.credentials.verify(listing.id, buyer)).toEqual({
      listingId: listing.id,
      valid: true,
      status: 'active',
      pdaAddress: credential.pdaAddress,
      onChainVerified: true,
    });
  });

  it('reports not_found when the account is absent, even if the studio remembers a credential', async () => {
    const stranger = generateKeypair().address;
    expect(await services.credentials.verify(listing.id, stranger)).toEqual({
      listingId: listing.id,
      valid: false,
      status: 'not_found',
      onChainVerified: false,
    });
    const second = services.wallets.create('second').address;
    rpc.fund(second, BigInt(SOL));
    const { credential } = await services.credentials.purchase(listing.id, second);
    rpc.setAccount(credential.pdaAddress!, { lamports: 0 });
    expect(await services.credentials.verify(listing.id, second)).toMatchObject({
      status: 'not_found',
      valid: false,
    });
  });

  it('finds a credential that exists only on chain', async () => {
    const holder = generateKeypair().address;
    rpc.seedCredential({ listing: listing.pdaAddress!, holder, accessModel: 'one_time' });
    expect(await services.credentials.verify(listing.id, holder)).toMatchObject({
      valid: true,
      status: 'active',
      onChainVerified: true,
    });
  });

  it('keeps test grants local, and refuses locally what the rules refuse before paying a fee', async () => {
    const before = sent();
    const tester = generateKeypair().address;
    await services.credentials.grant(listing.id, tester);
    expect(await services.credentials.verify(listing.id, tester)).toMatchObject({
      status: 'active',
      onChainVerified: false,
    });
    await expect(services.credentials.purchase(listing.id, buyer)).rejects.toThrow(/already holds one_time/);
    expect(sent()).toBe(before);
  });

  it('withdraws exactly what the listing account earned on chain', async () => {
    const earnings = await services.publishing.earnings(listing.id);
    expect(earnings).toEqual({ listingId: listing.id, earned: 1, withdrawn: 0, withdrawable: 1 });
    const before = rpc.account(creator)!.lamports;
    const withdrawn = await services.publishing.withdraw(listing.id);
    expect(withdrawn.amount).toBe(1);
    const fee = 5000n;
    expect(rpc.account(creator)!.lamports).toBe(before + BigInt(SOL) - fee);
    expect((await services.publishing.earnings(listing.id)).withdrawable).toBe(0);
    expect(rpc.unknownMethods).toEqual([]);
  });
});
