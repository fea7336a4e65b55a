import { ApiError, RateLimitError } from '../../../../client';

/** `#/playground?listing=lst_…&as=<wallet>`: the Test buyers view opens the playground this way. */
export function playgroundHashParams(hash: string): { listing: string | null; as: string | null } {
  const query = hash.includes('?') ? hash.slice(hash.indexOf('?') + 1) : '';
  const params = new URLSearchParams(query);
  return { listing: params.get('listing') || null, as: params.get('as') || null };
}

/** What the result area shows for a failed query: the HTTP status and code exactly as a buyer's app gets them. */
export interface QueryFailure {
  status: number | null;
  code: string | null;
  message: string;
  requestId: string | null;
  retryAfter: number | null;
  /** One line on what it means for the buyer. */
  meaning: string | null;
}

const MEANINGS: Record<string, string> = {
  credential_expired: 'The subscription ended: the buyer must renew to query again.',
  credential_not_found: 'This wallet holds no credential for the listing (never bought, or revoked).',
  insufficient_balance: 'The prepaid balance cannot pay one more query: the buyer must top it up.',
  listing_not_found:
    'Buyers cannot see this listing: it is a draft (publish it first), or it no longer exists.',
  rate_limited: 'The buyer went over the listing’s retrieval rate limit and must wait.',
  unauthorized: 'The API key was refused.',
};

export function describeFailure(error: unknown): QueryFailure {
  if (error instanceof ApiError) {
    return {
      status: error.status ?? null,
      code: error.code,
      message: error.message,
      requestId: error.requestId ?? null,
      retryAfter: error instanceof RateLimitError ? (error.retryAfter ?? null) : null,
      meaning: MEANINGS[error.code] ?? null,
    };
  }
  return {
    status: null,
    code: null,
    message: error instanceof Error ? error.message : String(error),
    requestId: null,
    retryAfter: null,
    meaning: null,
  };
}
