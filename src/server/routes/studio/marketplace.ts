import { z } from 'zod';
import { InvalidInput } from '../../../core/errors';
import {
  prepareListingTransaction,
  submitListingTransaction,
} from '../../../core/marketplace/walletSignedListing';
import {
  GrantCredentialSchema,
  PurchaseCredentialSchema,
  RevokeCredentialSchema,
} from '../../../shared/credentials';
import { PricingSchema } from '../../../shared/listings';
import {
  CreateTestBuyerSchema,
  GrantTestStateSchema,
  SubmitListingTransactionSchema,
  type TestBuyer,
} from '../../../shared/studio';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';
import { networkView } from './wallets';

const IdParams = z.object({ id: z.string().min(1).max(100) });

/**
 * The studio's marketplace: publishing through the ledger, earnings and withdrawals, and test buyers
 * (local credentials the creator grants to try every credential state).
 */
export function marketplaceRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const { credentials, publishing, listings, wallets } = services;
  const ok = { status: 200, description: 'OK' };
  const tags = ['Studio'];
  const signing = () => ({ listings, ledger: services.ledger });

  route({
    method: 'put',
    path: '/listings/:id/pricing',
    summary: "Set a listing's access model, price, rate limit, domain and tags (the Pricing view's schema)",
    tags,
    params: IdParams,
    body: PricingSchema,
    response: ok,
    handler: ({ params, body }) => ({ data: listings.update(params.id, body, 'studio') }),
  });
  route({
    method: 'get',
    path: '/listings/:id/public',
    summary: 'The listing exactly as GET /v1/listings/:id returns it to its creator (drafts included)',
    tags,
    params: IdParams,
    response: ok,
    handler: ({ params }) => {
      const listing = listings.get(params.id, 'studio');
      return { data: listings.get(listing.id, { wallet: listing.creatorWallet }) };
    },
  });

  route({
    method: 'post',
    path: '/listings/:id/create-listing-transaction',
    summary: 'The unsigned create_listing transaction for a wallet adapter to sign, with what it covers',
    tags,
    params: IdParams,
    response: ok,
    handler: async ({ params }) => ({
      data: await prepareListingTransaction(signing(), params.id, networkView(services).programId),
    }),
  });
  route({
    method: 'post',
    path: '/listings/:id/create-listing-transaction/submit',
    summary: 'Verify a signed create_listing transaction, record it in the ledger and publish the listing',
    tags,
    params: IdParams,
    body: SubmitListingTransactionSchema,
    response: ok,
    errors: [403, 409],
    handler: async ({ params, body }) => {
      const bytes = new Uint8Array(Buffer.from(body.transaction, 'base64'));
      if (bytes.length === 0) throw new InvalidInput('transaction: must not be empty.');
      return {
        data: await submitListingTransaction(signing(), params.id, networkView(services).programId, bytes),
      };
    },
  });

  route({
    method: 'get',
    path: '/listings/:id/buyers',
    summary:
      "Every wallet the studio holds but the listing's creator's, and every other credential holder, with their credential",
    tags,
    params: IdParams,
    response: ok,
    handler: ({ params }) => {
      const listing = listings.get(params.id, 'studio');
      const held = credentials.listAll(listing.id);
      const buyers = wallets.buyersFor(listing.creatorWallet);
      const rows: TestBuyer[] = buyers.map((w) => ({
        wallet: w.address,
        name: w.name,
        credential: held.find((c) => c.holderWallet === w.address) ?? null,
      }));
      for (const credential of held) {
        if (!buyers.some((w) => w.address === credential.holderWallet)) {
          rows.push({ wallet: credential.holderWallet, name: null, credential });
        }
      }
      return { data: rows };
    },
  });
  route({
    method: 'post',
    path: '/buyers',
    summary: 'Create a test buyer wallet (a local keypair named test-buyer-<n>)',
    tags,
    body: CreateTestBuyerSchema,
    response: { status: 201, description: 'Created' },
    errors: [409],
    handler: ({ body }) => ({ data: wallets.createTestBuyer(body.name) }),
  });
  route({
    method: 'post',
    path: '/buyers/credential',
    summary: 'Put a test buyer in a credential state: active, expired, low_balance, zero_balance or revoked',
    tags,
    body: GrantTestStateSchema,
    response: ok,
    errors: [409],
    handler: async ({ body }) => ({
      data: await credentials.grantState(body.listingId, body.wallet, body.state),
    }),
  });

  route({
    method: 'post',
    path: '/listings/:id/publish',
    summary: "Publish a listing: create_listing signed by the creator's wallet; records the listing PDA",
    tags,
    params: IdParams,
    response: ok,
    handler: async ({ params }) => ({ data: await publishing.publish(params.id) }),
  });
  route({
    method: 'get',
    path: '/listings/:id/earnings',
    summary: 'What a listing has earned, withdrawn and can withdraw (SOL)',
    tags,
    params: IdParams,
    response: ok,
    handler: async ({ params }) => ({ data: await publishing.earnings(params.id) }),
  });
  route({
    method: 'post',
    path: '/listings/:id/withdraw',
    summary: 'Withdraw exactly the withdrawable earnings (withdraw_earnings signed by the creator)',
    tags,
    params: IdParams,
    response: ok,
    handler: async ({ params }) => ({ data: await publishing.withdraw(params.id) }),
  });

  route({
    method: 'get',
    path: '/credentials',
    summary: 'Every local credential (test buyers and purchases), optionally of one listing',
    tags,
    query: z.object({ listingId: z.string().min(1).max(100).optional() }),
    response: ok,
    handler: ({ query }) => ({ data: credentials.listAll(query.listingId) }),
  });
  route({
    method: 'post',
    path: '/credentials',
    summary: "Grant a test buyer: purchase_access signed by the listing's creator, free",
    tags,
    body: GrantCredentialSchema,
    response: { status: 201, description: 'Granted' },
    handler: async ({ body }) => ({
      data: await credentials.grant(body.listingId, body.wallet, {
        expiresAt: body.expiresAt,
        balance: body.balance,
      }),
    }),
  });
  route({
    method: 'post',
    path: '/credentials/purchase',
    summary: 'Buy access with a wallet this studio holds: purchase_access signed and paid by it',
    tags,
    body: PurchaseCredentialSchema,
    response: { status: 201, description: 'Purchased' },
    handler: async ({ body }) => ({
      data: await credentials.purchase(body.listingId, body.wallet, {
        periods: body.periods,
        deposit: body.deposit,
      }),
    }),
  });
  route({
    method: 'post',
    path: '/credentials/revoke',
    summary: 'Revoke a credential (signed by the creator, else the holder); it stops existing',
    tags,
    body: RevokeCredentialSchema,
    response: ok,
    handler: async ({ body }) => ({ data: await credentials.revoke(body.listingId, body.wallet) }),
  });
}
