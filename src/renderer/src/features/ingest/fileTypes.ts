import { FORMAT_BY_EXTENSION, NON_DOCUMENT_EXTENSIONS } from '../../../../shared/formats';
import type { QueuedFile } from './types';

/** The documents an ingestion parses, by extension: the server's list (src/shared/formats.ts). */
const DOCUMENT_EXTENSIONS = Object.keys(FORMAT_BY_EXTENSION);

/** Also taken, but not previewed: `.jsonl` files of pre-built embeddings and `.zip` archives. */
const INGESTED_EXTENSIONS = new Set<string>([...DOCUMENT_EXTENSIONS, ...NON_DOCUMENT_EXTENSIONS]);

/**
 * A file's extension as the server reads it (Node's `path.extname` of its last segment), in lower
 * case: '' when it has none, and for a name that only starts with a dot (`.gitignore`).
 */
export function extensionOf(path: string): string {
  const base = path.replace(/\\/g, '/').split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot).toLowerCase() : '';
}

/**
 * The type an ingestion would refuse the file for, named as the server names it (`.txt`, `no
 * extension`), or undefined when the file is taken. One such file refuses the whole ingestion.
 */
export function unsupportedType(path: string): string | undefined {
  const extension = extensionOf(path);
  if (INGESTED_EXTENSIONS.has(extension)) return undefined;
  return extension || 'no extension';
}

/** Whether the chunk preview can show the file: a document, not embeddings or an archive. */
export const isPreviewable = (path: string): boolean => DOCUMENT_EXTENSIONS.includes(extensionOf(path));

/** The queued files the server would refuse, in queue order. */
export const unsupportedFiles = (queue: QueuedFile[]): QueuedFile[] =>
  queue.filter((f) => unsupportedType(f.path) !== undefined);

/** "1 file of an unsupported type would refuse the whole ingestion" */
export function unsupportedSummary(count: number): string {
  return count === 1
    ? '1 file of an unsupported type would refuse the whole ingestion'
    : `${count} files of unsupported types would refuse the whole ingestion`;
}
