import { StudioApiError } from './studioApi';
import { fetchWithStudioToken, requireStudioToken } from './studioToken';

/** fetch against /studio with the token; a failure becomes a StudioApiError with the server's message. */
export async function studioFetch(path: string, init: RequestInit = {}): Promise<Response> {
  requireStudioToken();
  let response: Response;
  try {
    response = await fetchWithStudioToken(`/studio${path}`, init);
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new StudioApiError({
      code: 'network_error',
      status: 0,
      message: `Cannot reach the studio server (${(err as Error).message}). Is it still running?`,
    });
  }
  if (!response.ok) {
    const text = await response.text();
    let body: { error?: { code: string; message: string; requestId?: string } } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Not the server's error body: keep what was said.
    }
    throw new StudioApiError({
      code: body.error?.code ?? `http_${response.status}`,
      status: response.status,
      message:
        body.error?.message ?? (text.slice(0, 300) || `The studio server answered ${response.status}.`),
      requestId: body.error?.requestId,
    });
  }
  return response;
}

export async function studioJson<T>(path: string, init?: RequestInit): Promise<T> {
  return ((await (await studioFetch(path, init)).json()) as { data: T }).data;
}
