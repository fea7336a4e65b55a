import { byteOrderMark, decodeText } from '../decode';
import { InvalidDocument } from '../errors';
import { EventLoopTurns } from '../eventLoopTurns';
import type { Metadata, ParsedDocument, ParseInput, Section, SkippedRow } from '../types';
import { buildColumns, detectTitleRow, requiredColumns, titleKey, type CsvColumn } from './csvColumns';
import { detectDelimiter, SAMPLE_CHARS } from './csvDelimiter';
import type { PackedCsvRecords } from './csvWorker.mjs';
import { parseTimer, type ParseTimer } from './parseBudget';
import {
  PARSE_AHEAD_DEPTH,
  ParserWorkerPool,
  type ParserWorkerReply,
  textParseFailure,
} from './parserWorkerPool';

export interface CsvOptions {
  /** Columns (header names) a row must fill to be kept; default: every column with a header name. */
  requiredColumns?: string[];
  /** Stops the parse: drops its queued read, or terminates the worker reading it. */
  signal?: AbortSignal;
}

const MAX_MEMORY_MB = 2048;
/** Rows built, or unpacked, between two looks at the clock (EventLoopTurns). */
const ROWS_BETWEEN_TURNS = 64;

let pool: ParserWorkerPool | undefined;

/**
 * CSV (spec §2): each data row is one atomic section. Its metadata is `{ row, <header>: <value>, ... }`
 * where `row` is the 1-based data row number (the first row after the header is 1; blank lines and a
 * title row are not counted) and every header column is present, empty cells as ''. Cells past the
 * header of a ragged row are kept under `column_<n>` when not empty. Values stay strings, trimmed.
 * The text is one `Header: value` line per non-empty cell, with the header as written.
 * Rows with an empty required cell are left out and reported in `skippedRows`.
 */
export async function parseCsv(input: ParseInput, options: CsvOptions = {}): Promise<ParsedDocument> {
  const { source } = input;
  // One clock for the whole parse: each step after the worker's reply (unpacking the records, building
  // the rows) takes turns by it, so their runs between turns do not add up (a clock per step let them
  // hold the thread 60 ms in a row).
  const turns = new EventLoopTurns();
  const records = await readRecords(input.bytes, source, options.signal, turns);
  if (records.length === 0) throw new InvalidDocument(source, 'the file is empty.');

  const warnings: string[] = [];
  const metadata: Metadata = {};
  const title = detectTitleRow(records);
  if (title !== undefined) records.shift();

  const [header = [], ...rows] = records;
  const columns = buildColumns(
    header,
    records.reduce((width, record) => Math.max(width, record.length), 0),
  );
  if (title !== undefined) {
    const key = titleKey(columns);
    metadata[key] = title;
    const kept = key === 'title' ? 'the title' : `the title under "${key}" (a column is named "title")`;
    warnings.push(
      `The first line "${title}" is a title above the header row; it was kept as ${kept}, not as a row.`,
    );
  }
  const required = requiredColumns(columns, options.requiredColumns, source);
  if (rows.length === 0) warnings.push('The file has a header row but no data rows.');

  const { sections, skippedRows } = await rowSections(rows, columns, required, header.length, turns);

  const document: ParsedDocument = { format: 'csv', sections, metadata };
  if (skippedRows.length > 0) document.skippedRows = skippedRows;
  if (warnings.length > 0) document.warnings = warnings;
  return document;
}

/**
 * Each data row's section, or why it was skipped. Built on the server's thread, so a large file's rows
 * are built in turns with its requests (EventLoopTurns): the 20,840 rows of a 6.5 MB file took 50-70 ms
 * in one go.
 */
export async function rowSections(
  rows: string[][],
  columns: CsvColumn[],
  required: CsvColumn[],
  headerWidth: number,
  turns = new EventLoopTurns(),
): Promise<{ sections: Section[]; skippedRows: SkippedRow[] }> {
  const sections: Section[] = [];
  const skippedRows: SkippedRow[] = [];
  for (const [index, cells] of rows.entries()) {
    const row = index + 1;
    const empty = required.filter((column) => !cells[column.index]);
    if (empty.length > 0) {
      skippedRows.push({ row, reason: `empty required field(s): ${empty.map((c) => c.label).join(', ')}` });
    } else {
      sections.push(rowSection(row, cells, columns, headerWidth));
    }
    if (row % ROWS_BETWEEN_TURNS === 0) await turns.take();
  }
  return { sections, skippedRows };
}

/**
 * The records of the file (csvWorker.mjs's readCsvRecords), read on a worker thread. Valid UTF-8 without
 * a byte order mark, nearly every CSV, is decoded there too: this thread, the server's, only decodes
 * enough to find the delimiter. Decoding a 6.8 MB file here (15–40 ms) and encoding it again for the
 * worker (8–24 ms) held it in one go. Any other file is decoded here as every text format is (decodeText).
 */
