import type { RequestHandler } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type AugmentedRequest } from 'express-rate-limit';
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
export function keyRateLimit(options: RateLimitOptions, store = new MemoryStore()): RequestHandler {
  return rateLimit({
    store,
    windowMs: options.windowMs,
    limit: options.perKey,
    standardHeaders: false,
    legacyHeaders: true,
    // An API key is counted as itself; a wallet-signed caller (no key) as its wallet. The library checks
    // this function's source for ipKeyGenerator when it reads the client address (it logs an IPv6
    // warning on every start otherwise), so the call is spelled out here rather than in addressKey.
    keyGenerator: (req) =>
      req.principal?.keyId
        ? `key:${req.principal.keyId}`
        : req.principal
          ? `wallet:${req.principal.wallet}`
          : `${ADDRESS_PREFIX}${ipKeyGenerator(req.ip ?? '')}`,
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

const ADDRESS_PREFIX = 'ip:';
const addressKey = (address: string) => `${ADDRESS_PREFIX}${ipKeyGenerator(address)}`;

/**
 * The per-key limit and its counters, so that a request Express never sees (headers over 16 KB, bad
 * HTTP: clientError.ts) is still counted against its client address, and answered with the same
 * X-RateLimit-* headers as any other response (spec §8: every response carries them).
 */
export class KeyRateLimit {
  private readonly store = new MemoryStore();
  readonly middleware: RequestHandler;

  constructor(readonly options: RateLimitOptions) {
    this.middleware = keyRateLimit(options, this.store);
  }

  /** Counts a request without readable credentials from `address`; the headers to answer it with. */
  async countUnread(address: string): Promise<Record<string, string>> {
    const { totalHits, resetTime } = await this.store.increment(addressKey(address));
    const reset = resetTime ?? new Date(Date.now() + this.options.windowMs);
    return {
      'X-RateLimit-Limit': String(this.options.perKey),
      'X-RateLimit-Remaining': String(Math.max(0, this.options.perKey - totalHits)),
      'X-RateLimit-Reset': String(Math.ceil(reset.getTime() / 1000)),
    };
  }
}
