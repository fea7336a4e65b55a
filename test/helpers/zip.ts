import { createWriteStream } from 'node:fs';
import { ZipArchive } from 'archiver';

/** Writes a ZIP with the given entries (name → content or a file path), with archiver as the studio's push does. */
export async function writeZip(
  file: string,
  entries: Record<string, string | Buffer | { path: string }>,
): Promise<string> {
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const done = new Promise<void>((resolve, reject) => {
    const out = createWriteStream(file);
    out.on('close', () => resolve());
    archive.on('error', reject);
    archive.pipe(out);
  });
  for (const [name, content] of Object.entries(entries)) {
    if (typeof content === 'object' && !Buffer.isBuffer(content)) archive.file(content.path, { name });
    else archive.append(content, { name });
  }
  await archive.finalize();
  await done;
  return file;
}
