import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { DomainError, NotFound } from '../../core/errors';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors';

export function sendError(
  res: Response,
  requestId: string,
  code: ErrorCode,
  message: string,
  extra: { retryAfter?: number; details?: unknown } = {},
): void {
  const status = ERROR_STATUS[code];
  const body: ErrorBody = { error: { code, message, status, requestId, ...extra } };
  res.status(status).json(body);
}

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(
    new NotFound(
      `No route ${req.method} ${req.originalUrl.split('?')[0]}. See /v1/openapi.json for the API.`,
    ),
  );
};

interface HttpParserError {
  type?: string;
  status?: number;
  limit?: number;
}

/**
 * The one place where failures become HTTP: domain errors by their code, body-parser failures by
 * type, everything else a 500 whose details stay in the server log.
 */
export function errorHandler(log: (message: string) => void = console.error): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof DomainError) {
      return sendError(
        res,
        req.id,
        err.code,
        err.message,
        err.details === undefined ? {} : { details: err.details },
      );
    }
    // The router decodes path parameters itself; a malformed escape (`/listings/%E0%A4%A`) throws URIError.
    if (err instanceof URIError) {
      return sendError(
        res,
        req.id,
        'invalid_request',
        'path: a path parameter is not valid percent-encoded UTF-8.',
      );
    }
    const parserError = err as HttpParserError;
    switch (parserError.type) {
      case 'entity.parse.failed':
        return sendError(res, req.id, 'invalid_request', 'body: the request body is not valid JSON.');
      case 'entity.too.large':
        return sendError(
          res,
          req.id,
          'payload_too_large',
          `body: the request body exceeds the ${parserError.limit ?? ''} byte limit for JSON requests.`.replace(
            '  ',
            ' ',
          ),
        );
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendError(
          res,
          req.id,
          'invalid_request',
          'body: unsupported content encoding or charset; send UTF-8 JSON.',
        );
    }
    log(
      `[${req.id}] ${req.method} ${req.originalUrl} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return sendError(
      res,
      req.id,
      'internal_error',
      `An internal error occurred. Quote request id ${req.id} when reporting it.`,
    );
  };
}