async function readRecords(
  bytes: Uint8Array,
  source: string,
  signal: AbortSignal | undefined,
  turns: EventLoopTurns,
): Promise<string[][]> {
  const delimiter = utf8Delimiter(bytes);
  if (delimiter) {
    // A copy: the worker takes the buffer it is sent, and the caller may still need its bytes.
    const packed = await readInWorker(bytes.slice(), delimiter, true, bytes.length, source, signal);
    if (packed) return unpackCsvRecords(packed, turns);
  }
  const text = decodeText(bytes, undefined, source);
  const chosen = detectDelimiter(text) ?? absentCharacter(text);
  const packed = await readInWorker(
    new TextEncoder().encode(text),
    chosen,
    false,
    text.length,
    source,
    signal,
  );
  return unpackCsvRecords(packed!, turns);
}

/** What this thread decodes of a UTF-8 file: four bytes at most per code point, so more than detectDelimiter reads. */
export const DELIMITER_SAMPLE_BYTES = 4 * (SAMPLE_CHARS + 2);

/**
 * The delimiter, when the file starts as valid UTF-8 without a byte order mark and has one (what
 * detectDelimiter finds in the whole text, read from enough of its start); undefined otherwise.
 */
export function utf8Delimiter(bytes: Uint8Array): string | undefined {
  if (byteOrderMark(bytes)) return undefined;
  const head = bytes.subarray(0, DELIMITER_SAMPLE_BYTES);
  let text: string;
  try {
    // Streaming, so a character cut at the end of the head is not an error.
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: head.length < bytes.length });
  } catch {
    return undefined;
  }
  return detectDelimiter(text);
}

/**
 * Reads `data` on a worker: UTF-8 text, or with `utf8Only`, bytes that must be valid UTF-8 (undefined
 * when they are not, so the caller decodes them as another charset).
 */
async function readInWorker(
  data: Uint8Array<ArrayBuffer>,
  delimiter: string,
  utf8Only: boolean,
  size: number,
  source: string,
  signal: AbortSignal | undefined,
): Promise<PackedCsvRecords | undefined> {
  pool ??= new ParserWorkerPool(new URL('./csvWorker.mjs', import.meta.url), {
    maxMemoryMb: MAX_MEMORY_MB,
    // csv-parse keeps nothing between files, and a fresh worker reads slowly until its JIT warms up.
    maxFilesPerWorker: 100_000,
    depth: PARSE_AHEAD_DEPTH,
  });
  // The time limit only stops a worker that no longer answers: csv-parse reads in linear time.
  let clock: ParseTimer | undefined;
  const timer = () => (clock ??= parseTimer(source, 'CSV', size));
  let reply: ParserWorkerReply<{ packed: PackedCsvRecords }> & { invalidCsv?: boolean; notUtf8?: boolean };
  try {
    reply = await pool.read(data, { delimiter, utf8Only }, () => timer().remainingMs(), { signal });
  } catch (error) {
    throw textParseFailure(error, source, 'CSV', {
      tooLong: () =>
        new InvalidDocument(
          source,
          `reading the CSV took too long (over ${Math.round(timer().limitMs / 1000)} s) and was stopped; try splitting it into smaller files.`,
        ),
      tooDeep: () =>
        new InvalidDocument(source, 'the CSV could not be read: its rows could not be sent back.'),
    });
  }
  if (reply.ok) return reply.packed;
  if (reply.notUtf8) return undefined;
  if (reply.invalidCsv) throw new InvalidDocument(source, `invalid CSV: ${reply.message}.`);
  throw new InvalidDocument(source, `the CSV could not be read: ${reply.message}`);
}

/** The worker's records (csvWorker.mjs's packCsvRecords) as arrays again, in turns with the thread's other work. */
async function unpackCsvRecords(
  { text, cellEnds, recordEnds }: PackedCsvRecords,
  turns: EventLoopTurns,
): Promise<string[][]> {
  const records: string[][] = new Array<string[]>(recordEnds.length);
  let cell = 0;
  let start = 0;
  for (let i = 0; i < recordEnds.length; i++) {
    const record: string[] = [];
    for (const last = recordEnds[i]!; cell < last; cell++) {
      const end = cellEnds[cell]!;
      record.push(text.slice(start, end));
      start = end;
    }
    records[i] = record;
    if ((i + 1) % ROWS_BETWEEN_TURNS === 0) await turns.take();
  }
  return records;
}

/** A delimiter that does not occur, so a single-column file is read one line (or quoted field) per row. */
function absentCharacter(text: string): string {
  return ['\u001f', '\u001e', '\u0000'].find((char) => !text.includes(char)) ?? '\u001f\u001e\u0000';
}

function rowSection(row: number, cells: string[], columns: CsvColumn[], headerWidth: number): Section {
  const fields: [string, string][] = [];
  const lines: string[] = [];
  for (const column of columns) {
    const value = cells[column.index] ?? '';
    if (column.index < headerWidth || value !== '') fields.push([column.key, value]);
    if (value !== '') lines.push(`${column.label}: ${value}`);
  }
  // fromEntries keeps a `__proto__` header a plain key.
  return { text: lines.join('\n'), metadata: { row, ...Object.fromEntries(fields) }, atomic: true };
}
