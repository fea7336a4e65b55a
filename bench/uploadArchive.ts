import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ZipArchive } from 'archiver';
import { OFFLINE_MODEL } from '../src/core/embed/offlineGlove';
import { buildCorpus } from './corpus';
import type { TextPool } from './fixtures';
import { prose } from './perturb';
import type { Rng } from './prng';

const MB = 1024 * 1024;

/** Shares of the archive's bytes: mostly pre-built embeddings, plus documents the server parses and embeds. */
export const ARCHIVE_MIX = { jsonl: 0.98, markdown: 0.01, csv: 0.01 } as const;
const MAX_JSONL_ENTRY = 128 * MB;

export interface UploadArchive {
  path: string;
  bytes: number;
  entries: number;
  jsonlLines: number;
  /** Bytes per kind of entry. */
  content: Record<keyof typeof ARCHIVE_MIX, number>;
}

/**
 * Writes the bulk-upload archive: JSONL files of pre-built embeddings for the offline model
 * ({ text, embedding, metadata } lines of about 3 KB, text of 1.5–2.5 KB like a 512-token chunk),
 * generated as streams and stored uncompressed so the archive is as large as its content; plus
 * Markdown and CSV files from the fixtures (deflated). Nothing is held whole in memory.
 */
export async function writeUploadArchive(
  path: string,
  totalBytes: number,
  scratchDir: string,
  rng: Rng,
  pool: TextPool,
): Promise<UploadArchive> {
  const documents = await buildCorpus(
    join(scratchDir, 'documents'),
    { markdown: totalBytes * ARCHIVE_MIX.markdown, csv: totalBytes * ARCHIVE_MIX.csv },
    rng.fork(),
    pool,
  );
  const archive = new ZipArchive({ zlib: { level: 6 } });
  const out = createWriteStream(path);
  const closed = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    out.on('error', reject);
    archive.on('error', reject);
  });
  archive.pipe(out);

  const result: UploadArchive = {
    path,
    bytes: 0,
    entries: 0,
    jsonlLines: 0,
    content: {
      jsonl: 0,
      markdown: documents.byFormat.markdown?.bytes ?? 0,
      csv: documents.byFormat.csv?.bytes ?? 0,
    },
  };
  for (const file of documents.files) {
    archive.file(file.path, { name: `documents/${file.path.slice(documents.dir.length + 1)}` });
    result.entries++;
  }
  const jsonlBytes = totalBytes - result.content.markdown - result.content.csv;
  const jsonlEntries = Math.max(1, Math.ceil(jsonlBytes / MAX_JSONL_ENTRY));
  for (let i = 0; i < jsonlEntries; i++) {
    const lines = embeddingLines(jsonlBytes / jsonlEntries, i, rng.fork(), pool, (bytes) => {
      result.content.jsonl += bytes;
      result.jsonlLines++;
    });
    archive.append(Readable.from(lines), {
      name: `embeddings/part-${String(i).padStart(3, '0')}.jsonl`,
      store: true,
    });
    result.entries++;
  }
  await archive.finalize();
  await closed;
  result.bytes = archive.pointer();
  return result;
}

/** Writes one JSONL file of pre-built embeddings of about `bytes`; returns its size and line count. */
export async function writeEmbeddingsFile(
  path: string,
  bytes: number,
  rng: Rng,
  pool: TextPool,
): Promise<{ bytes: number; lines: number }> {
  const written = { bytes: 0, lines: 0 };
  await pipeline(
    Readable.from(
      embeddingLines(bytes, 0, rng, pool, (size) => {
        written.bytes += size;
        written.lines++;
      }),
    ),
    createWriteStream(path),
  );
  return written;
}

/** Distinct texts and vectors the lines are assembled from: generating each line afresh would take minutes per GB. */
const VARIANTS = 4096;

/** JSONL lines in batches of about 1 MB, up to `bytes`; `counted` is told each line's size. */
async function* embeddingLines(
  bytes: number,
  part: number,
  rng: Rng,
  pool: TextPool,
  counted: (bytes: number) => void,
): AsyncGenerator<Buffer> {
  const texts = Array.from({ length: VARIANTS }, () => JSON.stringify(chunkText(rng, pool)));
  const vectors = Array.from({ length: VARIANTS }, () =>
    JSON.stringify(unitVector(rng, OFFLINE_MODEL.dimensions)),
  );
  let written = 0;
  let item = 0;
  while (written < bytes) {
    const batch: string[] = [];
    let batchBytes = 0;
    while (batchBytes < MB && written + batchBytes < bytes) {
      item++;
      const metadata = `{"part":${part},"item":${item},"topic":${JSON.stringify(rng.pick(pool.words))}}`;
      const line = `{"text":${rng.pick(texts)},"embedding":${rng.pick(vectors)},"metadata":${metadata}}\n`;
      const size = Buffer.byteLength(line);
      batch.push(line);
      batchBytes += size;
      counted(size);
    }
    written += batchBytes;
    yield Buffer.from(batch.join(''));
  }
}

/** 1.5 to 2.5 KB of the fixtures' prose, about what a 512-token chunk holds. */
function chunkText(rng: Rng, pool: TextPool): string {
  let text = prose(rng, pool, 8, 14);
  while (text.length < 1500) text += ` ${prose(rng, pool, 2, 4)}`;
  return text.slice(0, 2500);
}

function unitVector(rng: Rng, dimensions: number): number[] {
  const vector = Array.from({ length: dimensions }, () => rng.next() * 2 - 1);
  const norm = Math.hypot(...vector);
  return vector.map((x) => Number((x / norm).toFixed(6)));
}
