import { extname } from 'node:path';
import yauzl from 'yauzl';
import { InvalidDocument, UnsupportedFileType, type UnsupportedEntry } from './errors';
import { classifySource } from './sources';
import { cleanEntryName, isOsLitter } from './zipEntryNames';

/**
 * Reads only the central directories of the received files, so an upload with an unsupported type
 * (or an unsafe path) is refused at upload time, before the 202. Extraction checks everything again.
 */
export async function precheckUploadFiles(files: { path: string; name: string }[]): Promise<void> {
  const unsupported: UnsupportedEntry[] = [];
  for (const file of files) {
    if (extname(file.name).toLowerCase() !== '.zip') {
      const kind = classifySource(file.name);
      if ('type' in kind) unsupported.push({ entry: file.name, type: kind.type });
      continue;
    }
    for (const name of await entryNames(file.path, file.name)) {
      const cleaned = cleanEntryName(name);
      if (!cleaned.ok) throw new InvalidDocument(file.name, `entry '${name}' ${cleaned.problem}.`);
      if (cleaned.isDirectory || isOsLitter(cleaned.path)) continue;
      const kind = classifySource(cleaned.path);
      if ('type' in kind) unsupported.push({ entry: `${file.name}/${cleaned.path}`, type: kind.type });
    }
  }
  if (unsupported.length) throw new UnsupportedFileType(unsupported);
}

function entryNames(zipPath: string, source: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true, autoClose: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip)
        return reject(
          new InvalidDocument(source, `not a readable ZIP archive (${err?.message ?? 'unknown error'}).`),
        );
      const names: string[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(names));
      zip.on('error', (e: Error) =>
        reject(new InvalidDocument(source, `the ZIP archive is damaged (${e.message}).`)),
      );
      zip.readEntry();
    });
  });
}
