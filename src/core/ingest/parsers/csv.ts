import { decodeText } from '../decode';
import { InvalidDocument } from '../errors';
import { EventLoopTurns } from '../eventLoopTurns';
import type { Metadata, ParsedDocument, ParseInput, Section, SkippedRow } from '../types';
import { buildColumns, detectTitleRow, requiredColumns, type CsvColumn } from './csvColumns';
import { detectDelimiter } from './csvDelimiter';
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
/** Rows built between two looks at the clock (EventLoopTurns). */
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
  const text = decodeText(input.bytes);
  const records = await readRecords(text, source, options.signal);
  if (records.length === 0) throw new InvalidDocument(source, 'the file is empty.');

  const warnings: string[] = [];
  const metadata: Metadata = {};
  const title = detectTitleRow(records);
  if (title !== undefined) {
    records.shift();
    metadata.title = title;
    warnings.push(
      `The first line "${title}" is a title above the header row; it was kept as the title, not as a row.`,
    );
  }

  const [header = [], ...rows] = records;
  const columns = buildColumns(
    header,
    records.reduce((width, record) => Math.max(width, record.length), 0),
  );
  const required = requiredColumns(columns, options.requiredColumns, source);
  if (rows.length === 0) warnings.push('The file has a header row but no data rows.');

  const { sections, skippedRows } = await rowSections(rows, columns, required, header.length);

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
): Promise<{ sections: Section[]; skippedRows: SkippedRow[] }> {
  const sections: Section[] = [];
  const skippedRows: SkippedRow[] = [];
  const turns = new EventLoopTurns();
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

/** The records of the text (csvWorker.mjs's readCsvRecords), read on a worker thread. */
async function readRecords(text: string, source: string, signal?: AbortSignal): Promise<string[][]> {
  pool ??= new ParserWorkerPool(new URL('./csvWorker.mjs', import.meta.url), {
    maxMemoryMb: MAX_MEMORY_MB,
    // csv-parse keeps nothing between files, and a fresh worker reads slowly until its JIT warms up.
    maxFilesPerWorker: 100_000,
    depth: PARSE_AHEAD_DEPTH,
  });
  const delimiter = detectDelimiter(text) ?? absentCharacter(text);
  // The time limit only stops a worker that no longer answers: csv-parse reads in linear time.
  let clock: ParseTimer | undefined;
  const timer = () => (clock ??= parseTimer(source, 'CSV', text.length));
  let reply: ParserWorkerReply<{ records: string[][] }> & { invalidCsv?: boolean };
  try {
    reply = await pool.read(new TextEncoder().encode(text), { delimiter }, () => timer().remainingMs(), {
      signal,
    });
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
  if (reply.ok) return reply.records;
  if (reply.invalidCsv) throw new InvalidDocument(source, `invalid CSV: ${reply.message}.`);
  throw new InvalidDocument(source, `the CSV could not be read: ${reply.message}`);
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
