import { z } from 'zod';

/**
 * Every error code of the wire contract (DESIGN §2) with its HTTP status. The server maps domain
 * errors to the error body through this table alone, and the client library reads it back.
 */
export const ERROR_STATUS = {
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
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'Machine-readable error code, e.g. `credential_expired`.' }),
      message: z.string().meta({ description: 'Human-readable message; names the offending field or file.' }),
      status: z.number().int(),
      requestId: z.string(),
      retryAfter: z
        .number()
        .optional()
        .meta({ description: 'Seconds to wait: on 429, and on a 500 when the database is busy.' }),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: 'Error' });

export type ErrorBody = z.infer<typeof ErrorBodySchema>;
