import { EmbeddingModelUnavailable } from '../errors';
import { redactKey } from './redact';

/** How a hosted provider is called: retries, backoff and timeouts (after openai-node's client). */
export interface ProviderRequestOptions {
  /** The fetch to call; tests and proxies may inject their own. */
  fetch?: typeof globalThis.fetch;
  /** Retries after the first attempt, for 408, 409, 429, 5xx, network errors and timeouts. Default 4. */
  maxRetries?: number;
  /** Time allowed for one attempt, reading the body included. Default 60 s. */
  timeoutMs?: number;
  /** The first backoff delay; it doubles on each retry up to `maxDelayMs`, less up to 25 % jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A `Retry-After` up to this long is waited for as asked; a longer one falls back to the backoff. */
  maxRetryAfterMs?: number;
  /** Waits between attempts; tests inject one that records the delays instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** What a query's embedding gets in all, attempts and waits together. Default QUERY_DEADLINE_MS. */
  queryDeadlineMs?: number;
}

/**
 * A query's embedding is on a request's path: the client library gives up after 10 s (spec §8), so a
 * provider that does not answer must fail the query before that, not after 60 s × 5 attempts.
 */
export const QUERY_DEADLINE_MS = 8_000;
/** A retry with less time left than this is not worth starting. */
const MIN_ATTEMPT_MS = 250;

export interface ProviderCall {
  /** The provider's name as users know it, e.g. 'OpenAI'. */
  provider: string;
  model: string;
  url: string;
  apiKey: string;
  body: unknown;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The provider's own message in an error response body, if it has one. */
  errorMessage: (body: unknown) => string | undefined;
  /** Appended when the key is refused: where the key is set. */
  keyHint: string;
}

/** What a query's embedding gets in all (attempts and waits): see ProviderRequestOptions.queryDeadlineMs. */
export const queryDeadline = (options: ProviderRequestOptions): number =>
  options.queryDeadlineMs ?? QUERY_DEADLINE_MS;

