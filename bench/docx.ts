import { createWriteStream } from 'node:fs';
import { buffer } from 'node:stream/consumers';
import { ZipArchive } from 'archiver';
import yauzl from 'yauzl';

/** The parts of a small ZIP (a DOCX), read whole: fixtures are tens of kilobytes. */
async function readZipParts(bytes: Buffer): Promise<{ name: string; data: Buffer }[]> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))),
  );
  const parts: { name: string; data: Buffer }[] = [];
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const stream = await zip.openReadStreamPromise(entry);
    parts.push({ name: entry.fileName, data: await buffer(stream) });
  }
  zip.close();
  return parts;
}

/**
 * Writes a copy of a DOCX whose body text went through `rewrite`, run by run (`<w:t>` elements), so
 * the copy differs in words but not in structure, styles or tables.
 */
export async function writeRewrittenDocx(
  source: Buffer,
  target: string,
  rewrite: (text: string) => string,
): Promise<number> {
  const parts = await readZipParts(source);
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const out = createWriteStream(target);
  const closed = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    archive.on('error', reject);
  });
  archive.pipe(out);
  for (const part of parts) {
    const data =
      part.name === 'word/document.xml'
        ? part.data
            .toString('utf8')
            .replace(
              /(<w:t(?:\s[^>]*)?>)([^<]*)(<\/w:t>)/g,
              (_all, open: string, text: string, close: string) => open + rewrite(text) + close,
            )
        : part.data;
    archive.append(data, { name: part.name });
  }
  await archive.finalize();
  await closed;
  return archive.pointer();
}
