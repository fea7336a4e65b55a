import { createReadStream } from 'node:fs';
import path from 'node:path';
import { dimensionsOf } from '../embed/models';
import { InvalidDocument, unreadableFile } from './errors';
import { uniqueName } from './parsers/flatten';

export interface EmbeddingRecord {
  /** 1-based line number in the file (blank lines count). */
  line: number;
  text: string;
  embedding: Float32Array;
  metadata: Record<string, unknown>;
}

/**
 * The longest line accepted. A 3072-dimension embedding written as JSON is about 60–70 KB, so 1 MB leaves
 * room for long text and metadata while a file without newlines cannot make readline buffer gigabytes.
 */
export const MAX_EMBEDDINGS_LINE_BYTES = 1024 * 1024;

/**
 * Streams a JSONL file of pre-built embeddings (spec §2): one `{"text", "embedding", "metadata"?}` object
 * per line, each embedding as long as the declared model's dimensions. An unknown model throws at once;
 * a bad line throws InvalidDocument naming the file, the line and what is wrong. A metadata key the
 * store sets itself (`source`, ...) is kept renamed (`source_2`; keepReservedKeys).
 */
export function readEmbeddingsJsonl(
  filePath: string,
  model: string,
  source: string = path.basename(filePath),
  onBytes?: (bytes: Buffer) => void,
): AsyncIterable<EmbeddingRecord> {
  return readRecords(filePath, { model, dimensions: dimensionsOf(model), source, onBytes });
}

interface LineContext {
  model: string;
  dimensions: number;
  source: string;
  onBytes?: (bytes: Buffer) => void;
}

async function* readRecords(filePath: string, context: LineContext): AsyncGenerator<EmbeddingRecord> {
  let lineNumber = 0;
  let records = 0;
  const lines = readLines(
    filePath,
    MAX_EMBEDDINGS_LINE_BYTES,
    (line) => tooLong(context, line),
    context.onBytes,
  );
  try {
    for await (const raw of lines) {
      lineNumber++;
      const line = lineNumber === 1 ? raw.replace(/^\uFEFF/, '') : raw;
      if (line.trim() === '') continue;
      const parsed = parseLine(line, context);
      if (typeof parsed === 'string')
        throw new InvalidDocument(context.source, `line ${lineNumber}: ${parsed}`);
      records++;
      yield { line: lineNumber, ...parsed };
    }
  } catch (err) {
    // A file that cannot be read is refused by itself, as a bad line is (the other files are ingested).
    throw unreadableFile(context.source, err);
  }
  if (records === 0) {
    throw new InvalidDocument(
      context.source,
      'the file has no lines; expected one JSON object per line (text, embedding, metadata).',
    );
  }
}

const tooLong = (context: LineContext, line: number) =>
  new InvalidDocument(
    context.source,
    `line ${line}: the line is longer than 1 MB; each line must hold one JSON object (text, embedding, metadata).`,
  );

const LF = 0x0a;
const CR = 0x0d;

/**
 * The file's lines as readline gives them (`\n`, `\r\n` and a lone `\r` end a line; a last line without
 * an end counts), without readline: each line is found by a byte search and decoded on its own, so the
 * text is not decoded whole and then searched again (readline was a fifth of staging a JSONL import). A line
 * longer than `maxBytes` fails with `tooLong(its number)` as soon as it gets there, before it is held.
 * `onBytes` sees every read of the file, in order, before its lines are given (to hash it on the way).
 */
export async function* readLines(
  filePath: string,
  maxBytes: number,
  tooLong: (line: number) => Error,
  onBytes?: (bytes: Buffer) => void,
): AsyncGenerator<string> {
  const stream = createReadStream(filePath, { highWaterMark: 1024 * 1024 });
  /** Bytes of the line under way that came in earlier chunks. */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 1;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      onBytes?.(chunk);
      let start = 0;
      for (let newline = chunk.indexOf(LF); newline !== -1; newline = chunk.indexOf(LF, start)) {
        if (pendingBytes + newline - start > maxBytes) throw tooLong(line);
        let bytes = chunk.subarray(start, newline);
        if (pendingBytes > 0) {
          bytes = Buffer.concat([...pending, bytes]);
          pending = [];
          pendingBytes = 0;
        }
        for (const piece of splitAtCarriageReturns(bytes)) {
          line++;
          yield piece;
        }
        start = newline + 1;
      }
      if (start < chunk.length) {
        if (pendingBytes + chunk.length - start > maxBytes) throw tooLong(line);
        pending.push(chunk.subarray(start));
        pendingBytes += chunk.length - start;
      }
    }
    if (pendingBytes > 0) yield* splitAtCarriageReturns(Buffer.concat(pending));
  } finally {
    stream.destroy();
  }
}

