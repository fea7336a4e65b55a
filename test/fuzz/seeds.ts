import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ZipArchive } from 'archiver';
import yauzl from 'yauzl';
import { FIXTURES } from '../helpers/studio';
import type { FuzzTargetName } from './protocol';

const FIXTURE_EXTENSIONS: Record<FuzzTargetName, string[]> = {
  pdf: ['.pdf'],
  docx: ['.docx'],
  html: ['.html', '.htm'],
  markdown: ['.md', '.mdx'],
  json: ['.json'],
  csv: ['.csv'],
  zip: ['.zip'],
  jsonl: [],
};

/** The file names an input is given (the parsers read `.md` and `.mdx` differently). */
export const SOURCE_NAMES: Record<FuzzTargetName, string[]> = {
  pdf: ['fuzz-input.pdf'],
  docx: ['fuzz-input.docx'],
  html: ['fuzz-input.html'],
  markdown: ['fuzz-input.md', 'fuzz-input.mdx'],
  json: ['fuzz-input.json'],
  csv: ['fuzz-input.csv'],
  zip: ['fuzz-input.zip'],
  jsonl: ['fuzz-input.jsonl'],
};

function fixtureSeeds(target: FuzzTargetName): Uint8Array[] {
  return readdirSync(FIXTURES)
    .filter((name) => FIXTURE_EXTENSIONS[target].includes(extname(name).toLowerCase()))
    .sort()
    .map((name) => new Uint8Array(readFileSync(join(FIXTURES, name))));
}

/** Deterministic pre-built embedding lines for the offline model (100 dimensions). */
function jsonlSeeds(): Uint8Array[] {
  const vector = (k: number) => Array.from({ length: 100 }, (_, i) => Number(Math.sin(k * 7 + i).toFixed(4)));
  const records = JSON.parse(readFileSync(join(FIXTURES, 'arbitrary-records.json'), 'utf8')) as unknown[];
  const lines = records.map((r, k) =>
    JSON.stringify({ text: JSON.stringify(r), embedding: vector(k), metadata: { k, tags: ['a', 'b'] } }),
  );
  return [
    lines.join('\n') + '\n',
    '\uFEFF' + lines.slice(0, 2).join('\r\n') + '\r\n\r\n',
    JSON.stringify({ text: 'Grüße, 東京 🚀', embedding: vector(9) }),
  ].map((s) => new Uint8Array(Buffer.from(s, 'utf8')));
}

/** The entries of a ZIP (or DOCX) in order, read into memory: seeds are small. */
export function readEntries(bytes: Uint8Array): Promise<{ name: string; data: Buffer }[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(Buffer.from(bytes), { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const entries: { name: string; data: Buffer }[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const parts: Buffer[] = [];
          stream.on('data', (c: Buffer) => parts.push(c));
          stream.on('end', () => {
            entries.push({ name: entry.fileName, data: Buffer.concat(parts) });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** A ZIP of the given entries, every entry stored uncompressed. */
export async function storedZip(entries: { name: string; data: Buffer }[]): Promise<Uint8Array> {
  const archive = new ZipArchive({ store: true });
  const sink = new PassThrough();
  const parts: Buffer[] = [];
  sink.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve, reject) => {
    sink.on('end', resolve);
    archive.on('error', reject);
  });
  archive.pipe(sink);
  for (const entry of entries) archive.append(entry.data, { name: entry.name, date: new Date(0) });
  await archive.finalize();
  await done;
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * The seed corpus of a target: the shared fixtures; for archives also stored (uncompressed) copies, so
 * that byte mutations land in the XML, HTML or CSV inside rather than in deflate streams refused at once.
 */
export async function seedsFor(target: FuzzTargetName): Promise<Uint8Array[]> {
  if (target === 'jsonl') return jsonlSeeds();
  const seeds = fixtureSeeds(target);
  if (target === 'docx' || target === 'zip') {
    for (const seed of [...seeds]) seeds.push(await storedZip(await readEntries(seed)));
  }
  if (target === 'zip') {
    seeds.push(
      await storedZip([
        { name: 'vectors/embeddings.jsonl', data: Buffer.from(jsonlSeeds()[0]!) },
        { name: 'docs/a.md', data: readFileSync(join(FIXTURES, 'codeblock.md')) },
      ]),
    );
  }
  return seeds;
}

export interface ArchiveEntry {
  name: string;
  data: Buffer;
}

/** Each archive seed's entries, for mutations of the files inside an archive (re-zipped afterwards). */
export async function archiveEntriesFor(target: FuzzTargetName): Promise<ArchiveEntry[][] | undefined> {
  if (target !== 'docx' && target !== 'zip') return undefined;
  const lists: ArchiveEntry[][] = [];
  for (const seed of fixtureSeeds(target)) lists.push(await readEntries(seed));
  return lists;
}
