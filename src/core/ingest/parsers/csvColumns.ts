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
 * first ("Stanley Cups,," over "Team,Location,Stanley Cups"), and the next record, the header, has at
 * least two and looks like one (looksLikeData). Returns the title, or undefined when the first record is
 * the header. A header whose first cell is empty is not a title: pandas writes its index column so
 * (",text" over "0,hello"), and taking it for a title made the first data row the header.
 */
export function detectTitleRow(records: string[][]): string | undefined {
  const [first, second] = records;
  if (!first || !second) return undefined;
  const title = first[0] ?? '';
  const alone = title !== '' && first.every((cell, index) => index === 0 || cell === '');
  if (!alone || second.filter((cell) => cell !== '').length < 2) return undefined;
  return looksLikeData(second, records.slice(2, 2 + SAMPLE_ROWS)) ? undefined : title;
}

/** Rows below a would-be header that looksLikeData compares it with. */
const SAMPLE_ROWS = 20;
/** Longer than any column's name: such a cell is data (and VALUE_CELL is never run on a long cell). */
const MAX_NAME_CHARS = 200;
/**
 * Cells that are values, never a column's name: numbers (signs, currency, thousands separators, decimals,
 * exponents, percentages), dates and times, booleans, e-mail addresses and URLs.
 */
const VALUE_CELL = [
  /^[(+-]?[$€£¥]?\s?\d[\d\s.,:/'-]*(?:[eE][+-]?\d+)?\s?(?:%|[$€£¥]|[ap]\.?m\.?)?\)?$/i,
  /^\d{4}-\d{2}-\d{2}[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?$/i,
  /^(?:true|false)$/i,
  /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  /^(?:https?:\/\/|www\.)\S+$/i,
];

/**
 * Whether a record that would be the header under a title is rather the first data row: taking it for
 * the header loses that row, while the other mistake (the title taken for the header) only names the
 * columns badly, so any sign of data decides. A sign is a value cell (VALUE_CELL: "id,," over "1,foo,bar"
 * is a header over data, not a title over a header), or, as csv.Sniffer's has_header compares the first
 * row with the rest, a cell with digits shaped like every cell below it in its column ("A1" over "A2",
 * "INV-0001" over "INV-0002"; a header "Q1" over "120" is not), or a cell too long for a name. A
 * header of years ("Region,2019,2020") is taken for data: its title then names the first column.
 */
function looksLikeData(record: string[], below: string[][]): boolean {
  return record.some((cell, index) => {
    if (cell === '') return false;
    if (cell.length > MAX_NAME_CHARS) return true;
    if (VALUE_CELL.some((value) => value.test(cell))) return true;
    if (!/\d/.test(cell)) return false;
    const column = below.map((row) => row[index] ?? '').filter((value) => value !== '');
    return column.length > 0 && column.every((value) => shape(value) === shape(cell));
  });
}

/** Letters as `a`, digits as `9`, each run as one: `INV-0001` is `a-9`. */
const shape = (cell: string) => cell.replace(/\p{L}+/gu, 'a').replace(/\d+/g, '9');

/**
 * The document metadata key for a title row: `title`, unless a column (or a key the pipeline sets) has
 * it, and then `title_2` and so on, as reserved keys are kept off columns: the document's metadata goes
 * into every row's chunk, where the row's own `title` cell would overwrite it.
 */
export function titleKey(columns: CsvColumn[]): string {
  return uniqueName('title', new Set([...RESERVED_METADATA_KEYS, ...columns.map((column) => column.key)]));
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
