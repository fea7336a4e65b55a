import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest } from 'express-rate-limit';
import { sendError } from './errors';

export interface RateLimitOptions {
  /** Requests per window per API key, or per wallet for wallet-signed requests (spec §8: 100 per minute). */
  perKey: number;
  windowMs: number;
}

export const DEFAULT_RATE_LIMITS: RateLimitOptions = { perKey: 100, windowMs: 60_000 };

/**
 * The per-key limit. Requests without a valid key are counted per client address, so guessing keys
 * is throttled the same way. Headers: X-RateLimit-Limit / -Remaining / -Reset (Unix seconds).
 */
export function keyRateLimit(options: RateLimitOptions): RequestHandler {
  return rateLimit({
    windowMs: options.windowMs,
    limit: options.perKey,
    standardHeaders: false,
    legacyHeaders: true,
    // An API key is counted as itself; a wallet-signed caller (no key) as its wallet.
    keyGenerator: (req) =>
      req.principal?.keyId
        ? `key:${req.principal.keyId}`
        : req.principal
          ? `wallet:${req.principal.wallet}`
          : `ip:${ipKeyGenerator(req.ip ?? '')}`,
    handler: (req, res) => {
      const reset = (req as AugmentedRequest).rateLimit?.resetTime;
      const retryAfter = Math.max(
        1,
        Math.ceil(((reset?.getTime() ?? Date.now() + options.windowMs) - Date.now()) / 1000),
      );
      res.setHeader('Retry-After', String(retryAfter));
      sendError(
        res,
        req.id,
        'rate_limited',
        `Rate limit exceeded: ${options.perKey} requests per ${Math.round(options.windowMs / 1000)} s per ${req.principal ? 'API key or wallet' : 'client address without valid credentials'}. Retry after ${retryAfter} s.`,
        { retryAfter },
      );
    },
  });
}
