import type { ApiPromise } from '../http/apiPromise';
import { jsonCall } from '../http/calls';
import type { RequestOptions, Transport } from '../http/request';
import { RetrievalStream } from '../stream';
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
    (body) => body as RetrievalResult,
  );
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
        (r) => Promise.resolve(r),
      ),
    options.signal,
  );
}
