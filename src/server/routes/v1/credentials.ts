import { z } from 'zod';
import {
  CredentialListQuerySchema,
  CredentialSchema,
  CredentialVerificationSchema,
} from '../../../shared/credentials';
import { ListingIdSchema } from '../../../shared/listings';
import { PaginationSchema, paginationOf } from '../../../shared/pagination';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

const CredentialPageSchema = z
  .object({ data: z.array(CredentialSchema), pagination: PaginationSchema })
  .meta({ id: 'CredentialPage' });
const VerificationEnvelopeSchema = z
  .object({ data: CredentialVerificationSchema })
  .meta({ id: 'CredentialVerificationEnvelope' });

export function credentialRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  route({
    method: 'get',
    path: '/credentials',
    summary: "List the caller's access credentials",
    description:
      "The credentials held by the caller's wallet (the API key's wallet, or the signing wallet), newest first, with their status computed now: `active`, `expired` (a subscription past `expiresAt`) or `low_balance` (a per-query balance below one query's price). Without `status`, the active ones (spec §4); `status=expired` or `status=low_balance` lists those instead. Revoked credentials no longer exist.",
    tags: ['Credentials'],
    query: CredentialListQuerySchema,
    response: { status: 200, description: 'A page of credentials.', schema: CredentialPageSchema },
    handler: ({ req, query }) => {
      const page = services.credentials.list(req.principal!.wallet, query);
      return { data: page.items, pagination: paginationOf(page) };
    },
  });

  route({
    method: 'get',
    path: '/credentials/:listing_id',
    summary: "Verify the caller's credential for a listing",
    description:
      '`valid` is true exactly when `status` is `active`; `not_found` when the caller holds no credential (also after a revocation). `onChainVerified` is true only when the record was looked up on chain over RPC; the local ledger reports false. An unknown listing is 404 `listing_not_found`.',
    tags: ['Credentials'],
    params: z.object({ listing_id: ListingIdSchema }),
    response: {
      status: 200,
      description: 'The verification result.',
      schema: VerificationEnvelopeSchema,
    },
    errors: [404],
    handler: async ({ req, params }) => ({
      data: await services.credentials.verify(params.listing_id, req.principal!.wallet),
    }),
  });
}
