import type { RequestHandler } from 'express';
import type { ApiKeyService, Principal } from '../../core/keys/apiKeys';
import { Unauthorized } from '../../core/errors';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    authFailure?: string;
  }
}

/**
 * Works out who is calling without refusing anyone yet, so the rate limiter can count
 * unauthenticated attempts too (and set its headers on the 401).
 */
export function identify(apiKeys: ApiKeyService): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      req.authFailure = 'Missing Authorization header: send "Authorization: Bearer <API key>".';
      return next();
    }
    const [scheme, credentials, ...rest] = header.trim().split(/\s+/);
    if (scheme?.toLowerCase() === 'wallet') {
      req.authFailure = 'Wallet-signature authentication is not enabled on this server yet; use an API key.';
      return next();
    }
    if (scheme?.toLowerCase() !== 'bearer' || !credentials || rest.length > 0) {
      req.authFailure = 'Malformed Authorization header: expected "Bearer <API key>".';
      return next();
    }
    const principal = apiKeys.authenticate(credentials);
    if (principal) req.principal = principal;
    else req.authFailure = 'Invalid API key: it is unknown or has been revoked.';
    next();
  };
}

export const requireAuth: RequestHandler = (req, _res, next) => {
  next(req.principal ? undefined : new Unauthorized(req.authFailure));
};
