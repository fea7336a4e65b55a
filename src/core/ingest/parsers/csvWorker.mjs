// Reads CSV records with csv-parse inside a long-lived worker thread (see parserWorkerPool.ts): a file
// read ahead of its turn is parsed beside the ingesting thread, and a large one no longer holds that
// thread (csv-parse reads about 20 MB/s, so a 50 MB file held the server for 2.5 s). Plain JavaScript
// on purpose: it must load as it is under node, tsx, vitest and the Electron build. It only reads
// records; csv.ts finds the delimiter before and builds the rows after.
import { parentPort } from 'node:worker_threads';
import { CsvError, parse } from 'csv-parse/sync';

// The text as csv.ts decoded it, byte for byte: a leading U+FEFF is kept, as it was before the move here.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

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

// Imported by tests for readCsvRecords: there is no parent port then.
parentPort?.on('message', ({ id, data, delimiter }) => {
  try {
    parentPort.postMessage({ id, ok: true, records: readCsvRecords(decoder.decode(data), delimiter) });
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
