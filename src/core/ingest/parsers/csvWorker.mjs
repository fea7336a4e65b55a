// Reads CSV records with csv-parse inside a long-lived worker thread (see parserWorkerPool.ts): a file
// read ahead of its turn is parsed beside the ingesting thread, and a large one no longer holds that
// thread (csv-parse reads about 20 MB/s, so a 50 MB file held the server for 2.5 s). Plain JavaScript
// on purpose: it must load as it is under node, tsx, vitest and the Electron build. It only reads
// records; csv.ts finds the delimiter before and builds the rows after.
import { parentPort } from 'node:worker_threads';
import { CsvError, parse } from 'csv-parse/sync';

// The text as csv.ts decoded it, byte for byte: a leading U+FEFF is kept, as it was before the move here.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
// Bytes csv.ts did not decode, which are read only if they are valid UTF-8 (csv.ts has no BOM sent here).
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Records with trimmed cells (line breaks inside quoted cells as \n); records whose cells are all empty
 * (blank lines, `,,,` lines that spreadsheets export) are not rows. Quoted fields, embedded newlines and
 * ragged rows go through csv-parse.
 */
export function readCsvRecords(text, delimiter) {
  return parse(text, {
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
  })
    .map((record) => record.map((cell) => cell.trim().replace(/\r\n?/g, '\n')))
    .filter((record) => record.some((cell) => cell !== ''));
}

/**
 * The records packed for the trip back: every cell in one string, with where each cell and each record
 * ends. Sent as arrays of arrays, the records of a 6.5 MB file (20,840 rows) took the receiving thread,
 * which is the server's, 60–80 ms to rebuild in one go; one string and two transferred buffers take a
 * few, and csv.ts unpacks the rows in turns with its requests.
 */
export function packCsvRecords(records) {
  let cells = 0;
  for (const record of records) cells += record.length;
  const parts = new Array(cells);
  const cellEnds = new Uint32Array(cells);
  const recordEnds = new Uint32Array(records.length);
  let cell = 0;
  let length = 0;
  for (let i = 0; i < records.length; i++) {
    for (const value of records[i]) {
      parts[cell] = value;
      length += value.length;
      cellEnds[cell++] = length;
    }
    recordEnds[i] = cell;
  }
  return { text: parts.join(''), cellEnds, recordEnds };
}

// Imported by tests for readCsvRecords: there is no parent port then.
parentPort?.on('message', ({ id, data, delimiter, utf8Only }) => {
  let text;
  try {
    text = (utf8Only ? strictDecoder : decoder).decode(data);
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      name: 'TypeError',
      message: String(error?.message),
      notUtf8: true,
    });
    return;
  }
  try {
    const packed = packCsvRecords(readCsvRecords(text, delimiter));
    parentPort.postMessage({ id, ok: true, packed }, [packed.cellEnds.buffer, packed.recordEnds.buffer]);
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      name: error?.name ?? 'Error',
      message: String(error?.message ?? error),
      invalidCsv: error instanceof CsvError,
    });
  }
});
