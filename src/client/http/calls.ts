import { ApiError } from '../errors';
import { ApiPromise } from './apiPromise';
import { readJson, type ApiRequest, type RequestOptions, type Transport } from './request';
import { withResponse } from './response';

/** One JSON call; `pick` takes the result out of the body (the `data` envelope, or the body itself). */
export function jsonCall<T>(
  transport: Transport,
  request: ApiRequest,
  options: RequestOptions = {},
  pick: (body: unknown, response: Response) => T,
): ApiPromise<T> {
  return new ApiPromise(
    transport
      .send(request, options, readJson)
      .then(({ data, response }) => withResponse(pick(data, response), response)),
  );
}

/** The `data` of a resource envelope `{"data": ...}`. */
export function envelopeData<T>(body: unknown, response: Response): T {
  if (typeof body !== 'object' || body === null || !('data' in body)) {
    throw new ApiError({
      code: 'invalid_response',
      status: response.status,
      message: `Expected a {"data": ...} envelope, got: ${JSON.stringify(body).slice(0, 200)}`,
      requestId: response.headers.get('x-request-id') ?? undefined,
      headers: response.headers,
    });
  }
  return (body as { data: T }).data;
}

/** `/listings/<id>` with the id encoded as one path segment. */
export const pathOf = (...segments: string[]): string =>
  segments.map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join('/');
