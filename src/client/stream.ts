import { invalidResponse } from './http/calls';
import type { Sent } from './http/request';
import { withResponse, type WithResponse } from './http/response';
import { serverSentEvents, type EventSourceMessage } from './http/sse';
import { statusOfErrorCode } from './errorStatus';
import { ApiError, ConnectionError, KnowledgeClientError, UserAbortError, errorFromResponse } from './errors';
import type { Chunk, RetrievalDone } from './types';

/**
 * The chunks of POST /retrieve/stream as they arrive: `for await (const chunk of stream)`. The request
 * starts with the loop (or `withResponse()`); leaving the loop early closes the connection. An `error`
 * event throws its error class, and a stream cut before its `done` event throws a `ConnectionError`
 * (`stream_interrupted`) rather than ending as if the results were complete.
 */
export class RetrievalStream implements AsyncIterable<Chunk> {
  /** The `done` event (query id, latency, count), once the stream has been read to its end. */
  summary: RetrievalDone | undefined;
  private opened: Promise<Sent<Response>> | undefined;
  private read = false;
  private aborted = false;

  constructor(
    private readonly open: () => Promise<Sent<Response>>,
    private readonly signal?: AbortSignal,
  ) {}

  /** Starts the request; resolves once the stream has begun (a refusal such as a 403 rejects here). */
  async withResponse(): Promise<WithResponse<RetrievalStream>> {
    return withResponse(this, (await this.start()).response);
  }

  /** Closes the connection, or keeps it from opening; reading then throws a UserAbortError. */
  abort(): void {
    this.aborted = true;
    this.opened?.then(
      (sent) => sent.abort(),
      () => {},
    );
  }

  private start(): Promise<Sent<Response>> {
    if (this.aborted && !this.opened) return Promise.reject(new UserAbortError());
    return (this.opened ??= this.open());
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Chunk, void, undefined> {
    if (this.read)
      throw new KnowledgeClientError('A retrieval stream can be read once; call retrieveStream again.');
    this.read = true;
    const sent = await this.start();
    const requestId = sent.response.headers.get('x-request-id') ?? undefined;
    let complete = false;
    let count = 0;
    try {
      if (!sent.response.body) throw new ConnectionError('The stream response has no body.', { requestId });
      for await (const event of serverSentEvents(sent.response.body)) {
        if (event.event === 'chunk') {
          count++;
          yield parseData<Chunk>(event, sent.response);
        } else if (event.event === 'done') {
          this.summary = parseData<RetrievalDone>(event, sent.response);
          complete = true;
          if (this.summary.count !== count) {
            throw invalid(
              sent.response,
              `the stream announced ${this.summary.count} chunks but sent ${count}`,
            );
          }
          return;
        } else if (event.event === 'error') {
          const body = parseData<{ error?: { status?: unknown; code?: unknown } }>(event, sent.response);
          const status =
            typeof body.error?.status === 'number' ? body.error.status : statusOfErrorCode(body.error?.code);
          throw errorFromResponse(status, body, sent.response.headers);
        }
        // Other event names are ignored, so the server can add some without breaking clients.
      }
      throw new ConnectionError(
        `The retrieval stream ended after ${count} chunks without its "done" event: the connection was cut and the results may be incomplete.`,
        { code: 'stream_interrupted', requestId },
      );
    } catch (err) {
      if (this.signal?.aborted || this.aborted) throw new UserAbortError(this.signal?.reason);
      if (err instanceof KnowledgeClientError) throw err;
      throw new ConnectionError(
        `The retrieval stream broke after ${count} chunks: ${err instanceof Error ? err.message : String(err)}`,
        { code: 'stream_interrupted', cause: err, requestId },
      );
    } finally {
      // Reached on a `break` in the caller's loop too: close the connection the server is writing to.
      if (!complete) sent.abort();
      sent.release();
    }
  }
}

function parseData<T>(event: EventSourceMessage, response: Response): T {
  try {
    return JSON.parse(event.data) as T;
  } catch {
    throw invalid(response, `the "${event.event}" event's data is not JSON: ${event.data.slice(0, 200)}`);
  }
}

const invalid = (response: Response, message: string) =>
  new ApiError({
    code: 'invalid_response',
    status: response.status,
    message: `Unexpected stream content: ${message}`,
    requestId: response.headers.get('x-request-id') ?? undefined,
    headers: response.headers,
  });

/**
 * The response of POST /retrieve/stream once it is known to be an event stream. Anything else (a JSON
 * answer of a server without streaming, a proxy's page) would be read as a stream without events and
 * reported as a cut connection; it is an `invalid_response` naming what came instead, not retried.
 */
export async function eventStream(response: Response): Promise<Response> {
  const type = response.headers.get('content-type');
  if (type?.split(';')[0]!.trim().toLowerCase() === 'text/event-stream') return response;
  const text = await response.text().catch(() => '');
  const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, 200) || '(nothing)';
  throw invalidResponse(
    response,
    `Expected an event stream (text/event-stream), got ${type ? `"${type}"` : 'no content type'}: ${excerpt}`,
  );
}
