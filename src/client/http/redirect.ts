import { ApiError } from '../errors';

/**
 * The client never follows a redirect. `fetch` would follow a 302 or 303 to a POST /retrieve with a
 * GET of the new address and hand back whatever page answers it, and would send the request (with its
 * key or signature) wherever `Location` says. A 3xx is thrown instead, unretried, for the caller to fix
 * `baseUrl`.
 */
export const REDIRECT_ERROR_CODE = 'unexpected_redirect';

/**
 * A 3xx answer, as `redirect: 'manual'` gives it: the response itself in Node (undici), an opaque
 * response of status 0 in browsers, which hide its status and Location.
 */
export function isRedirection(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

/**
 * The error for a redirected request; `response` is absent when the runtime refused the redirect, and
 * `probed` when the answer is the one a HEAD of the same address got (probeRedirect), not the request's.
 */
export function redirectError(method: string, url: URL, response?: Response, probed = false): ApiError {
  const call = `${method} ${url.origin}${url.pathname}`;
  const status = response && response.status !== 0 ? response.status : undefined;
  const location = response?.headers.get('location') ?? undefined;
  const seen = probed ? ' (as a HEAD of the same address was answered)' : '';
  const answer =
    status === undefined
      ? 'a redirect (the runtime does not reveal its status or Location)'
      : `a redirect, HTTP ${status}${location ? ` to ${location}` : ' without a Location'}${seen}`;
  return new ApiError({
    code: REDIRECT_ERROR_CODE,
    status,
    message: `${call} was answered with ${answer}. The client does not follow redirects: set baseUrl to the API's own address.`,
    requestId: response?.headers.get('x-request-id') ?? undefined,
    headers: response?.headers,
  });
}

/**
 * Whether a fetch failure is the runtime refusing a redirect under `redirect: 'error'` (a streamed
 * upload in Node): undici says "unexpected redirect" in the cause of its "fetch failed".
 */
export function isRefusedRedirect(err: unknown): boolean {
  const messages = [err, (err as { cause?: unknown } | undefined)?.cause].map((e) =>
    e instanceof Error ? e.message : '',
  );
  return messages.some((message) => /redirect/i.test(message));
}

/** How long the HEAD of probeRedirect may take: it only improves an error message. */
export const REDIRECT_PROBE_TIMEOUT_MS = 5_000;

/**
 * A streamed upload in Node refuses redirects outright (uploadBody.ts), which hides the redirect's
 * status and Location. A HEAD of the same address, without the request's credentials or body, is
 * usually redirected the same way (a moved host, http to https) and shows them: its response when it
 * is a redirect, else undefined (the message then says the runtime hid them).
 */
export async function probeRedirect(
  fetchFn: (url: string, init: RequestInit) => Promise<Response>,
  url: URL,
  signal: AbortSignal | undefined,
): Promise<Response | undefined> {
  const timeout = AbortSignal.timeout(REDIRECT_PROBE_TIMEOUT_MS);
  try {
    const response = await fetchFn(url.toString(), {
      method: 'HEAD',
      redirect: 'manual',
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    await response.body?.cancel().catch(() => {});
    return isRedirection(response) && response.status !== 0 ? response : undefined;
  } catch {
    return undefined;
  }
}
