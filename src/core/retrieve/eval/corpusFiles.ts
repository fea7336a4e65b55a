import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import type { CorpusDocument } from './beir';

/** Documents per JSON file: well under the 50 MB per-file limit for BEIR-sized abstracts and passages. */
const DOCUMENTS_PER_FILE = 20_000;
const BYTES_PER_FILE = 40 * 1024 * 1024;

/**
 * Writes a BEIR corpus as JSON files the normal ingestion pipeline reads (DESIGN §6 JSON documents):
 * one item `{ text: title + "\n" + text, corpusId }` per corpus line, so each becomes one document
 * section whose chunks carry `corpusId` in their metadata and map back to the qrels.
 */
export async function writeCorpusAsJson(
  corpus: AsyncIterable<CorpusDocument>,
  dir: string,
): Promise<{ files: string[]; documents: number }> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  let out: WriteStream | undefined;
  let inFile = 0;
  let bytes = 0;
  let documents = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out!.write(text)) await once(out!, 'drain');
  };
  const close = async () => {
    if (!out) return;
    out.end('\n]\n');
    await once(out, 'finish');
    out = undefined;
  };
  for await (const doc of corpus) {
    if (!out || inFile >= DOCUMENTS_PER_FILE || bytes >= BYTES_PER_FILE) {
      await close();
      const file = join(dir, `corpus-${String(files.length + 1).padStart(4, '0')}.json`);
      files.push(file);
      out = createWriteStream(file, 'utf8');
      inFile = 0;
      bytes = 0;
      await write('[\n');
    }
    const text = doc.title.trim() ? `${doc.title}\n${doc.text}` : doc.text;
    await write(`${inFile > 0 ? ',\n' : ''}${JSON.stringify({ text, corpusId: doc.id })}`);
    inFile++;
    documents++;
  }
  await close();
  return { files, documents };
}
