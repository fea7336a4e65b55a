import express, { Router } from 'express';
import { z } from 'zod';
import { CreateListingSchema, ListingSearchQuerySchema, UpdateListingSchema } from '../../../shared/listings';
import { paginationOf } from '../../../shared/pagination';
import { STUDIO_LIMITS } from '../../../core/ingest/limits';
import { CreateApiKeySchema, CreateWalletSchema, type StudioInfo } from '../../../shared/studio';
import type { ServerDeps } from '../../deps';
import { notFoundRoute } from '../../middleware/errors';
import { studioGuard } from '../../middleware/studioGuard';
import { defineRoutes } from '../../route';
import { writeGate } from '../../writeGate';
import { documentRoutes } from './documents';
import { ingestRoutes } from './ingest';
import { marketplaceRoutes } from './marketplace';
import { evaluationRoutes } from './evaluations';
import { playgroundRoutes } from './playground';
import { pushRoutes } from './push';
import { settingsRoutes } from './settings';
import { walletRoutes } from './wallets';

const IdParams = z.object({ id: z.string().min(1).max(100) });

/**
 * The studio-only surface (DESIGN §5): what the renderer needs, not part of the public contract.
 * Every request needs this launch's studio token.
 */
export function studioRouter(deps: ServerDeps): Router {
  const router = Router();
  const routes = Router();
  // The token first: a body is read only for a caller that holds it.
  router.use(studioGuard(deps.studioToken));
  router.use(express.json({ limit: '1mb' }));
  router.use(routes);
  router.use(notFoundRoute);
  const { listings, apiKeys, wallets } = deps.services;
  const route = defineRoutes(routes, undefined, '/studio', { writeGate: writeGate(deps.services) });
  const studio = 'studio' as const;
  const ok = { status: 200, description: 'OK' };

  route({
    method: 'get',
    path: '/info',
    summary: 'Version, data directory and the limits of studio ingestion',
    description:
      '`ingestLimits`: what an ingestion from the studio (or `kbstudio ingest`) may hold: bytes per document, bytes of documents per knowledge base (null: no limit), bytes per ZIP archive, chunks per knowledge base.',
    tags: ['Studio'],
    response: ok,
    handler: ({ req }) => ({
      data: {
        version: deps.version,
        dataDir: deps.services.dataDir,
        apiBaseUrl: `${req.protocol}://${req.headers.host}/v1`,
        ingestLimits: STUDIO_LIMITS,
      } satisfies StudioInfo,
    }),
  });

  route({
    method: 'get',
    path: '/listings',
    summary: 'Every local listing, drafts included',
    tags: ['Studio'],
    query: ListingSearchQuerySchema,
    response: ok,
    handler: ({ query }) => {
      const page = listings.search(query, studio);
      return { data: page.items, pagination: paginationOf(page) };
    },
  });
  route({
    method: 'post',
    path: '/listings',
    summary: 'Create a draft listing',
    tags: ['Studio'],
    body: CreateListingSchema,
    response: { status: 201, description: 'Created' },
    handler: ({ body }) => ({
      data: listings.create(body, body.creatorWallet ?? wallets.defaultWallet().address),
    }),
  });
  route({
    method: 'get',
    path: '/listings/:id',
    summary: 'One local listing',
    tags: ['Studio'],
    params: IdParams,
    response: ok,
    handler: ({ params }) => ({ data: listings.get(params.id, studio) }),
  });
  route({
    method: 'patch',
    path: '/listings/:id',
    summary: 'Update a listing',
    tags: ['Studio'],
    params: IdParams,
    body: UpdateListingSchema,
    response: ok,
    handler: ({ params, body }) => ({ data: listings.update(params.id, body, studio) }),
  });
  route({
    method: 'delete',
    path: '/listings/:id',
    summary: 'Delete a draft listing with its knowledge base',
    tags: ['Studio'],
    params: IdParams,
    response: ok,
    handler: async ({ params }) => {
      listings.checkDeletable(params.id, studio);
      // On a worker: a draft of hundreds of thousands of chunks takes seconds to delete, during which
      // this thread keeps serving. Published or deleted meanwhile: refused as above.
      const outcome = await deps.services.knowledgeBase.deleteDraftListing(params.id);
      if (outcome !== 'deleted') listings.checkDeletable(params.id, studio);
      await deps.services.pruneSources();
      return { data: { id: params.id, deleted: true } };
    },
  });
  marketplaceRoutes(route, deps);
  playgroundRoutes(route, deps);
  evaluationRoutes(route, deps);
  settingsRoutes(route, deps);
  ingestRoutes(route, deps);
  documentRoutes(route, deps);
  walletRoutes(route, deps);
  pushRoutes(route, deps);

  route({
    method: 'get',
    path: '/keys',
    summary: 'API keys',
    tags: ['Studio'],
    response: ok,
    handler: () => ({ data: apiKeys.list() }),
  });
  route({
    method: 'post',
    path: '/keys',
    summary: 'Create an API key (shown once)',
    tags: ['Studio'],
    body: CreateApiKeySchema,
    response: { status: 201, description: 'Created' },
    handler: ({ body }) => ({
      data: apiKeys.create(body.wallet ?? wallets.defaultWallet().address, body.label),
    }),
  });
  route({
    method: 'post',
    path: '/keys/:id/revoke',
    summary: 'Revoke an API key',
    tags: ['Studio'],
    params: IdParams,
    response: ok,
    handler: ({ params }) => ({ data: apiKeys.revoke(params.id) }),
  });

  route({
    method: 'get',
    path: '/wallets',
    summary: 'Wallets held by this studio',
    tags: ['Studio'],
    response: ok,
    handler: () => ({ data: wallets.list() }),
  });
  route({
    method: 'post',
    path: '/wallets',
    summary: 'Create a wallet',
    tags: ['Studio'],
    body: CreateWalletSchema,
    response: { status: 201, description: 'Created' },
    handler: ({ body }) => ({ data: wallets.create(body.name) }),
  });
  return router;
}
