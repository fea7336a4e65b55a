import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { InvalidDocument, PayloadTooLarge, UnsupportedFileType, type UnsupportedEntry } from './errors';
import { BULK_LIMITS, type IngestLimits } from './limits';
import { classifySource, tooLargeMessage } from './sources';
import { checkZip } from './zip';
import { printableName } from './zipEntryNames';
import { archiveLimitsFor } from './zipLimits';

/**
 * Reads only the central directories of the received files and runs every check extraction makes on
 * them (paths, symlinks, encryption, duplicate names, sizes, zip bombs, entry count, types), with the
 * limits the ingestion will extract them with, so a refused upload is refused at upload time, before
 * the 202. An archive with no file to ingest is refused too. Extraction checks everything again.
 *
 * So are the checks collectSources makes across the upload's files: a file sent by itself (not zipped)
 * over the per-file limit, and a name given twice, in two archives or an archive and a file beside it
 * (each accepted, then the whole upload failed on "the name appears twice in this ingestion").
 */
export async function precheckUploadFiles(
  files: { path: string; name: string }[],
  limits: IngestLimits = BULK_LIMITS,
): Promise<void> {
  const unsupported: UnsupportedEntry[] = [];
  const names = new UploadSourceNames();
  for (const file of files) {
    const source = printableName(file.name);
    if (extname(file.name).toLowerCase() !== '.zip') {
      const kind = classifySource(file.name);
      if ('type' in kind) {
        unsupported.push({ entry: source, type: kind.type });
        continue;
      }
      // The limit collectSources applies to a file given by itself: JSONL embeddings are streamed, exempt.
      const { size } = await stat(file.path);
      if (kind.format !== 'jsonl' && size > limits.maxFileBytes) {
        throw new PayloadTooLarge(tooLargeMessage(source, size, limits.maxFileBytes));
      }
      names.claim(file.name, { archive: undefined, shown: source });
      continue;
    }
    const archive = await checkZip(file.path, { source, ...archiveLimitsFor(limits) });
    for (const entry of archive.files)
      names.claim(entry, { archive: source, shown: `${source}/${printableName(entry)}` });
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

/**
 * The source names the upload's files will be stored under, as collectSources names them: an archive's
 * entry by its path inside the archive (`a/intro.md`, without the archive's name), a file sent by itself
 * by its own name. collectSources refuses a name taken already; so does this, before the 202. Only the
 * exact name counts, as there: `A.md` in one archive beside `a.md` in another is no clash (inside one
 * archive it is, which checkZip refuses).
 */
class UploadSourceNames {
  private readonly taken = new Map<string, string>();

  claim(name: string, where: { archive: string | undefined; shown: string }): void {
    // Composed, as collectSources stores names: `café.md` spelled both ways is one name.
    const key = name.normalize('NFC');
    const earlier = this.taken.get(key);
    if (earlier === undefined) {
      this.taken.set(key, where.shown);
      return;
    }
    const why = `the files of an upload are stored under their paths inside their archives (a file sent by itself under its own name), so a name may appear only once in the upload; rename one of them to keep both.`;
    throw where.archive === undefined
      ? new InvalidDocument(where.shown, `the file has the same name as "${earlier}": ${why}`)
      : new InvalidDocument(
          where.archive,
          `entry "${printableName(name)}" has the same name as "${earlier}": ${why}`,
        );
  }
}

const describeIgnored = (ignored: string[]): string => {
  const shown = ignored.slice(0, 3).map((name) => `"${printableName(name)}"`);
  return ignored.length > shown.length
    ? `${shown.join(', ')} and ${ignored.length - shown.length} more`
    : shown.join(', ');
};
