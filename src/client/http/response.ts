/** The rate-limit headers of a response (DESIGN §2); a field is undefined when its header is absent. */
export interface RateLimitInfo {
  /** Requests allowed per window (`X-RateLimit-Limit`). */
  limit: number | undefined;
  /** Requests left in this window (`X-RateLimit-Remaining`). */
  remaining: number | undefined;
  /** When the window resets, Unix time in seconds (`X-RateLimit-Reset`). */
  reset: number | undefined;
}

/** A result with the HTTP response it came from. */
export interface WithResponse<T> {
  data: T;
  response: Response;
  requestId: string | undefined;
  rateLimit: RateLimitInfo;
}

function numberHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

export function rateLimitOf(headers: Headers): RateLimitInfo {
  return {
    limit: numberHeader(headers, 'x-ratelimit-limit'),
    remaining: numberHeader(headers, 'x-ratelimit-remaining'),
    reset: numberHeader(headers, 'x-ratelimit-reset'),
  };
}

export function withResponse<T>(data: T, response: Response): WithResponse<T> {
  return {
    data,
    response,
    requestId: response.headers.get('x-request-id') ?? undefined,
    rateLimit: rateLimitOf(response.headers),
  };
}
