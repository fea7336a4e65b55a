import { authorization, type AuthMethod } from '../auth';
import {
  ApiError,
  ConnectionError,
  KnowledgeClientError,
  TimeoutError,
  UserAbortError,
  errorFromResponse,
} from '../errors';
import { Deadline, follow, untilAborted } from './abort';
import { queryValue } from './query';
import { isRedirection, isRefusedRedirect, probeRedirect, redirectError } from './redirect';
import { isRetryableStatus, retryDelayMs, sleep } from './retry';
import { checkMaxRetries, checkRetryOn429, checkTimeoutMs, type CallSettings } from './settings';
import { uploadBody, type FetchInit, type UploadBody } from './uploadBody';

/** The subset of `fetch` the client uses; inject another (a mock, a proxy-aware one) through the options. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Options of a single call; each overrides the client's setting of the same name. */
export interface RequestOptions {
  /** Longest wait for the server per attempt, in ms, above 0; `Infinity` for none (see KnowledgeClientOptions.timeoutMs). */
  timeoutMs?: number;
  /** Retries after the first attempt on 5xx, timeouts and connection failures (docs/client.md for `retrieve`). */
  maxRetries?: number;
  /** Also retry a 429, after its `Retry-After` (a 429 asking for more than 60 s is thrown). */
  retryOn429?: boolean;
  /** Aborting it cancels the call (and its retries) with a `UserAbortError`. */
  signal?: AbortSignal;
  /** Extra headers; `null` removes a default one. */
  headers?: Record<string, string | null | undefined>;
}

export interface TransportConfig {
  baseUrl: string;
  auth: AuthMethod;
  fetch: Fetch;
  timeoutMs: number;
  maxRetries: number;
  retryOn429: boolean;
  defaultHeaders: Record<string, string>;
}

export interface ApiRequest {
  method: 'GET' | 'POST';
  /** Relative to the base URL: `/listings`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined | null>;
  json?: unknown;
  upload?: UploadBody;
  /** The body is read as a stream (SSE): the timeout ends once the response has started. */
  stream?: boolean;
  /**
   * Whether sending it again does no harm when the outcome of an attempt is unknown: a timeout, or a
   * connection lost once the request may have been sent. Default: true for GET. A retrieval is
   * charged per query, so it is not retried then (docs/client.md, "Retries and timeouts").
   */
  repeatable?: boolean;
}

/** A successful response; for a stream, `abort` cancels it and `release` must be called once it is read. */
export interface Sent<T> {
  data: T;
  response: Response;
  abort(reason?: unknown): void;
  release(): void;
}

type Attempt<T> = Sent<T> | { error: ApiError; retryable: boolean };

/** What ends one attempt: the caller's signal (followed until `release`) and the timeout. */
interface AttemptAbort {
  controller: AbortController;
  deadline: Deadline;
  release: () => void;
  timeoutMs: number;
}

/** One API call: URL, headers and authentication, the timeout, and the retries. */
export class Transport {
  constructor(readonly config: TransportConfig) {}

  async send<T>(
    request: ApiRequest,
    options: RequestOptions,
    read: (response: Response) => Promise<T>,
  ): Promise<Sent<T>> {
    if (request.upload && this.config.auth.kind === 'wallet') {
      throw new KnowledgeClientError(
        'Uploads need an API key: a wallet signature covers JSON bodies only (DESIGN §2).',
      );
    }
    const settings = this.settingsOf(options);
    const url = this.url(request);
    const body =
      request.json === undefined ? undefined : new TextEncoder().encode(JSON.stringify(request.json));
    for (let retry = 0; ; retry++) {
      const outcome = await this.attempt(request, url, body, options, read, settings);
      if (!('error' in outcome)) return outcome;
      if (!outcome.retryable || retry >= settings.maxRetries) throw outcome.error;
      const delay = retryDelayMs(retry, outcome.error.headers);
      if (delay === undefined) throw outcome.error;
      try {
        await sleep(delay, options.signal);
      } catch (reason) {
        throw new UserAbortError(reason);
      }
    }
  }

  /** The call's options over the client's, checked as the constructor checks the client's. */
  private settingsOf(options: RequestOptions): CallSettings {
    return {
      timeoutMs: checkTimeoutMs(options.timeoutMs ?? this.config.timeoutMs),
      maxRetries: checkMaxRetries(options.maxRetries ?? this.config.maxRetries),
      retryOn429: checkRetryOn429(options.retryOn429 ?? this.config.retryOn429),
    };
  }

