import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { DOCUMENT_FORMATS, type DocumentFormat } from '../src/core/ingest/types';
import { writeRewrittenDocx } from './docx';
import { fixturesByFormat, type Fixture, type TextPool } from './fixtures';
import { perturbHtml, perturbJsonValue, perturbWords, prose, title } from './perturb';
import type { Rng } from './prng';

const KB = 1024;
const MB = 1024 * KB;

export interface CorpusFile {
  path: string;
  bytes: number;
  /** jsonl: pre-built embeddings. */
  format: DocumentFormat | 'jsonl';
}

export interface Corpus {
  dir: string;
  files: CorpusFile[];
  bytes: number;
  byFormat: Partial<Record<CorpusFile['format'], { files: number; bytes: number }>>;
}

/** Target bytes per format. */
export type CorpusPlan = Partial<Record<DocumentFormat, number>>;

/** Formats for which half of the bytes go to large files (several MB at default scale). */
const LARGE_FILE_FORMATS = new Set<DocumentFormat>(['markdown', 'json', 'csv', 'html']);

/**
 * Writes a synthetic corpus under dir: for each format, files derived from the fixtures of that format
 * until its target size is reached. Text formats are perturbed with the seeded generator (words
 * replaced, rows and records shuffled, prose from the fixtures added) so that no two files share
 * chunk text; DOCX copies get their runs' words replaced; PDFs are copied as they are.
 */
export async function buildCorpus(dir: string, plan: CorpusPlan, rng: Rng, pool: TextPool): Promise<Corpus> {
  const fixtures = fixturesByFormat();
  const corpus: Corpus = { dir, files: [], bytes: 0, byFormat: {} };
  for (const format of DOCUMENT_FORMATS) {
    const target = plan[format] ?? 0;
    if (target <= 0) continue;
    const folder = join(dir, format);
    await mkdir(folder, { recursive: true });
    const maker = new FileMaker(fixtures[format], pool, rng.fork());
    const large = LARGE_FILE_FORMATS.has(format) ? largeFileSize(target) : 0;
    let largeBudget = large > 0 ? target / 2 : 0;
    let written = 0;
    for (let i = 0; written < target; i++) {
      const wantLarge = largeBudget >= large && large > 0;
      const file = await maker.write(format, folder, i, wantLarge ? large : 0);
      if (wantLarge) largeBudget -= file.bytes;
      written += file.bytes;
      corpus.files.push(file);
    }
    corpus.byFormat[format] = {
      files: corpus.files.filter((f) => f.format === format).length,
      bytes: written,
    };
    corpus.bytes += written;
  }
  return corpus;
}

/** Writes one large document of about `bytes` (the formats with large files: Markdown, JSON, CSV, HTML). */
export async function writeLargeDocument(
  dir: string,
  format: DocumentFormat,
  bytes: number,
  rng: Rng,
  pool: TextPool,
): Promise<CorpusFile> {
  if (!LARGE_FILE_FORMATS.has(format))
    throw new Error(`no large ${format} documents: only ${[...LARGE_FILE_FORMATS].join(', ')}.`);
  await mkdir(dir, { recursive: true });
  return new FileMaker(fixturesByFormat()[format], pool, rng).write(format, dir, 0, bytes);
}

/** A quarter of the format's share, between 64 KB and 8 MB (1.25 MB per format, 6.25 MB in the mixed corpus, by default). */
const largeFileSize = (target: number) => Math.round(Math.min(8 * MB, Math.max(64 * KB, target / 4)));

class FileMaker {
  private readonly cache = new Map<string, Buffer>();
  private next = 0;

  constructor(
    private readonly fixtures: Fixture[],
    private readonly pool: TextPool,
    private readonly rng: Rng,
  ) {}

  /** Writes file number i; `size` > 0 asks for a large file of about that many bytes. */
  async write(format: DocumentFormat, folder: string, i: number, size: number): Promise<CorpusFile> {
    // Small files cycle through the fixtures so every one of them is represented.
    const fixture = this.fixtures[this.next++ % this.fixtures.length]!;
    const stem = `${String(i).padStart(5, '0')}-${basename(fixture.name, extname(fixture.name))}`;
    const path = join(folder, `${stem}${size > 0 ? '-large' : ''}${extname(fixture.name)}`);
    const source = await this.read(fixture.path);
    const { rng, pool } = this;
    switch (format) {
      case 'pdf':
        await copyFile(fixture.path, path);
        return { path, bytes: source.length, format };
      case 'docx': {
        const bytes = await writeRewrittenDocx(source, path, (text) => perturbWords(text, rng, pool));
        return { path, bytes, format };
      }
      case 'html':
        return this.save(
          path,
          format,
          size > 0
            ? largeHtml(source.toString('utf8'), size, rng, pool)
            : perturbHtml(source.toString('utf8'), rng, pool),
        );
      case 'markdown':
        return this.save(
          path,
          format,
          markdownDocument(source.toString('utf8'), size || rng.between(2, 12) * KB, rng, pool),
        );
      case 'json':
        return this.save(
          path,
          format,
          jsonDocument(source.toString('utf8'), size || rng.between(2, 16) * KB, rng, pool),
        );
      case 'csv':
        return this.save(
          path,
          format,
          csvDocument(source.toString('utf8'), size || rng.between(2, 16) * KB, rng, pool),
        );
    }
  }

