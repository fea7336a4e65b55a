import type { FileWithPath } from '@mantine/dropzone';
import { isLitterInDrop } from '../../../../shared/osLitter';
import type { QueuedFile } from './types';

/**
 * Files chosen with an <input type="file"> (with `webkitdirectory`, each carries its relative path).
 * OS litter inside a chosen folder (dot-files and dot-folders, Office lock files, `.DS_Store`, …) is
 * left out by the rule `kbstudio ingest <folder>` applies, so both give the same sources.
 */
export function filesFromInput(files: Iterable<File>): QueuedFile[] {
  return [...files]
    .map((file) => ({ file, path: file.webkitRelativePath || file.name }))
    .filter((f) => !isLitterInDrop(f.path));
}

/**
 * Files from the dropzone (Mantine's, on react-dropzone): it walks dropped folders itself and gives
 * each file its path inside the drop (`/folder/sub/a.md`, or `./a.md` for a file dropped alone).
 * Those paths become the source names in the knowledge base. OS litter inside a dropped folder is left
 * out, as for a chosen folder; a file dropped by itself is kept, as the CLI reads a file named to it.
 */
export function filesFromDropzone(files: FileWithPath[]): QueuedFile[] {
  return files
    .map((file) => ({ file, path: dropPath(file) }))
    .filter((f) => f.path !== '' && !isLitterInDrop(f.path));
}

function dropPath(file: FileWithPath): string {
  const raw = file.relativePath || file.path || file.webkitRelativePath || file.name;
  const path = raw.replace(/\\/g, '/').replace(/^(\.\/|\/)+/, '');
  return path || file.name;
}

/** Adds files to the queue; a path already queued is replaced by the newer file. */
export function mergeQueue(queue: QueuedFile[], added: QueuedFile[]): QueuedFile[] {
  const byPath = new Map(queue.map((f) => [f.path, f]));
  for (const f of added) byPath.set(f.path, f);
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}
