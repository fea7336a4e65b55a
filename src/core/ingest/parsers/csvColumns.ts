import { InvalidDocument } from '../errors';
import { RESERVED_METADATA_KEYS, uniqueName } from './flatten';

export interface CsvColumn {
  index: number;
  /** The header cell as written, used in the row text; `column_<n>` when the header cell is empty or missing. */
  label: string;
  /** The metadata key: the label, made unique (`name`, `name_2`) and kept off the reserved keys (`row`). */
  key: string;
  /** false for a column without a header name (an empty header cell, or cells past the header in ragged rows). */
  named: boolean;
}

/**
 * A title row above the header, as spreadsheets export it: the first record's only non-empty cell is its
 * first ("Stanley Cups,," over "Team,Location,Stanley Cups"), and the next record has at least two.
 * Returns the title, or undefined when the first record is the header. A header whose first cell is
 * empty is not a title: pandas writes its index column so (",text" over "0,hello"), and taking it for
 * a title made the first data row the header.
 */
export function detectTitleRow(records: string[][]): string | undefined {
  const [first, second] = records;
  if (!first || !second) return undefined;
  const title = first[0] ?? '';
  const alone = title !== '' && first.every((cell, index) => index === 0 || cell === '');
  return alone && second.filter((cell) => cell !== '').length >= 2 ? title : undefined;
}

/** One column per position up to the widest record, so cells of ragged rows past the header are kept. */
export function buildColumns(header: string[], width: number): CsvColumn[] {
  const taken = new Set(RESERVED_METADATA_KEYS);
  const columns: CsvColumn[] = [];
  for (let index = 0; index < width; index++) {
    const name = header[index] ?? '';
    const label = name || `column_${index + 1}`;
    columns.push({ index, label, key: uniqueName(label, taken), named: name !== '' });
  }
  return columns;
}

/**
 * The columns a row must fill: every named column by default, or the ones asked for by header name or
 * metadata key. An unknown name is refused, listing the real headers.
 */
export function requiredColumns(
  columns: CsvColumn[],
  requested: string[] | undefined,
  source: string,
): CsvColumn[] {
  if (requested === undefined) return columns.filter((column) => column.named);
  const find = (name: string) =>
    columns.find((c) => c.named && c.label === name) ?? columns.find((c) => c.key === name);
  const unknown = requested.filter((name) => !find(name));
  if (unknown.length > 0) {
    const headers = columns.filter((c) => c.named).map((c) => `"${c.label}"`);
    throw new InvalidDocument(
      source,
      `required column(s) ${unknown.map((name) => `"${name}"`).join(', ')} not found; the header has ${headers.join(', ') || 'no named columns'}.`,
    );
  }
  return [...new Set(requested.map((name) => find(name) as CsvColumn))];
}
