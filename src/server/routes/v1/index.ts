import { Router, type RequestHandler } from 'express';
import { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { ServerDeps } from '../../deps';
import { bodyFailure, identify, readJsonBody, requireAuth } from '../../middleware/auth';
import { notFoundRoute } from '../../middleware/errors';
import { Unauthorized } from '../../../core/errors';
import { DEFAULT_RATE_LIMITS, KeyRateLimit } from '../../middleware/rateLimit';
import { retrievalRateLimit } from '../../middleware/retrievalRateLimit';
import { openApiDocument } from '../../openapi';
import { defineRoutes } from '../../route';
import { writeGate } from '../../writeGate';
import { credentialRoutes } from './credentials';
import { listingRoutes } from './listings';
import { RETRIEVAL_PATHS, retrieveRoutes } from './retrieve';
import { uploadRoutes } from './uploads';

/** JSON bodies of /v1 are small (queries, filters); uploads are multipart and parsed separately. */
const JSON_LIMIT = '1mb';

/**
 * Express answers OPTIONS itself, 200 with a plain-text list of methods. No /v1 route serves OPTIONS
 * (the API is for servers, not cross-origin pages), so it gets the JSON answer of any other method no
 * route serves: 401 without credentials, else 404.
 */
const noAutomaticOptions: RequestHandler = (req, res, next) => {
  if (req.method !== 'OPTIONS') return next();
  if (!req.principal) return next(new Unauthorized(req.authFailure));
  notFoundRoute(req, res, next);
};

/** The /v1 API's per-key limit, which the server also applies to requests Express never sees. */
export const v1KeyRateLimit = (deps: ServerDeps): KeyRateLimit =>
  new KeyRateLimit({ ...DEFAULT_RATE_LIMITS, ...deps.rateLimits });

export function v1Router(deps: ServerDeps, keyLimit = v1KeyRateLimit(deps)): Router {
  const router = Router();
  const registry = new OpenAPIRegistry();
  const publicRoutes = Router();
  const authedRoutes = Router();
  const limits = keyLimit.options;

  router.use(readJsonBody(JSON_LIMIT));
  router.use(identify(deps.services.apiKeys, deps.services.walletAuth));
  router.use(keyLimit.middleware);
  router.use(noAutomaticOptions);
  router.use(publicRoutes);
  router.use(bodyFailure, requireAuth, authedRoutes);
  router.use(notFoundRoute);

  let document: unknown;
  defineRoutes(
    publicRoutes,
    registry,
    '/v1',
  )({
    method: 'get',
    path: '/openapi.json',
    summary: "This API's OpenAPI 3.1 document",
    tags: ['Meta'],
    public: true,
    response: {
      status: 200,
      description: 'The OpenAPI document.',
      schema: z.record(z.string(), z.unknown()),
    },
    handler: () => (document ??= openApiDocument(registry, deps.version)),
  });

  const route = defineRoutes(authedRoutes, registry, '/v1', { writeGate: writeGate(deps.services) });
  listingRoutes(route, deps);
  uploadRoutes(route, deps);
  credentialRoutes(route, deps);
  // On the two retrieval routes only (a `use` prefix also counted POST /v1/retrieve/typo, a 404, and
  // refused the credential's next real retrieval with 429).
  authedRoutes.post(
    [...RETRIEVAL_PATHS],
    retrievalRateLimit(deps.services.listings, deps.services.credentials, limits.windowMs),
  );
  retrieveRoutes(route, deps);
  return router;
}
