/**
 * The errors the client throws. Every failure of a call is a `KnowledgeClientError`; every failure the
 * API (or the way to it) caused is an `ApiError`, whose class says what happened: one factory,
 * `errorFromResponse`, picks it from the HTTP status.
 */
export class KnowledgeClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ApiErrorInit {
  code: string;
  message: string;
  status?: number;
  requestId?: string;
  headers?: Headers;
  body?: unknown;
  cause?: unknown;
  retryAfter?: number;
}

export class ApiError extends KnowledgeClientError {
  /** Machine-readable, e.g. `credential_expired` (the wire `error.code`). */
  readonly code: string;
  /** The HTTP status; undefined when no response arrived (connection failures, timeouts). */
  readonly status: number | undefined;
  /** The server's `X-Request-Id`: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  readonly headers: Headers | undefined;
  /** The parsed error body as sent, for fields this library does not model (`details`). */
  readonly body: unknown;
  /**
   * Seconds the server asked to wait before trying again (`Retry-After`), when it said: a 429, or a
   * 503 thrown without a retry because it asked for longer than the client waits (60 s).
   */
  readonly retryAfter: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.headers = init.headers;
    this.body = init.body;
    this.retryAfter = init.retryAfter;
  }
}

/** 401: the API key or wallet signature was missing, unknown, revoked, stale or forged. */
export class AuthenticationError extends ApiError {}

/** 403: no credential for the listing, an expired one, or a balance too low for one query. */
export class AccessError extends ApiError {}

/** 404: an unknown listing, upload or route. */
export class NotFoundError extends ApiError {}

/** 429: too many requests; `retryAfter` is the number of seconds to wait, when the server said. */
export class RateLimitError extends ApiError {}

/** No response: the server could not be reached, or the connection broke before the answer was complete. */
export class ConnectionError extends ApiError {
  constructor(message: string, options: { cause?: unknown; code?: string; requestId?: string } = {}) {
    super({
      code: options.code ?? 'connection_error',
      message,
      requestId: options.requestId,
      cause: options.cause,
    });
  }
}

/** The server did not answer within the timeout. */
export class TimeoutError extends ConnectionError {
  constructor(timeoutMs: number, what = 'the request') {
    super(`${what} timed out after ${timeoutMs} ms`, { code: 'timeout' });
  }
}

/** The caller's own `signal` aborted the call. */
export class UserAbortError extends KnowledgeClientError {
  constructor(cause?: unknown) {
    super('the request was aborted', { cause });
  }
}

interface WireErrorBody {
  error?: { code?: unknown; message?: unknown; requestId?: unknown; retryAfter?: unknown };
}

/**
 * The error for a response with `status`: the §2 error body when there is one, else (a proxy's HTML
 * page, an empty body) a generic code and the start of the text.
 */
export function errorFromResponse(status: number, body: unknown, headers: Headers, text = ''): ApiError {
  const wire = typeof body === 'object' && body !== null ? (body as WireErrorBody).error : undefined;
  const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const init: ApiErrorInit = {
    status,
    code: str(wire?.code) ?? `http_${status}`,
    message: str(wire?.message) ?? fallbackMessage(status, text),
    requestId: str(wire?.requestId) ?? headers.get('x-request-id') ?? undefined,
    headers,
    body,
    retryAfter: retryAfterSeconds(wire?.retryAfter, headers),
  };
  switch (status) {
    case 401:
      return new AuthenticationError(init);
    case 403:
      return new AccessError(init);
    case 404:
      return new NotFoundError(init);
    case 429:
      return new RateLimitError(init);
    default:
      return new ApiError(init);
  }
}

function fallbackMessage(status: number, text: string): string {
  const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `HTTP ${status}${excerpt ? `: ${excerpt}` : ' with no error body'}`;
}

function retryAfterSeconds(fromBody: unknown, headers: Headers): number | undefined {
  if (typeof fromBody === 'number' && Number.isFinite(fromBody) && fromBody >= 0) return fromBody;
  const ms = retryAfterMs(headers);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

/**
 * `Retry-After` in milliseconds: delta-seconds (a whole number of seconds) or an IMF-fixdate (RFC 9110
 * §10.2.3, §5.6.7); undefined if absent or anything else. `Date.parse` alone would read `-1` or `5.5`
 * as dates in the past, i.e. "retry at once".
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = imfFixdate(value);
  return date === undefined ? undefined : Math.max(0, date - now);
}

/**
 * The time of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`). It is exactly the form of
 * `toUTCString`, which `Date.parse` must read back (ECMA-262 Date.parse): a value is one when it is
 * written back unchanged, which also refuses impossible dates and a wrong day name.
 */
function imfFixdate(value: string): number | undefined {
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toUTCString() === value ? time : undefined;
}