/** A `\n`-free run of bytes as lines: a `\r` before the `\n` belongs to it, any other `\r` ends a line. */
function splitAtCarriageReturns(bytes: Buffer): string[] {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
  const first = bytes.indexOf(CR);
  if (first === -1 || first >= end) return [bytes.toString('utf8', 0, end)];
  return bytes.toString('utf8', 0, end).split('\r');
}

type ParsedLine = Omit<EmbeddingRecord, 'line'>;

/** One line as a record, or what is wrong with it (a message for the user). */
function parseLine(line: string, { model, dimensions }: LineContext): ParsedLine | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return `not valid JSON (${(err as Error).message}).`;
  }
  if (!isPlainObject(value))
    return `expected a JSON object with "text" and "embedding", got ${describe(value)}.`;
  const { text, embedding, metadata } = value;
  if (text === undefined) return '"text" is missing.';
  if (typeof text !== 'string') return `"text" must be a string, got ${describe(text)}.`;
  if (text.trim() === '') return '"text" is empty.';
  if (embedding === undefined) return '"embedding" is missing.';
  if (!Array.isArray(embedding))
    return `"embedding" must be an array of numbers, got ${describe(embedding)}.`;
  if (embedding.length !== dimensions) {
    return `embedding has ${embedding.length} dimensions; ${model} needs ${dimensions}.`;
  }
  const vector = new Float32Array(dimensions);
  let nonZero = false;
  for (let i = 0; i < dimensions; i++) {
    const component: unknown = embedding[i];
    if (typeof component !== 'number') return `embedding[${i}] is not a number (got ${describe(component)}).`;
    vector[i] = component;
    if (!Number.isFinite(vector[i]))
      return `embedding[${i}] (${component}) is outside the 32-bit float range.`;
    if (component !== 0) nonZero = true;
  }
  if (!nonZero) return 'embedding is all zeros, so it has no direction to compare by.';
  if (metadata !== undefined && metadata !== null && !isPlainObject(metadata)) {
    return `"metadata" must be an object, got ${describe(metadata)}.`;
  }
  return { text, embedding: vector, metadata: metadata ? keepReservedKeys(metadata) : {} };
}

/**
 * Keys set on every stored chunk of a JSONL file: `source`, `format`, `documentId` and `chunkIndex` by
 * the store (DESIGN §4), `line` by the pipeline. The other keys of DESIGN §4 (`page`, `row`, `headings`)
 * are nobody's here: a line's `page` is its original document's page, kept as it is.
 */
const SET_ON_EVERY_CHUNK = ['source', 'format', 'documentId', 'chunkIndex', 'line'];

/**
 * A line's metadata with a user's value of a key set on every chunk kept under a free name
 * (`source` → `source_2`), as JSON, CSV and Markdown keep theirs (flatten.ts): it was overwritten, and
 * the original document a pre-built chunk came from lost. The metadata is otherwise stored as given; the
 * object is only copied when it holds such a key.
 */
function keepReservedKeys(metadata: Record<string, unknown>): Record<string, unknown> {
  if (!SET_ON_EVERY_CHUNK.some((key) => Object.hasOwn(metadata, key))) return metadata;
  const taken = new Set([...SET_ON_EVERY_CHUNK, ...Object.keys(metadata)]);
  // Object.fromEntries, so a `__proto__` key stays a plain own property.
  return Object.fromEntries(
    Object.entries(metadata).map(([key, value]) => [
      SET_ON_EVERY_CHUNK.includes(key) ? uniqueName(key, taken) : key,
      value,
    ]),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
