import type { ERROR_STATUS, ErrorCode } from '../shared/errors';

/**
 * The HTTP status of each error code of the wire contract, for an error that arrives without one (an
 * SSE `error` event). A copy of src/shared/errors.ts's table, because the client imports only types
 * from src/shared (it ships no zod); the type keeps the copy equal to it: a code missing, added or
 * mapped to another status fails to compile.
 */
const STATUS_OF_CODE: { readonly [Code in ErrorCode]: (typeof ERROR_STATUS)[Code] } = {
  invalid_request: 400,
  unsupported_embedding_model: 400,
  unauthorized: 401,
  credential_not_found: 403,
  credential_expired: 403,
  insufficient_balance: 403,
  forbidden: 403,
  listing_not_found: 404,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_file_type: 415,
  chunk_limit_exceeded: 422,
  no_text_layer: 422,
  encrypted_document: 422,
  invalid_document: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  embedding_provider_unavailable: 503,
  ledger_unavailable: 503,
};

/** The status of `code`; 500 for a code the contract does not know. */
export function statusOfErrorCode(code: unknown): number {
  return typeof code === 'string' && Object.hasOwn(STATUS_OF_CODE, code)
    ? STATUS_OF_CODE[code as ErrorCode]
    : 500;
}