  private async read(path: string): Promise<Buffer> {
    let bytes = this.cache.get(path);
    if (!bytes) this.cache.set(path, (bytes = await readFile(path)));
    return bytes;
  }

  private async save(path: string, format: DocumentFormat, text: string): Promise<CorpusFile> {
    const bytes = Buffer.from(text, 'utf8');
    await writeFile(path, bytes);
    return { path, bytes: bytes.length, format };
  }
}

/** The fixture page with its body repeated (each repetition perturbed) up to the size. */
function largeHtml(html: string, size: number, rng: Rng, pool: TextPool): string {
  const open = html.search(/<body[^>]*>/i);
  // Some fixtures have no body element, or never close it (the 10-K excerpt).
  const bodyStart = open < 0 ? 0 : html.indexOf('>', open) + 1;
  const closing = html.search(/<\/body>/i);
  const close = closing < 0 ? html.length : closing;
  const head = open < 0 ? '<!DOCTYPE html>\n<html><body>\n' : html.slice(0, bodyStart);
  const tail = open < 0 ? '</body></html>\n' : html.slice(close);
  const body = html.slice(bodyStart, close);
  const parts = [head];
  let length = utf8(head) + utf8(tail);
  while (length < size) {
    const part = `<section><h2>${title(rng, pool)}</h2>${perturbHtml(body, rng, pool)}</section>\n`;
    parts.push(part);
    length += utf8(part);
  }
  parts.push(tail);
  return parts.join('');
}

/** Front matter, the fixture (perturbed), then headed sections of the fixtures' prose up to the size. */
function markdownDocument(fixture: string, size: number, rng: Rng, pool: TextPool): string {
  const parts = [
    `---\ntitle: ${title(rng, pool)}\ntags: [${rng.pick(pool.words)}, ${rng.pick(pool.words)}]\n---\n\n# ${title(rng, pool)}\n\n`,
    `${perturbWords(fixture, rng, pool).trimEnd()}\n\n`,
  ];
  let length = utf8(parts[0]!) + utf8(parts[1]!);
  while (length < size) {
    const paragraphs = Array.from({ length: rng.between(1, 4) }, () => prose(rng, pool, 2, 8)).join('\n\n');
    const list = rng.chance(0.3)
      ? `\n\n${Array.from({ length: rng.between(2, 5) }, () => `- ${prose(rng, pool, 1, 1)}`).join('\n')}`
      : '';
    const part = `${'#'.repeat(rng.between(2, 3))} ${title(rng, pool)}\n\n${paragraphs}${list}\n\n`;
    parts.push(part);
    length += utf8(part);
  }
  return parts.join('');
}

/** An array of records shaped like the fixture's (perturbed, shuffled), each with prose, up to the size. */
function jsonDocument(fixture: string, size: number, rng: Rng, pool: TextPool): string {
  const parsed: unknown = JSON.parse(fixture);
  const templates = (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
  const records: string[] = [];
  let length = 4;
  while (length < size) {
    const record = perturbJsonValue(rng.pick(templates), rng, pool) as Record<string, unknown>;
    const textKey = typeof record.text === 'string' ? 'text' : 'description';
    record[textKey] = prose(rng, pool, 1, 6);
    // Indented as JSON.stringify(array, null, 2) would, one level down.
    const text = JSON.stringify(record, null, 2).replace(/^/gm, '  ');
    records.push(text);
    length += utf8(text) + 2;
  }
  return `[\n${rng.shuffled(records).join(',\n')}\n]`;
}

/** The fixture's header plus a Notes column; rows drawn from its rows (perturbed, shuffled) up to the size. */
function csvDocument(fixture: string, size: number, rng: Rng, pool: TextPool): string {
  const records = parse(fixture, {
    relax_column_count: true,
    skip_empty_lines: true,
    bom: true,
  }) as string[][];
  // A title row above the header (as in stanley-cups.csv) has fewer filled cells than the header.
  const filled = (r: string[]) => r.filter((c) => c.trim() !== '').length;
  const start = records.length > 2 && filled(records[0]!) < filled(records[1]!) ? 1 : 0;
  const header = records[start]!;
  const rows = records.slice(start + 1);
  const lines = [[...header.map((h, i) => h.trim() || `Column ${i + 1}`), 'Notes'].map(csvCell).join(',')];
  let length = utf8(lines[0]!);
  while (length < size) {
    const row = rows.length > 0 ? rng.pick(rows) : header;
    const cells = header.map((_h, i) => perturbWords(row[i] ?? '', rng, pool, 0.5) || rng.pick(pool.words));
    const line = [...cells, prose(rng, pool, 1, 3)].map(csvCell).join(',');
    lines.push(line);
    length += utf8(line) + 1;
  }
  return `${[lines[0], ...rng.shuffled(lines.slice(1))].join('\n')}\n`;
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
const csvCell = (value: string) => (/[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
