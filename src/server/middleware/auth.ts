import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import type { WalletSignatureAuth } from '../../core/auth/walletSignature';
import { DomainError, Unauthorized } from '../../core/errors';
import type { ApiKeyService } from '../../core/keys/apiKeys';

/** Who is calling: always a wallet; `keyId` when an API key was used, absent for a wallet signature. */
export interface RequestPrincipal {
  wallet: string;
  keyId?: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal?: RequestPrincipal;
    authFailure?: string;
    /** The exact JSON body bytes, kept for wallet-signature authentication. */
    rawBody?: Buffer;
    /**
     * Why the JSON body could not be read (malformed, too large, not decompressible). It is reported
     * after authentication and the key's rate limit, like any other bad input, by the route the request
     * matched (`defineRoutes`; `bodyFailure` for a wallet signature).
     */
    bodyError?: unknown;
    /** A wallet signature that cannot be checked because its body could not be read: the body's error is the answer. */
    bodyErrorFirst?: boolean;
  }
}

/** express.json's `verify` hook: keeps the raw bytes so a wallet signature can cover them. */
export const keepRawBody = (req: IncomingMessage, _res: unknown, buf: Buffer): void => {
  (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
};

/**
 * Reads JSON bodies, keeping a failure in `req.bodyError` instead of answering it at once: a body is read
 * before the caller is known (a wallet signature covers it), but a request without valid credentials is
 * still a 401, and a bad body still counts against the key's limit and carries its headers.
 */
export function readJsonBody(limit: string): RequestHandler {
  const parse = express.json({ limit, verify: keepRawBody });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (err !== undefined) req.bodyError = err;
      next();
    });
  };
}

/**
 * Before authentication, the one bad body answered there: a wallet signature that cannot be checked
 * without it. Any other is answered by the route it was sent to (defineRoutes), after authentication, so
 * an unknown route is still a 404 and a GET's body is ignored.
 */
export const bodyFailure: RequestHandler = (req, _res, next) => {
  next(req.bodyError !== undefined && req.bodyErrorFirst ? req.bodyError : undefined);
};

const hasBody = (req: IncomingMessage): boolean =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/**
 * Works out who is calling without refusing anyone yet, so the rate limiter can count
 * unauthenticated attempts too (and set its headers on the 401).
 */
export function identify(apiKeys: ApiKeyService, walletAuth: WalletSignatureAuth): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization;
    if (!header) {
      req.authFailure = 'Missing Authorization header: send "Authorization: Bearer <API key>".';
      return next();
    }
    const [scheme, credentials, ...rest] = header.trim().split(/\s+/);
    if (scheme?.toLowerCase() === 'wallet') {
      if (!credentials || rest.length > 0) {
        req.authFailure =
          'Malformed Authorization header: expected "Wallet <address>:<base58 signature>:<timestampMs>".';
        return next();
      }
      if (req.bodyError !== undefined && !req.rawBody) {
        req.bodyErrorFirst = true;
        return next();
      }
      // Only bodies read before this point (JSON) can be hashed; a streamed upload cannot be covered.
      if (hasBody(req) && !req.rawBody) {
        req.authFailure =
          'Wallet-signature authentication covers JSON bodies only; use an API key for this request.';
        return next();
      }
      try {
        const wallet = walletAuth.authenticate(credentials, {
          method: req.method,
          pathWithQuery: req.originalUrl,
          body: req.rawBody,
        });
        req.principal = { wallet };
      } catch (err) {
        if (!(err instanceof DomainError)) return next(err);
        req.authFailure = err.message;
      }
      return next();
    }
    if (scheme?.toLowerCase() !== 'bearer' || !credentials || rest.length > 0) {
      req.authFailure =
        'Malformed Authorization header: expected "Bearer <API key>" or "Wallet <address>:<signature>:<timestampMs>".';
      return next();
    }
    const principal = apiKeys.authenticate(credentials);
    if (principal) req.principal = principal;
    else req.authFailure = apiKeys.refusal(credentials);
    next();
  };
}

export const requireAuth: RequestHandler = (req, _res, next) => {
  next(req.principal ? undefined : new Unauthorized(req.authFailure));
};
