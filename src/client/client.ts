import { authMethodOf, type WalletSigner } from './auth';
import type { ApiPromise } from './http/apiPromise';
import { Transport, type Fetch, type RequestOptions } from './http/request';
import { KnowledgeClientError } from './errors';
import { checkMaxRetries, checkRetryOn429, checkTimeoutMs } from './http/settings';
import { Credentials } from './resources/credentials';
import { Listings } from './resources/listings';
import { retrieve, retrieveStream } from './resources/retrieval';
import { Uploads, type UploadOptions } from './resources/uploads';
import type { RetrievalStream } from './stream';
import type { RetrievalResult, RetrieveParams, Upload, UploadConfig, UploadFile } from './types';

export interface KnowledgeClientOptions {
  /**
   * The API's base address with its version prefix, e.g. `https://api.example.com/v1`. A bare origin
   * (`http://127.0.0.1:7410`) gets `/v1` added.
   */
  baseUrl: string;
  /** An API key (`kbs_...`), sent as `Authorization: Bearer <key>`. Give this or `signer`. */
  apiKey?: string;
  /** A wallet that signs every request instead (`Authorization: Wallet ...`); not for uploads. */
  signer?: WalletSigner;
  /**
   * Longest wait for the server per attempt, in ms (default 10000): until the whole response of a
   * JSON call, until the first byte of a stream, and the longest pause while sending an upload. Any
   * number above 0; `Infinity` for no timeout.
   */
  timeoutMs?: number;
  /**
   * Retries of 5xx, timeouts and connection failures (default 2); never of a 4xx. A retrieval's
   * timeout is not retried: it may have been charged (docs/client.md).
   */
  maxRetries?: number;
  /** Retry a 429 too, after its `Retry-After` (a 429 asking for more than 60 s is thrown; default false). */
  retryOn429?: boolean;
  /** Another `fetch` (default: the global one). */
  fetch?: Fetch;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RETRIES = 2;

/** The client of a Knowledge Marketplace `/v1` API: the hosted service, or a KB Studio serving it locally. */
export class KnowledgeClient {
  readonly baseUrl: string;
  readonly listings: Listings;
  readonly credentials: Credentials;
  readonly uploads: Uploads;
  private readonly transport: Transport;

  constructor(options: KnowledgeClientOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    const timeoutMs = checkTimeoutMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const maxRetries = checkMaxRetries(options.maxRetries ?? DEFAULT_MAX_RETRIES);
    const retryOn429 = checkRetryOn429(options.retryOn429 ?? false);
    const fetch = options.fetch ?? globalThis.fetch?.bind(globalThis);
    if (!fetch) throw new KnowledgeClientError('No fetch in this runtime: pass one as the `fetch` option.');
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      auth: authMethodOf(options),
      fetch,
      timeoutMs,
      maxRetries,
      retryOn429,
      defaultHeaders: { ...options.defaultHeaders },
    });
    this.listings = new Listings(this.transport);
    this.credentials = new Credentials(this.transport);
    this.uploads = new Uploads(this.transport);
  }

  /** POST /retrieve: the listing's best chunks for `query`, best first. Needs an active credential (else AccessError). */
  retrieve(params: RetrieveParams, options?: RequestOptions): ApiPromise<RetrievalResult> {
    return retrieve(this.transport, params, options);
  }

  /** POST /retrieve/stream: `for await (const chunk of client.retrieveStream(params))`. */
  retrieveStream(params: RetrieveParams, options?: RequestOptions): RetrievalStream {
    return retrieveStream(this.transport, params, options);
  }

  /** POST /upload; the same as `uploads.create`. */
  upload(
    files: UploadFile | UploadFile[],
    config?: UploadConfig,
    options?: UploadOptions,
  ): ApiPromise<Upload> {
    return this.uploads.create(files, config, options);
  }
}

function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new KnowledgeClientError(
      `baseUrl '${baseUrl}' is not an absolute URL such as https://api.example.com/v1.`,
    );
  }
  if (url.search || url.hash)
    throw new KnowledgeClientError(`baseUrl '${baseUrl}' must not have a query or fragment.`);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/v1' : path}`;
}