const DEFAULTS = {
  maxRetries: 4,
  timeoutMs: 60_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** The longest provider message quoted in an error; an HTML error page is not worth more. */
const MAX_MESSAGE = 300;
/** How much of an error body is read for its message (and searched for the key) at most. */
const MAX_ERROR_BODY = 64 * 1024;

type Attempt =
  | { ok: true; json: unknown }
  | { ok: false; retryable: boolean; reason: string; hint?: string; retryAfterMs?: number };

/** What an HTTP header value may hold (visible ASCII, spaces and tabs). */
const HEADER_SAFE = /^[\t\x20-\x7e]*$/;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * POSTs a JSON body with a bearer key and returns the parsed JSON answer. Rate limits, server errors,
 * network failures and timeouts are retried with backoff; anything still failing, and every refusal,
 * becomes `EmbeddingModelUnavailable` (503 `embedding_provider_unavailable`) quoting the provider.
 */
export async function postJson(
  call: ProviderCall,
  options: ProviderRequestOptions = {},
  /**
   * The time all attempts and the waits between them get together: each attempt's timeout is cut to
   * what is left, and no retry starts that would have to wait past it. Unset: no such limit.
   */
  deadlineMs?: number,
): Promise<unknown> {
  if (!HEADER_SAFE.test(call.apiKey)) {
    // fetch would refuse the header with a message quoting it, and the refusal would be retried.
    throw new EmbeddingModelUnavailable(
      call.model,
      `the ${call.provider} API key holds a character that cannot be sent in a request header (a line break, a control or a non-ASCII character). ${call.keyHint}`,
    );
  }
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const sleep = options.sleep ?? wait;
  const attempts = Math.max(0, Math.floor(settings.maxRetries)) + 1;
  const body = JSON.stringify(call.body);
  const started = performance.now();
  const left = () => (deadlineMs === undefined ? Infinity : deadlineMs - (performance.now() - started));
  for (let attempt = 1; ; attempt++) {
    const timeoutMs = Math.max(1, Math.min(settings.timeoutMs, Math.ceil(left())));
    const outcome = await attemptOnce(call, body, options.fetch ?? globalThis.fetch, timeoutMs);
    if (outcome.ok) return outcome.json;
    const delay = outcome.retryable ? retryDelay(attempt, outcome.retryAfterMs, settings) : 0;
    const outOfTime = left() - delay < MIN_ATTEMPT_MS;
    if (!outcome.retryable || attempt >= attempts || outOfTime) {
      const tries = attempt > 1 ? ` (gave up after ${attempt} attempts)` : '';
      const deadline =
        outcome.retryable && outOfTime && attempt < attempts
          ? ` (a query's embedding gets ${deadlineMs! / 1000} s in all)`
          : '';
      const hint = outcome.hint ? ` ${outcome.hint}` : '';
      // The reason may quote the provider or a network error: neither may carry the key any further.
      const reason = redactKey(`${outcome.reason}${tries}${deadline}.`, call.apiKey);
      throw new EmbeddingModelUnavailable(call.model, `${reason}${hint}`);
    }
    await sleep(delay);
  }
}

async function attemptOnce(
  call: ProviderCall,
  body: string,
  fetchImpl: typeof globalThis.fetch,
  timeoutMs: number,
): Promise<Attempt> {
  const { provider } = call;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetchImpl(call.url, {
      method: 'POST',
      headers: {
        ...call.headers,
        Authorization: `Bearer ${call.apiKey}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
      },
      body,
      signal: controller.signal,
    });
    const text = await res.text();
    if (res.ok) {
      try {
        return { ok: true, json: JSON.parse(text) };
      } catch {
        return {
          ok: false,
          retryable: false,
          reason: `${provider} answered ${res.status} with a body that is not JSON`,
        };
      }
    }
    // Redacted before it is cut short, so a key cut by the cut cannot survive as a fragment.
    const quoted = quote(
      redactKey(
        providerMessage(text.slice(0, MAX_ERROR_BODY), call.errorMessage) || res.statusText,
        call.apiKey,
      ),
    );
    const status = `${res.status}${quoted ? `: ${quoted}` : ''}`;
    const retryable = shouldRetry(res);
    if (res.status === 401) {
      return {
        ok: false,
        retryable,
        reason: `${provider} refused the API key (${status})`,
        hint: call.keyHint,
      };
    }
    const what =
      res.status === 429
        ? `${provider} is rate limiting requests`
        : res.status >= 500
          ? `${provider} failed`
          : `${provider} rejected the request`;
    return { ok: false, retryable, reason: `${what} (${status})`, retryAfterMs: retryAfterMs(res.headers) };
  } catch (err) {
    if (controller.signal.aborted) {
      return {
        ok: false,
        retryable: true,
        reason: `${provider} did not answer within ${timeoutMs / 1000} s`,
      };
    }
    return {
      ok: false,
      retryable: true,
      reason: `could not reach ${provider} at ${call.url}: ${causeOf(err)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** openai-node's rule: the server may say so explicitly; else timeouts, lock conflicts, rate limits and 5xx. */
function shouldRetry(res: Response): boolean {
  const explicit = res.headers.get('x-should-retry');
  if (explicit === 'true') return true;
  if (explicit === 'false') return false;
  return res.status === 408 || res.status === 409 || res.status === 429 || res.status >= 500;
}

/** `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms)) return ms;
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : date - Date.now();
}

export function retryDelay(
  attempt: number,
  retryAfter: number | undefined,
  { baseDelayMs, maxDelayMs, maxRetryAfterMs }: typeof DEFAULTS,
  random: () => number = Math.random,
): number {
  if (retryAfter !== undefined && retryAfter >= 0 && retryAfter <= maxRetryAfterMs) return retryAfter;
  const backoff = Math.min(baseDelayMs * 2 ** (attempt - 1), maxDelayMs);
  return backoff * (1 - random() * 0.25);
}

function providerMessage(text: string, extract: (body: unknown) => string | undefined): string | undefined {
  try {
    const message = extract(JSON.parse(text));
    if (message) return message;
  } catch {
    // Not JSON (a proxy's error page, say): quote the text itself.
  }
  return text;
}

function quote(text: string | undefined): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE)}…` : flat;
}

/** Node's fetch reports "fetch failed" and hides the reason (ECONNREFUSED, ENOTFOUND, …) in `cause`. */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
