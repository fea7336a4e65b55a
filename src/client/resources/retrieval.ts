import type { ApiPromise } from '../http/apiPromise';
import { excerpt, invalidResponse, jsonCall } from '../http/calls';
import type { RequestOptions, Transport } from '../http/request';
import { eventStream, RetrievalStream } from '../stream';
import type { RetrievalResult, RetrieveParams } from '../types';

/** POST /retrieve: the best chunks for a query (the result is at the top level, no envelope). */
export function retrieve(
  transport: Transport,
  params: RetrieveParams,
  options?: RequestOptions,
): ApiPromise<RetrievalResult> {
  return jsonCall(
    transport,
    // Charged per query: a timeout is not retried (the query may have run), a 5xx is (it did not).
    { method: 'POST', path: '/retrieve', json: params, repeatable: false },
    options,
    retrievalResult,
  );
}

/**
 * The body of a retrieval, checked only as far as its `chunks`: a body without them (another endpoint's
 * answer, a proxy's JSON) would otherwise pass for a result and fail later, far from its cause.
 */
function retrievalResult(body: unknown, response: Response): RetrievalResult {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { chunks?: unknown }).chunks)) {
    throw invalidResponse(response, `Expected a retrieval result with "chunks", got: ${excerpt(body)}`);
  }
  return body as RetrievalResult;
}

/** POST /retrieve/stream: the same chunks, one by one over SSE. */
export function retrieveStream(
  transport: Transport,
  params: RetrieveParams,
  options: RequestOptions = {},
): RetrievalStream {
  return new RetrievalStream(
    () =>
      transport.send(
        { method: 'POST', path: '/retrieve/stream', json: params, stream: true, repeatable: false },
        options,
        eventStream,
      ),
    options.signal,
  );
}
