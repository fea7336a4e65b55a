import { ApiError, KnowledgeClientError } from '../errors';
import { ApiPromise } from './apiPromise';
import { readJson, type ApiRequest, type RequestOptions, type Transport } from './request';
import { withResponse } from './response';
import { shown } from './settings';

/**
 * One JSON call; `pick` takes the result out of the body (the `data` envelope, or the body itself). A
 * request built by a function that throws (an id that cannot be sent) gives a rejected call, not a throw.
 */
export function jsonCall<T>(
  transport: Transport,
  request: ApiRequest | (() => ApiRequest),
  options: RequestOptions = {},
  pick: (body: unknown, response: Response) => T,
): ApiPromise<T> {
  const sent = (async () =>
    transport.send(typeof request === 'function' ? request() : request, options, readJson))();
  return new ApiPromise(sent.then(({ data, response }) => withResponse(pick(data, response), response)));
}

/** The `data` of a resource envelope `{"data": ...}`. */
export function envelopeData<T>(body: unknown, response: Response): T {
  if (typeof body !== 'object' || body === null || !('data' in body)) {
    throw invalidResponse(response, `Expected a {"data": ...} envelope, got: ${excerpt(body)}`);
  }
  return (body as { data: T }).data;
}

/** A successful response whose body is not what the call expects. */
export function invalidResponse(response: Response, message: string): ApiError {
  return new ApiError({
    code: 'invalid_response',
    status: response.status,
    message,
    requestId: response.headers.get('x-request-id') ?? undefined,
    headers: response.headers,
  });
}

/** The start of a parsed body, for error messages. */
export function excerpt(body: unknown): string {
  return String(JSON.stringify(body)).slice(0, 200);
}

/**
 * `/listings/<id>` with the id encoded as one path segment; `what` names the id in errors. An empty id
 * would ask for the collection itself, and `.` or `..` cannot be sent at all: URLs drop such segments,
 * written `%2E` too (WHATWG URL, which fetch applies), so `get('.')` fetched `/listings` and `get('..')`
 * `/v1/`. No listing or upload has such an id, so they are refused before anything is sent.
 */
export function resourcePath(collection: string, id: unknown, what: string): string {
  if (typeof id !== 'string' || id === '') {
    throw new KnowledgeClientError(`${what} must be a non-empty string, not ${shown(id)}.`);
  }
  if (id === '.' || id === '..') {
    throw new KnowledgeClientError(
      `${what} '${id}' cannot be sent: URLs remove '.' and '..' path segments (even as %2E), and no id is one.`,
    );
  }
  return `${collection}/${encodeURIComponent(id)}`;
}
