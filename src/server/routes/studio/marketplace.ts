import { z } from 'zod';
import {
  GrantCredentialSchema,
  PurchaseCredentialSchema,
  RevokeCredentialSchema,
} from '../../../shared/credentials';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

const IdParams = z.object({ id: z.string().min(1).max(100) });

/**
 * The studio's marketplace: publishing through the ledger, earnings and withdrawals, and test buyers
 * (local credentials the creator grants to try every credential state).
 */
export function marketplaceRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const { credentials, publishing } = services;
  const ok = { status: 200, description: 'OK' };
  const tags = ['Studio'];

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
