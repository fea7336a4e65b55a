import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type RateLimitInfo } from 'express-rate-limit';
import { DomainError } from '../../core/errors';
import type { CredentialService } from '../../core/marketplace/credentials';
import type { ListingService } from '../../core/marketplace/listings';
import { RetrieveRequestSchema } from '../../shared/retrieval';
import { camelKeys } from '../route';
import { sendError } from './errors';

interface Target {
  key: string;
  listingId: string;
  limit: number;
}

/**
 * The listing of a body the route will take (JSON, valid as it reads it: either casing, camelCase
 * first), or undefined for one it refuses with 400, which is no retrieval and uses none of the allowance.
 */
function listingIdOf(req: Request): string | undefined {
  if (req.bodyError !== undefined || !req.is('application/json')) return undefined;
  const parsed = RetrieveRequestSchema.safeParse(camelKeys(req.body));
  return parsed.success ? parsed.data.listingId : undefined;
}

const retrievalInfo = (req: Request): RateLimitInfo | undefined =>
  (req as Request & { retrievalRateLimit?: RateLimitInfo }).retrievalRateLimit;

const keyInfo = (req: Request): RateLimitInfo | undefined =>
  (req as Request & { rateLimit?: RateLimitInfo }).rateLimit;

function setHeaders(res: Response, info: RateLimitInfo): void {
  res.setHeader('X-RateLimit-Limit', String(info.limit));
  res.setHeader('X-RateLimit-Remaining', String(info.remaining));
  if (info.resetTime) res.setHeader('X-RateLimit-Reset', String(Math.ceil(info.resetTime.getTime() / 1000)));
}

/**
 * The per-credential retrieval limit (spec §8, DESIGN §2): each listing's `retrievalRateLimit` per
 * window, counted per listing and calling wallet, for requests the route will take (a valid body) from
 * a wallet holding a credential for the listing (active or not: the route says what is wrong with it).
 * Everything else passes through uncounted, for the route to answer, and is held to the key limit
 * only: the listing's creator (who needs no credential), a body the route refuses (400), a listing the
 * caller cannot see (404), a caller without a credential (403). The X-RateLimit-* headers of a counted
 * request describe whichever limit, key or retrieval, has fewer requests left.
 */
export function retrievalRateLimit(
  listings: ListingService,
  credentials: Pick<CredentialService, 'heldAccess'>,
  windowMs = 60_000,
): RequestHandler {
  const targets = new WeakMap<Request, Target>();

  const resolve = (req: Request): Target | undefined => {
    const wallet = req.principal?.wallet;
    if (req.method !== 'POST' || !wallet) return undefined;
    const listingId = listingIdOf(req);
    if (!listingId) return undefined;
    try {
      const listing = listings.get(listingId, { wallet });
      if (listing.creatorWallet === wallet || !credentials.heldAccess(listing, wallet)) return undefined;
      return { key: `${listing.id}:${wallet}`, listingId: listing.id, limit: listing.retrievalRateLimit };
    } catch (err) {
      if (err instanceof DomainError) return undefined;
      throw err;
    }
  };

  const limiter = rateLimit({
    windowMs,
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: 'retrievalRateLimit',
    skip: (req) => {
      const target = resolve(req);
      if (target) targets.set(req, target);
      return target === undefined;
    },
    keyGenerator: (req) => targets.get(req)!.key,
    limit: (req) => targets.get(req)!.limit,
    handler: (req, res) => {
      const info = retrievalInfo(req)!;
      const target = targets.get(req)!;
      const retryAfter = Math.max(
        1,
        Math.ceil(((info.resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000),
      );
      setHeaders(res, info);
      res.setHeader('Retry-After', String(retryAfter));
      sendError(
        res,
        req.id,
        'rate_limited',
        `Retrieval rate limit exceeded: listing '${target.listingId}' allows ${target.limit} ${target.limit === 1 ? 'retrieval' : 'retrievals'} per ${Math.round(windowMs / 1000)} s per credential. Retry after ${retryAfter} s.`,
        { retryAfter },
      );
    },
  });

  return (req, res, next) => {
    void limiter(req, res, (err?: unknown) => {
      if (err) return next(err);
      const retrieval = retrievalInfo(req);
      const key = keyInfo(req);
      if (retrieval && (!key || retrieval.remaining < key.remaining)) setHeaders(res, retrieval);
      next();
    });
  };
}
