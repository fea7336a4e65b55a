import type { QueuedFile } from './types';

/** OS litter that never belongs in a knowledge base (the server skips it inside folders too). */
const LITTER = /(^|\/)(\.DS_Store|Thumbs\.db|desktop\.ini|__MACOSX\/.*|\._[^/]*)$/i;

export const isLitter = (path: string) => LITTER.test(path);

/** Files chosen with an <input type="file"> (with `webkitdirectory`, each carries its relative path). */
export function filesFromInput(files: Iterable<File>): QueuedFile[] {
  return [...files]
    .map((file) => ({ file, path: file.webkitRelativePath || file.name }))
    .filter((f) => !isLitter(f.path));
}

/**
 * Files dropped on the window: folders are walked (their relative paths kept as source names), plain
 * files and ZIP archives are taken as they are. The entries must be read during the drop event.
 */
export async function filesFromDrop(transfer: DataTransfer): Promise<QueuedFile[]> {
  const entries = [...transfer.items]
    .filter((item) => item.kind === 'file')
    .map((item) => item.webkitGetAsEntry?.() ?? null);
  if (entries.length === 0 || entries.some((e) => e === null)) return filesFromInput(transfer.files);
  const out: QueuedFile[] = [];
  for (const entry of entries) await walk(entry!, out);
  return out.filter((f) => !isLitter(f.path));
}

async function walk(entry: FileSystemEntry, out: QueuedFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) =>
      (entry as FileSystemFileEntry).file(resolve, reject),
    );
    out.push({ file, path: entry.fullPath.replace(/^\//, '') || file.name });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in batches (100 in Chromium) until it returns none.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) =>
      reader.readEntries(resolve, reject),
    );
    if (batch.length === 0) break;
    for (const child of batch) await walk(child, out);
  }
}

/** Adds files to the queue; a path already queued is replaced by the newer file. */
export function mergeQueue(queue: QueuedFile[], added: QueuedFile[]): QueuedFile[] {
  const byPath = new Map(queue.map((f) => [f.path, f]));
  for (const f of added) byPath.set(f.path, f);
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}
