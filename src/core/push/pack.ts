import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { ZipArchive } from 'archiver';
import type { PlannedPart } from './plan';

export interface PackProgress {
  filesDone: number;
  bytesDone: number;
}

/**
 * Writes a part's files into a ZIP at `dest`, each at its `source` path, streamed from disk to disk
 * (archiver reads each file as it goes; nothing is held whole in memory). Resolves with the ZIP's size.
 */
export async function packPart(
  part: PlannedPart,
  dest: string,
  onProgress?: (progress: PackProgress) => void,
  signal?: AbortSignal,
): Promise<number> {
  signal?.throwIfAborted();
  // Sources are mostly text, which compresses well; level 6 is zlib's own balance of size and CPU.
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const out = createWriteStream(dest);
  archive.on('progress', (p) =>
    onProgress?.({ filesDone: p.entries.processed, bytesDone: p.fs.processedBytes }),
  );
  for (const file of part.files) archive.file(file.path, { name: file.source });
  const written = Promise.all([pipeline(archive, out), archive.finalize()]);
  // An aborted archive does not always settle its promises: cancellation does not wait for them.
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      archive.abort();
      out.destroy();
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  written.catch(() => undefined);
  aborted.catch(() => undefined);
  try {
    await Promise.race([written, aborted]);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return (await stat(dest)).size;
}
