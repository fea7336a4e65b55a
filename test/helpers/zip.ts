import { createWriteStream } from 'node:fs';
import { ZipArchive } from 'archiver';

/** One entry of a ZIP: content, a file on disk, or a symbolic link as archiver writes one. */
export type ZipEntry =
  | { name: string; data: string | Buffer }
  | { name: string; path: string }
  | { name: string; symlinkTo: string };

/** Writes a ZIP with the given entries (name → content or a file path), with archiver as the studio's push does. */
export async function writeZip(
  file: string,
  entries: Record<string, string | Buffer | { path: string }>,
): Promise<string> {
  return writeZipEntries(
    file,
    Object.entries(entries).map(([name, content]) =>
      typeof content === 'object' && !Buffer.isBuffer(content)
        ? { name, path: content.path }
        : { name, data: content },
    ),
  );
}

/** The same with entries in order: names may repeat, symbolic links are written as such. */
export async function writeZipEntries(file: string, entries: ZipEntry[], level = 6): Promise<string> {
  const archive = new ZipArchive({ zlib: { level } });
  const done = new Promise<void>((resolve, reject) => {
    const out = createWriteStream(file);
    out.on('close', () => resolve());
    archive.on('error', reject);
    archive.pipe(out);
  });
  for (const entry of entries) {
    if ('symlinkTo' in entry) archive.symlink(entry.name, entry.symlinkTo);
    else if ('path' in entry) archive.file(entry.path, { name: entry.name });
    else archive.append(entry.data, { name: entry.name });
  }
  await archive.finalize();
  await done;
  return file;
}
