import type { StudioCredential } from '../../../../shared/credentials';
import type { Listing, PricingInput } from '../../../../shared/listings';
import type {
  NetworkView,
  PlaygroundKey,
  PreparedListingTransaction,
  SubmittedListingTransaction,
  TestBuyer,
  TestBuyerState,
  Wallet,
  WalletBalance,
} from '../../../../shared/studio';
import { studioCall } from '../../features/playground/studioCalls';

const id = encodeURIComponent;

/** The studio endpoints of the Pricing, Wallet and Test buyers views (docs/marketplace.md, docs/wallets.md). */
export const marketplaceApi = {
  savePricing: (listingId: string, pricing: PricingInput) =>
    studioCall<Listing>('PUT', `/listings/${id(listingId)}/pricing`, pricing),
  publicListing: (listingId: string) => studioCall<Listing>('GET', `/listings/${id(listingId)}/public`),

  network: () => studioCall<NetworkView>('GET', '/network'),
  setRpcUrl: (rpcUrl: string) => studioCall<unknown>('PUT', '/settings/solana.rpcUrl', { value: rpcUrl }),
  balance: (address: string) => studioCall<WalletBalance>('GET', `/wallets/${id(address)}/balance`),
  airdrop: (address: string, sol: number) =>
    studioCall<{ signature: string; balance: WalletBalance }>('POST', `/wallets/${id(address)}/airdrop`, {
      sol,
    }),
  importWallet: (body: { fileText: string; fileName?: string; name?: string }) =>
    studioCall<Wallet>('POST', '/wallets/import', body),

  prepareListingTransaction: (listingId: string) =>
    studioCall<PreparedListingTransaction>('POST', `/listings/${id(listingId)}/create-listing-transaction`),
  submitListingTransaction: (listingId: string, transaction: string) =>
    studioCall<SubmittedListingTransaction>(
      'POST',
      `/listings/${id(listingId)}/create-listing-transaction/submit`,
      { transaction },
    ),

  buyers: (listingId: string) => studioCall<TestBuyer[]>('GET', `/listings/${id(listingId)}/buyers`),
  createBuyer: (name?: string) => studioCall<Wallet>('POST', '/buyers', name ? { name } : {}),
  setBuyerState: (listingId: string, wallet: string, state: TestBuyerState) =>
    studioCall<StudioCredential | null>('POST', '/buyers/credential', { listingId, wallet, state }),

  playgroundKey: (listingId: string, wallet?: string) =>
    studioCall<PlaygroundKey>(
      'GET',
      `/listings/${id(listingId)}/playground-key${wallet ? `?wallet=${id(wallet)}` : ''}`,
    ),
};

export const marketplaceKeys = {
  network: ['network'] as const,
  balance: (address: string | undefined) => ['balance', address] as const,
  publicListing: (listingId: string | null) => ['public-listing', listingId] as const,
  buyers: (listingId: string | null) => ['buyers', listingId] as const,
};
