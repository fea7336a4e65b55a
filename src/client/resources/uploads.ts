import { ApiPromise } from '../http/apiPromise';
import { envelopeData, jsonCall, resourcePath } from '../http/calls';
import { multipartBody, type FormPart } from '../http/multipart';
import type { RequestOptions, Transport } from '../http/request';
import type { UploadProgress } from '../http/uploadBody';
import { sleep } from '../http/retry';
import { KnowledgeClientError, UserAbortError } from '../errors';
import { MAX_TIMER_MS, shown } from '../http/settings';
import type { Upload, UploadConfig, UploadFile } from '../types';

export interface UploadOptions extends RequestOptions {
  /** Called as the body is sent: from `{loaded: 0}` to `{loaded: total}`. See docs/client.md for browsers. */
  onProgress?: (progress: UploadProgress) => void;
}

export interface WaitOptions {
  /** Time between two looks at the upload, in ms (default 1000; at most 2^31 - 1, about 24.8 days). */
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

const WIRE_CONFIG_KEYS: Record<string, string> = {
  embeddingModel: 'embedding_model',
  listingId: 'listing_id',
  chunkSize: 'chunk_size',
  chunkOverlap: 'chunk_overlap',
  requiredColumns: 'required_columns',
};

export class Uploads {
  constructor(private readonly transport: Transport) {}

  /**
   * POST /upload: multipart `files` (ZIP archives, or single supported files) and `config`. The server
   * accepts it at once (status `queued`) and ingests it in the background: follow it with `get` or `wait`.
   */
  create(
    files: UploadFile | UploadFile[],
    config: UploadConfig = {},
    options: UploadOptions = {},
  ): ApiPromise<Upload> {
    const { onProgress, ...requestOptions } = options;
    let parts: FormPart[];
    try {
      parts = formParts(files, config);
    } catch (err) {
      return new ApiPromise(Promise.reject(err));
    }
    return jsonCall(
      this.transport,
      {
        method: 'POST',
        path: '/upload',
        upload: { ...multipartBody(parts), onProgress },
        // Sent again into a listing, the files it holds are reported unchanged; without one, a second
        // draft listing and job would be created, so a timeout or lost connection is not retried then.
        repeatable: config.listingId !== undefined,
      },
      requestOptions,
      envelopeData<Upload>,
    );
  }

  /** GET /upload/:id: progress, then per-file results. */
  get(id: string, options?: RequestOptions): ApiPromise<Upload> {
    return jsonCall(
      this.transport,
      () => ({ method: 'GET', path: resourcePath('/upload', id, 'uploads.get: id') }),
      options,
      envelopeData<Upload>,
    );
  }

  /**
   * Polls until the upload is `completed` or `failed` and returns it; a failed upload is returned, not
   * thrown: its `error` and per-file `files[].error` say why.
   */
  async wait(id: string, { pollIntervalMs = 1000, signal }: WaitOptions = {}): Promise<Upload> {
    // A longer delay than a timer takes would poll every millisecond instead.
    if (typeof pollIntervalMs !== 'number' || !(pollIntervalMs >= 0 && pollIntervalMs <= MAX_TIMER_MS)) {
      throw new KnowledgeClientError(
        `pollIntervalMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, not ${shown(pollIntervalMs)}.`,
      );
    }
    for (;;) {
      const upload = await this.get(id, { signal });
      if (upload.status === 'completed' || upload.status === 'failed') return upload;
      try {
        await sleep(pollIntervalMs, signal);
      } catch (reason) {
        throw new UserAbortError(reason);
      }
    }
  }
}

function formParts(files: UploadFile | UploadFile[], config: UploadConfig): FormPart[] {
  const list = Array.isArray(files) ? files : [files];
  if (list.length === 0) throw new KnowledgeClientError('upload: pass at least one file.');
  // `config` first: the server checks it (listing, owner, model) as it arrives, and refuses a bad one
  // before the archives are sent.
  return [
    { name: 'config', value: JSON.stringify(wireConfig(config)) },
    ...list.map((file) => ({ name: 'files', ...filePart(file) })),
  ];
}

function filePart(file: UploadFile): { file: Blob; filename: string } {
  if (file instanceof Blob) {
    const name = (file as Blob & { name?: unknown }).name;
    return { file, filename: typeof name === 'string' && name !== '' ? name : 'upload.zip' };
  }
  if (typeof file?.name !== 'string' || file.name === '') {
    throw new KnowledgeClientError('upload: a file given as { name, data } needs a non-empty name.');
  }
  const data = file.data instanceof Blob ? file.data : new Blob([file.data as Uint8Array<ArrayBuffer>]);
  return { file: data, filename: file.name };
}

/** The spec's snake_case keys; keys this library does not know are passed on unchanged. */
function wireConfig(config: UploadConfig): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value !== undefined) wire[WIRE_CONFIG_KEYS[key] ?? key] = value;
  }
  return wire;
}
