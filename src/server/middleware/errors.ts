import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { DomainError, NotFound } from '../../core/errors';
import { isDatabaseBusy, storageFailure } from '../../core/uploads/storageErrors';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors';

export function sendError(
  res: Response,
  requestId: string,
  code: ErrorCode,
  message: string,
  extra: { retryAfter?: number; details?: unknown } = {},
): void {
  const status = ERROR_STATUS[code];
  // RFC 9110 §11.6.1: a 401 names the scheme it wants.
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="kbstudio"');
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

/** What a request refused because the database was busy suggests waiting before the next try. */
const BUSY_RETRY_AFTER_S = 5;

interface HttpParserError {
  type?: string;
  status?: number;
  limit?: number;
  /** The text that failed to parse (body-parser's entity.parse.failed). */
  body?: string;
  /** zlib's error number when the body could not be decompressed. */
  errno?: number;
  message?: string;
}

/** JSON.parse accepts it, body-parser's strict mode does not: a body of `null`, `3` or `"text"`. */
function isJsonScalar(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The message of a body body-parser could not read, or undefined when `err` is no such failure. Every
 * one is the client's doing, so a 4xx naming the body, never the 500 of a server fault (and the client
 * library retries 5xx twice).
 */
function bodyFailureMessage(err: HttpParserError, contentEncoding: string | undefined): string | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return isJsonScalar(err.body)
        ? `body: must be a JSON object, not ${err.body!.trim().slice(0, 20)}.`
        : 'body: the request body is not valid JSON.';
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return 'body: unsupported content encoding or charset; send UTF-8 JSON.';
    case 'request.aborted':
      return 'body: the request was aborted before its body was complete.';
    case 'request.size.invalid':
      return 'body: the body is not as long as its Content-Length header says.';
  }
  // body-parser passes zlib's own error on (gzip, deflate, br), as a 400 without a type.
  if (err.status === 400 && typeof err.errno === 'number' && contentEncoding !== undefined) {
    return `body: the request body could not be decompressed (Content-Encoding: ${contentEncoding}): ${err.message ?? 'invalid data'}.`;
  }
  return undefined;
}

/**
 * The one place where failures become HTTP: domain errors by their code, body-parser failures by
 * type, everything else a 500 whose details stay in the server log.
 */
export function errorHandler(
  log: (message: string) => void = console.error,
  dataDir?: string,
): ErrorRequestHandler {
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
    if (parserError.type === 'entity.too.large') {
      return sendError(
        res,
        req.id,
        'payload_too_large',
        `body: the request body exceeds the ${parserError.limit ?? ''} byte limit for JSON requests.`.replace(
          '  ',
          ' ',
        ),
      );
    }
    const bodyFailure = bodyFailureMessage(parserError, req.headers['content-encoding']);
    if (bodyFailure !== undefined) return sendError(res, req.id, 'invalid_request', bodyFailure);
    log(
      `[${req.id}] ${req.method} ${req.originalUrl} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    // Another writer held the database past SQLite's busy timeout: an ingestion committing hundreds of
    // thousands of chunks (on its own thread, for a minute or so), or another process on the data directory.
    if (isDatabaseBusy(err)) {
      res.setHeader('Retry-After', String(BUSY_RETRY_AFTER_S));
      return sendError(
        res,
        req.id,
        'internal_error',
        `The database is busy storing another change (a large ingestion is being committed); nothing of this request was saved. Retry in a few seconds (request id ${req.id}).`,
        { retryAfter: BUSY_RETRY_AFTER_S },
      );
    }
    // A full disk or a data directory that became read-only: say so, not "an internal error".
    const storage = dataDir === undefined ? undefined : storageFailure(err, dataDir);
    if (storage) return sendError(res, req.id, storage.code, storage.message);
    return sendError(
      res,
      req.id,
      'internal_error',
      `An internal error occurred. Quote request id ${req.id} when reporting it.`,
    );
  };
}
