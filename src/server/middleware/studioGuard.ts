import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { Forbidden, Unauthorized } from '../../core/errors';

export const STUDIO_TOKEN_HEADER = 'x-studio-token';

/**
 * Guards the studio-only API: the per-launch token (given only to pages this server serves) and,
 * when the browser sends one, an Origin equal to the server's own. Together with the Host check
 * this keeps other local pages and DNS-rebinding sites out.
 */
export function studioGuard(token: string): RequestHandler {
  const expected = Buffer.from(token, 'utf8');
  return (req, _res, next) => {
    const origin = req.headers.origin;
    if (origin && origin !== `${req.protocol}://${req.headers.host}`) {
      return next(new Forbidden(`Origin ${origin} may not use the studio API.`));
    }
    const given = Buffer.from(String(req.headers[STUDIO_TOKEN_HEADER] ?? ''), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return next(
        new Unauthorized("The studio API needs this launch's studio token (header X-Studio-Token)."),
      );
    }
    next();
  };
}

/** Refuses requests whose Host header is not one this server answers to (DNS rebinding). */
export function hostGuard(allowedHosts: () => ReadonlySet<string>): RequestHandler {
  return (req, _res, next) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts().has(host)) return next(new Forbidden(`Host '${host}' is not served here.`));
    next();
  };
}
