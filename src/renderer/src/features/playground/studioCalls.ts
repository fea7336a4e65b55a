import { StudioApiError } from '../../lib/studioApi';
import { fetchWithStudioToken, requireStudioToken } from '../../lib/studioToken';

/**
 * Calls of the studio endpoints the playground, evaluation and settings views add, with this launch's
 * token; failures throw StudioApiError with the server's code and message, like the shared client.
 */
export async function studioCall<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await studioCallAnswer<T>(method, path, body)).data;
}

/** The whole answer: `data` and what the server sends beside it (such as the settings' `cleared`). */
export async function studioCallAnswer<T, Beside extends object = object>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ data: T } & Partial<Beside>> {
  requireStudioToken();
  const headers: Record<string, string> = { Accept: 'application/json' };
  const isForm = body instanceof FormData;
  if (body !== undefined && !isForm) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetchWithStudioToken(`/studio${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
    });
  } catch (err) {
    throw new StudioApiError({
      code: 'network_error',
      status: 0,
      message: `Cannot reach the studio server (${err instanceof Error ? err.message : String(err)}).`,
    });
  }
  const text = await response.text();
  let json:
    | ({ data?: T; error?: { code: string; message: string; requestId?: string } } & Partial<Beside>)
    | undefined;
  try {
    json = text ? (JSON.parse(text) as typeof json) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok || !json) {
    const error = json?.error;
    throw new StudioApiError({
      code: error?.code ?? `http_${response.status}`,
      status: response.status,
      message:
        error?.message ?? (text.trim().slice(0, 300) || `The studio server answered ${response.status}.`),
      requestId: error?.requestId,
    });
  }
  return { ...json, data: json.data as T };
}
