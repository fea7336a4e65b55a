import type { ErrorBody } from '../../../shared/errors';
import type {
  CreateListingInput,
  Listing,
  ListingSearchQuery,
  UpdateListingInput,
} from '../../../shared/listings';
import type { Pagination } from '../../../shared/pagination';
import type { ApiKey, CreatedApiKey, StudioInfo, Wallet } from '../../../shared/studio';

/** The meta tag the server adds to index.html with this launch's studio token. */
export const STUDIO_TOKEN_META = 'kbstudio-token';
const TOKEN_HEADER = 'X-Studio-Token';

/** A failed studio request, carrying the server's error body (or a local code when there was none). */
export class StudioApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly requestId: string | undefined;
  readonly details: unknown;

  constructor(body: {
    code: string;
    message: string;
    status: number;
    requestId?: string;
    details?: unknown;
  }) {
    super(body.message);
    this.name = 'StudioApiError';
    this.code = body.code;
    this.status = body.status;
    this.requestId = body.requestId;
    this.details = body.details;
  }
}

/**
 * A request that got no answer at all. The browser says only "Failed to fetch" whatever the cause, so this
 * says it when nothing else can explain it: a request carrying files checks them first (studioFetch).
 */
export function unreachableError(cause: unknown): StudioApiError {
  return new StudioApiError({
    code: 'network_error',
    status: 0,
    message: `Cannot reach the studio server (${cause instanceof Error ? cause.message : String(cause)}). Is it still running?`,
  });
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export type ListingQuery = Partial<ListingSearchQuery>;
export type CreateListingBody = Omit<CreateListingInput, 'creatorWallet'>;
export type CreateApiKeyBody = { label?: string; wallet?: string };

export interface StudioApi {
  info(): Promise<StudioInfo>;
  listings: {
    list(query?: ListingQuery): Promise<Page<Listing>>;
    get(id: string): Promise<Listing>;
    create(body: CreateListingBody): Promise<Listing>;
    update(id: string, patch: UpdateListingInput): Promise<Listing>;
    publish(id: string): Promise<Listing>;
    /** Deletes a draft with its whole knowledge base. */
    delete(id: string): Promise<{ id: string; deleted: true }>;
  };
  keys: {
    list(): Promise<ApiKey[]>;
    create(body: CreateApiKeyBody): Promise<CreatedApiKey>;
    revoke(id: string): Promise<ApiKey>;
  };
  wallets: {
    list(): Promise<Wallet[]>;
    create(body: { name?: string }): Promise<Wallet>;
  };
}

export interface StudioApiOptions {
  /** This launch's studio token; without one every call fails with `missing_token`. */
  token: string | undefined;
  /** Origin of the studio server; '' = the page's own. */
  baseUrl?: string;
  fetch?: typeof fetch;
}

/** Reads the studio token the server put in the page. */
export function readStudioToken(doc: Pick<Document, 'querySelector'> = document): string | undefined {
  const content = doc.querySelector<HTMLMetaElement>(`meta[name="${STUDIO_TOKEN_META}"]`)?.content;
  return content || undefined;
}

export function createStudioApi(options: StudioApiOptions): StudioApi {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  const base = `${options.baseUrl ?? ''}/studio`;

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!options.token) {
      throw new StudioApiError({
        code: 'missing_token',
        status: 0,
        message:
          'This page has no studio token. Open the studio from the address `kbstudio serve` printed, or from the desktop app.',
      });
    }
    const headers: Record<string, string> = { Accept: 'application/json', [TOKEN_HEADER]: options.token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetchImpl(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      // A JSON body cannot go stale on disk, unlike a file's (studioFetch): the server is away.
      throw unreachableError(err);
    }
    const text = await response.text();
    const json = parseJson(text);
    if (!response.ok) throw errorFromResponse(response, json, text);
    if (json === undefined) {
      throw new StudioApiError({
        code: 'invalid_response',
        status: response.status,
        message: `The studio server sent a response that is not JSON (${method} ${path}).`,
      });
    }
    return json as T;
  }

  const data = async <T>(method: string, path: string, body?: unknown): Promise<T> =>
    (await request<{ data: T }>(method, path, body)).data;
  const id = (value: string) => encodeURIComponent(value);

  return {
    info: () => data('GET', '/info'),
    listings: {
      list: (query = {}) => request('GET', `/listings${queryString(query)}`),
      get: (listingId) => data('GET', `/listings/${id(listingId)}`),
      create: (body) => data('POST', '/listings', body),
      update: (listingId, patch) => data('PATCH', `/listings/${id(listingId)}`, patch),
      publish: (listingId) => data('POST', `/listings/${id(listingId)}/publish`, {}),
      delete: (listingId) => data('DELETE', `/listings/${id(listingId)}`),
    },
    keys: {
      list: () => data('GET', '/keys'),
      create: (body) => data('POST', '/keys', body),
      revoke: (keyId) => data('POST', `/keys/${id(keyId)}/revoke`, {}),
    },
    wallets: {
      list: () => data('GET', '/wallets'),
      create: (body) => data('POST', '/wallets', body),
    },
  };
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorFromResponse(response: Response, json: unknown, text: string): StudioApiError {
  const error = (json as Partial<ErrorBody> | undefined)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return new StudioApiError({ ...error, status: error.status ?? response.status });
  }
  // Not the server's error body (a proxy, or the UI-not-built page): keep what it said.
  const snippet = text.trim().slice(0, 300);
  return new StudioApiError({
    code: `http_${response.status}`,
    status: response.status,
    message: snippet || `The studio server answered ${response.status} ${response.statusText}.`.trim(),
  });
}

function queryString(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * Field → message for a validation failure: the zod issues in `details.issues` when the server sent
 * them, else the "field: message" form every invalid_request message starts with.
 */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  if (!(error instanceof StudioApiError) || error.code !== 'invalid_request') return {};
  const out: Record<string, string> = {};
  const issues = (error.details as { issues?: unknown } | undefined)?.issues;
  if (Array.isArray(issues)) {
    for (const issue of issues as { path?: unknown; message?: unknown }[]) {
      const field =
        Array.isArray(issue.path) && typeof issue.path[0] === 'string' ? issue.path[0] : undefined;
      if (field && typeof issue.message === 'string' && !(field in out)) out[field] = sentence(issue.message);
    }
    if (Object.keys(out).length > 0) return out;
  }
  const match = /^([A-Za-z][\w.]*): (.+)$/s.exec(error.message);
  if (match?.[1] && match[2]) out[match[1].split('.')[0]!] = sentence(match[2]);
  return out;
}

/** Shown under an input, a message reads as a sentence of its own. */
const sentence = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** The message to show for any error a studio call can throw. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
