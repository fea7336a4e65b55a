import type { Deadline } from './abort';
import { canStreamRequestBodies } from './runtime';

export interface UploadBody {
  blob: Blob;
  contentType: string;
  onProgress?: (progress: UploadProgress) => void;
}

export interface UploadProgress {
  /** Bytes of the multipart body sent so far (restarts from 0 on a retry). */
  loaded: number;
  /** Size of the whole multipart body in bytes. */
  total: number;
}

export type FetchInit = RequestInit & { duplex?: 'half' };

/**
 * Sets the multipart body of an upload on `init`. Where fetch can stream it, each piece sent reports
 * progress and re-arms the timeout, which then bounds a stall rather than the length of a large upload.
 */
export function uploadBody(upload: UploadBody, init: FetchInit, deadline: Deadline): UploadReporter {
  const progress = new UploadReporter(upload.blob.size, upload.onProgress);
  (init.headers as Headers).set('content-type', upload.contentType);
  if (canStreamRequestBodies()) {
    init.body = countingStream(upload.blob, (loaded) => {
      deadline.arm();
      progress.report(loaded);
    });
    init.duplex = 'half';
    // Not 'manual' as for other calls: unless redirects are refused outright, undici's fetch tees a
    // stream body to replay it and keeps every byte sent in memory until the end (nodejs/undici#4058).
    // The refusal costs the redirect's status and Location, but is the same error (./redirect.ts).
    init.redirect = 'error';
  } else {
    init.body = upload.blob;
  }
  return progress;
}

/** Calls onProgress only when the count moved, so the final report after the response is not a repeat. */
export class UploadReporter {
  private last = -1;

  constructor(
    readonly total: number,
    private readonly onProgress: ((progress: UploadProgress) => void) | undefined,
  ) {
    this.report(0);
  }

  report(loaded: number): void {
    if (loaded === this.last) return;
    this.last = loaded;
    this.onProgress?.({ loaded, total: this.total });
  }
}

/**
 * The Blob as a stream that reports each piece as it is pulled by the request (`onBytes(total so far)`),
 * which tracks what was sent within the transport's buffering.
 */
function countingStream(blob: Blob, onBytes: (loaded: number) => void): ReadableStream<Uint8Array> {
  let loaded = 0;
  return blob.stream().pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(piece, controller) {
        loaded += piece.byteLength;
        controller.enqueue(piece);
        onBytes(loaded);
      },
    }),
  );
}
