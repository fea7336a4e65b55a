import { StudioApiError, unreachableError } from './studioApi';
import { fetchWithStudioToken, requireStudioToken } from './studioToken';

/** A file a request sends, under the name the user knows it by (its path in a dropped folder). */
export interface NamedFile {
  name: string;
  file: Blob;
}

/** The files a request's body carries, checked when the request fails (see studioFetch). */
export interface UploadedFiles {
  files: readonly NamedFile[];
  /** Where the page keeps them ("the queue"): the advice is then to remove them from there and add them again. */
  keptIn?: string;
}

/** Files named one by one in a message; the rest are counted. */
const NAMES_SHOWN = 5;
/** Files read at once while checking them. */
const CHECKS_AT_ONCE = 32;

/**
 * Files of a request that could no longer be read: changed (or removed) on disk after the user picked
 * them. A browser holds a picked file as it was then and refuses to send it once it changed (Chromium's
 * ERR_UPLOAD_FILE_CHANGED), which fetch reports only as "Failed to fetch", like a server that is away.
 */
export class FilesChangedError extends StudioApiError {
  readonly names: string[];

  constructor(names: string[], keptIn?: string) {
    super({ code: 'file_changed', status: 0, message: filesChangedMessage(names, keptIn) });
    this.name = 'FilesChangedError';
    this.names = names;
  }
}

/** "'a.md' changed (or was removed) on disk after it was added: remove it from the queue and add it again." */
export function filesChangedMessage(names: readonly string[], keptIn?: string): string {
  const one = names.length === 1;
  const shown = names.slice(0, NAMES_SHOWN).map((n) => `'${n}'`);
  const more = names.length - shown.length;
  const list =
    more > 0
      ? `${shown.join(', ')} and ${more} more ${more === 1 ? 'file' : 'files'}`
      : shown.length > 1
        ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`
        : shown.join('');
  const it = one ? 'it' : 'them';
  const advice = keptIn ? `remove ${it} from ${keptIn} and add ${it} again` : `choose ${it} again`;
  return one
    ? `${list} changed (or was removed) on disk after it was added: ${advice}.`
    : `${list} changed (or were removed) on disk after they were added: ${advice}.`;
}

/** Whether a picked file can still be read: reading a byte of one that changed on disk rejects. */
export async function isReadable(file: Blob): Promise<boolean> {
  try {
    await file.slice(0, 1).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** The names of the files that can no longer be read, in order. */
export async function unreadableFiles(files: readonly NamedFile[]): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < files.length; i += CHECKS_AT_ONCE) {
    const batch = files.slice(i, i + CHECKS_AT_ONCE);
    const readable = await Promise.all(batch.map((f) => isReadable(f.file)));
    batch.forEach((f, j) => {
      if (!readable[j]) names.push(f.name);
    });
  }
  return names;
}

/** The files of a FormData body, named by their file names. */
function filesOfForm(body: RequestInit['body']): UploadedFiles | undefined {
  if (typeof FormData === 'undefined' || !(body instanceof FormData)) return undefined;
  const files: NamedFile[] = [];
  for (const value of body.values()) if (value instanceof File) files.push({ name: value.name, file: value });
  return { files };
}

/**
 * fetch against /studio with the token; a failure becomes a StudioApiError with the server's message.
 * A request that got no answer and carried files (`uploads`, or a FormData body's) is told apart from a
 * server that is away: when any of its files can no longer be read, the error is a FilesChangedError
 * naming them, and sending it again would fail the same way.
 */
export async function studioFetch(
  path: string,
  init: RequestInit = {},
  uploads?: UploadedFiles,
): Promise<Response> {
  requireStudioToken();
  let response: Response;
  try {
    response = await fetchWithStudioToken(`/studio${path}`, init);
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    const sent = uploads ?? filesOfForm(init.body);
    const changed = sent ? await unreadableFiles(sent.files) : [];
    if (changed.length > 0) throw new FilesChangedError(changed, sent?.keptIn);
    throw unreachableError(err);
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

export async function studioJson<T>(path: string, init?: RequestInit, uploads?: UploadedFiles): Promise<T> {
  return ((await (await studioFetch(path, init, uploads)).json()) as { data: T }).data;
}
