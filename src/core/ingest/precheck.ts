import { extname } from 'node:path';
import { InvalidDocument, PayloadTooLarge, UnsupportedFileType, type UnsupportedEntry } from './errors';
import { classifySource } from './sources';
import { cleanEntryName, isOsLitter, printableName } from './zipEntryNames';
import { DEFAULT_ZIP_LIMITS } from './zipLimits';
import { readEntryNames } from './zipReader';

/**
 * Reads only the central directories of the received files, so an upload with an unsupported type
 * (or an unsafe path, or too many entries) is refused at upload time, before the 202. Extraction checks
 * everything again.
 */
export async function precheckUploadFiles(files: { path: string; name: string }[]): Promise<void> {
  const unsupported: UnsupportedEntry[] = [];
  for (const file of files) {
    const source = printableName(file.name);
    if (extname(file.name).toLowerCase() !== '.zip') {
      const kind = classifySource(file.name);
      if ('type' in kind) unsupported.push({ entry: source, type: kind.type });
      continue;
    }
    for (const name of await entryNames(file.path, source)) {
      const cleaned = cleanEntryName(name);
      if (!cleaned.ok) {
        throw new InvalidDocument(source, `entry "${printableName(name)}" ${cleaned.problem}.`);
      }
      if (cleaned.isDirectory || isOsLitter(cleaned.path)) continue;
      const kind = classifySource(cleaned.path);
      if ('type' in kind) {
        unsupported.push({ entry: `${source}/${printableName(cleaned.path)}`, type: kind.type });
      }
    }
  }
  if (unsupported.length) throw new UnsupportedFileType(unsupported);
}

/** The archive's entry names, refused past the entry limit before any is read. */
async function entryNames(zipPath: string, source: string): Promise<string[]> {
  try {
    return await readEntryNames(zipPath, DEFAULT_ZIP_LIMITS.maxEntries);
  } catch (err) {
    // fs errors (ENOSPC, EACCES, ...) are the machine's problem, not the archive's: they pass through.
    if (err instanceof Error && 'syscall' in err) throw err;
    if (err instanceof RangeError) throw new PayloadTooLarge(`${source}: ${err.message}`);
    const reason = err instanceof Error ? err.message : String(err);
    throw new InvalidDocument(source, `not a readable ZIP archive, or a damaged one (${reason}).`);
  }
}
