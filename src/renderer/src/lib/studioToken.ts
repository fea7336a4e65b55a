import { readStudioToken, STUDIO_TOKEN_META, StudioApiError } from './studioApi';

const TOKEN_HEADER = 'X-Studio-Token';

let renewing: Promise<boolean> | undefined;
const restartListeners = new Set<() => void>();

/** Fails with `missing_token` when the page holds no studio token (not opened from a studio server). */
export function requireStudioToken(): void {
  if (!readStudioToken()) {
    throw new StudioApiError({
      code: 'missing_token',
      status: 0,
      message: 'This page has no studio token. Open the studio from the address `kbstudio serve` printed.',
    });
  }
}

/**
 * Calls `listener` whenever the token is found to have changed, i.e. the server was started again:
 * what the page shows may be out of date (jobs a stop interrupted, changes made meanwhile).
 * Returns the unsubscribe function.
 */
export function onServerRestarted(listener: () => void): () => void {
  restartListeners.add(listener);
  return () => {
    restartListeners.delete(listener);
  };
}

/**
 * Reads the studio token again from the page the server serves, as a reload would. A `kbstudio serve`
 * started again has a new token while this page kept the old one, so every studio call was refused
 * until the creator reloaded. Only a page of this origin can read that page (the same rule as for the
 * first token). Resolves true when the token changed; concurrent callers share one read.
 */
export function renewStudioToken(): Promise<boolean> {
  renewing ??= (async () => {
    try {
      const response = await fetch('/', { cache: 'no-store', credentials: 'same-origin' });
      if (!response.ok) return false;
      const page = new DOMParser().parseFromString(await response.text(), 'text/html');
      const fresh = readStudioToken(page);
      const meta = document.querySelector<HTMLMetaElement>(`meta[name="${STUDIO_TOKEN_META}"]`);
      if (!fresh || !meta || meta.content === fresh) return false;
      meta.content = fresh;
      for (const listener of restartListeners) listener();
      return true;
    } catch {
      return false; // the server is still down: the call's own error says so
    } finally {
      renewing = undefined;
    }
  })();
  return renewing;
}

/** Whether a 401 is the studio guard refusing this page's token (not another refusal). */
async function refusesToken(response: Response): Promise<boolean> {
  if (response.status !== 401) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: string } } | undefined;
  return body?.error?.code === 'unauthorized';
}

/**
 * fetch with this page's current studio token. When the server refuses the token (it was started
 * again), the token is read again from the server's page and the request sent once more: the guard
 * refused it before anything ran, so sending it again does nothing twice. The studio's clients give a
 * URL and their headers and body in `init` (a Request's own headers are not read).
 */
export async function fetchWithStudioToken(
  input: RequestInfo | URL,
  init: RequestInit = {},
): Promise<Response> {
  const sentWith = readStudioToken();
  const send = () => {
    const headers = new Headers(init.headers);
    const token = readStudioToken();
    if (token) headers.set(TOKEN_HEADER, token);
    return fetch(input, { ...init, headers });
  };
  const response = await send();
  if (!(await refusesToken(response))) return response;
  // Another call may have renewed the token while this one was under way: then just send it again.
  if (readStudioToken() === sentWith && !(await renewStudioToken())) return response;
  return send();
}