  private url(request: ApiRequest): URL {
    const url = new URL(this.config.baseUrl + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, queryValue(name, value));
    }
    return url;
  }

  private async attempt<T>(
    request: ApiRequest,
    url: URL,
    body: Uint8Array | undefined,
    options: RequestOptions,
    read: (response: Response) => Promise<T>,
    { timeoutMs, retryOn429 }: CallSettings,
  ): Promise<Attempt<T>> {
    const controller = new AbortController();
    const release = follow(options.signal, controller);
    const deadline = new Deadline(timeoutMs, () => controller.abort(new TimeoutError(timeoutMs)));
    const headers = await this.signed(
      this.headers(request, url, body, options),
      `${request.method} ${url.pathname}`,
      options,
      { controller, deadline, release, timeoutMs },
    );
    const init: FetchInit = {
      method: request.method,
      headers,
      signal: controller.signal,
      redirect: 'manual',
    };
    if (body) init.body = body as Uint8Array<ArrayBuffer>;
    try {
      const progress = request.upload && uploadBody(request.upload, init, deadline);
      // The signing had its own timeout: the request gets a whole one.
      deadline.arm();
      const response = await this.config.fetch(url.toString(), init);
      if (isRedirection(response)) {
        deadline.clear();
        release();
        await response.body?.cancel().catch(() => {});
        return { error: redirectError(request.method, url, response), retryable: false };
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        deadline.clear();
        release();
        return {
          error: errorFromResponse(response.status, parseJson(text), response.headers, text),
          retryable: isRetryableStatus(response.status, retryOn429),
        };
      }
      progress?.report(progress.total);
      const data = await read(response);
      deadline.clear();
      if (!request.stream) release();
      return { data, response, abort: (reason) => controller.abort(reason), release };
    } catch (err) {
      deadline.clear();
      release();
      if (options.signal?.aborted) throw new UserAbortError(options.signal.reason);
      const repeatable = request.repeatable ?? request.method === 'GET';
      if (deadline.expired) {
        return {
          error: new TimeoutError(timeoutMs, `${request.method} ${url.pathname}`),
          retryable: repeatable,
        };
      }
      if (err instanceof KnowledgeClientError) throw err;
      if (init.redirect === 'error' && isRefusedRedirect(err)) {
        const probed = await probeRedirect(this.config.fetch, url, options.signal);
        return { error: redirectError(request.method, url, probed, probed !== undefined), retryable: false };
      }
      const message = `${request.method} ${url.origin}${url.pathname} failed: ${describe(err)}`;
      return {
        error: new ConnectionError(message, { cause: err }),
        retryable: repeatable || neverSent(err),
      };
    }
  }

  /**
   * The attempt's headers once signed. A wallet's `sign` may wait for its user, or never settle: it gets
   * a timeout of its own and ends with the caller's signal. Its own refusal (a user declining) is thrown
   * as it is, not taken for a network failure; nothing was sent, and neither is retried, which would ask
   * the wallet again.
   */
  private async signed(
    headers: Promise<Headers>,
    what: string,
    options: RequestOptions,
    { controller, deadline, release, timeoutMs }: AttemptAbort,
  ): Promise<Headers> {
    try {
      deadline.arm();
      const signed = await untilAborted(headers, controller.signal);
      // Aborted as the signature arrived (both settle in the same turn): nothing is sent.
      controller.signal.throwIfAborted();
      return signed;
    } catch (err) {
      deadline.clear();
      release();
      if (options.signal?.aborted) throw new UserAbortError(options.signal.reason);
      if (deadline.expired) throw new TimeoutError(timeoutMs, `signing ${what}`);
      throw err;
    }
  }

  private async headers(
    request: ApiRequest,
    url: URL,
    body: Uint8Array | undefined,
    options: RequestOptions,
  ): Promise<Headers> {
    const headers = new Headers({ accept: request.stream ? 'text/event-stream' : 'application/json' });
    if (body) headers.set('content-type', 'application/json');
    for (const [name, value] of Object.entries({ ...this.config.defaultHeaders, ...options.headers })) {
      if (value === null || value === undefined) headers.delete(name);
      else headers.set(name, value);
    }
    if (!headers.has('authorization')) {
      headers.set(
        'authorization',
        await authorization(this.config.auth, {
          method: request.method,
          pathWithQuery: url.pathname + url.search,
          body,
        }),
      );
    }
    return headers;
  }
}

/** The body of a successful JSON response; a body that is not JSON is an `invalid_response` error. */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  const value = parseJson(text);
  if (value === undefined) {
    throw new ApiError({
      code: 'invalid_response',
      status: response.status,
      message: `Expected a JSON body, got: ${text.slice(0, 200) || '(nothing)'}`,
      requestId: response.headers.get('x-request-id') ?? undefined,
      headers: response.headers,
    });
  }
  return value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Failures that show the request never reached a server (Node's codes; a browser's fetch says nothing,
 * so there every connection failure counts as possibly sent).
 */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function neverSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' && NOT_SENT_CODES.has(code);
}

/** The useful part of a fetch failure: undici puts the system error (ECONNREFUSED, ...) in `cause`. */
function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
