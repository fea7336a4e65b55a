import { validChunking } from './chunkPreview';
import type { ChunkingFormValues, CsvRowsFormValues, IngestSettings } from './types';

/** The server's rule until the creator picks another: a row needs every named column (docs/ingestion.md). */
export const DEFAULT_CSV_ROWS: CsvRowsFormValues = { rule: 'named', columns: [] };

/** The server's bounds on `csvRequiredColumns` (src/server/routes/studio/ingest.ts). */
const MAX_COLUMNS = 100;
const MAX_NAME = 200;

/** The listed column names as sent: trimmed, without empty or repeated ones. */
const listedColumns = (values: CsvRowsFormValues): string[] => [
  ...new Set(values.columns.map((c) => c.trim()).filter((c) => c !== '')),
];

/** What is wrong with the CSV row rule as the creator set it, checked as the server checks it. */
export function csvRowsError(values: CsvRowsFormValues): string | undefined {
  if (values.rule !== 'listed') return undefined;
  const columns = listedColumns(values);
  if (columns.length === 0) return 'Name at least one column, or choose “Every named column”.';
  if (columns.length > MAX_COLUMNS) return `Name at most ${MAX_COLUMNS} columns.`;
  const long = columns.find((c) => c.length > MAX_NAME);
  if (long) return `A column name has at most ${MAX_NAME} characters (“${long.slice(0, 24)}…”).`;
  return undefined;
}

/**
 * The `csvRequiredColumns` of a request: undefined leaves the server's default (every named column), []
 * keeps every row, else the columns a row must fill. Undefined too while the rule holds an error.
 */
export function csvRequiredColumns(values: CsvRowsFormValues): string[] | undefined {
  if (csvRowsError(values)) return undefined;
  if (values.rule === 'none') return [];
  return values.rule === 'listed' ? listedColumns(values) : undefined;
}

/** What an ingestion and its preview send, or undefined while the form holds something the server refuses. */
export function validIngestSettings(
  chunking: ChunkingFormValues,
  csvRows: CsvRowsFormValues,
): IngestSettings | undefined {
  const settings = validChunking(chunking);
  if (!settings || csvRowsError(csvRows)) return undefined;
  const columns = csvRequiredColumns(csvRows);
  return columns === undefined ? settings : { ...settings, csvRequiredColumns: columns };
}
