import { extname } from 'node:path';
import { InvalidDocument, UnsupportedFileType, type UnsupportedEntry } from './errors';
import { BULK_LIMITS, type IngestLimits } from './limits';
import { classifySource } from './sources';
import { checkZip } from './zip';
import { printableName } from './zipEntryNames';
import { archiveLimitsFor } from './zipLimits';

/**
 * Reads only the central directories of the received files and runs every check extraction makes on
 * them (paths, symlinks, encryption, duplicate names, sizes, zip bombs, entry count, types), with the
 * limits the ingestion will extract them with, so a refused upload is refused at upload time, before
 * the 202. An archive with no file to ingest is refused too. Extraction checks everything again.
 */
export async function precheckUploadFiles(
  files: { path: string; name: string }[],
  limits: IngestLimits = BULK_LIMITS,
): Promise<void> {
  const unsupported: UnsupportedEntry[] = [];
  for (const file of files) {
    const source = printableName(file.name);
    if (extname(file.name).toLowerCase() !== '.zip') {
      const kind = classifySource(file.name);
      if ('type' in kind) unsupported.push({ entry: source, type: kind.type });
      continue;
    }
    const archive = await checkZip(file.path, { source, ...archiveLimitsFor(limits) });
    for (const { entry, type } of archive.unsupported)
      unsupported.push({ entry: `${source}/${entry}`, type });
    if (archive.files.length === 0 && archive.unsupported.length === 0) {
      throw new InvalidDocument(
        source,
        archive.ignored.length === 0
          ? 'the archive holds no file to ingest (it is empty, or holds only folders); add documents to it and upload it again.'
          : `the archive holds no file to ingest: it has only OS litter (${describeIgnored(archive.ignored)}), which is skipped; add documents to it and upload it again.`,
      );
    }
  }
  if (unsupported.length) throw new UnsupportedFileType(unsupported);
}

const describeIgnored = (ignored: string[]): string => {
  const shown = ignored.slice(0, 3).map((name) => `"${printableName(name)}"`);
  return ignored.length > shown.length
    ? `${shown.join(', ')} and ${ignored.length - shown.length} more`
    : shown.join(', ');
};
