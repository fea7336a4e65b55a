const CANDIDATES = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CANDIDATES)[number];

const SAMPLE_RECORDS = 50;
/** How much of the text detectDelimiter reads at most: a prefix longer than this gives the same answer. */
export const SAMPLE_CHARS = 64 * 1024;

/**
 * Guesses the delimiter from the first records: for each candidate, the count per record outside quotes;
 * the winner is the candidate whose most common non-zero count covers the most records (then the larger
 * count, then the order comma, semicolon, tab, pipe). csv-parse's fixed comma would read a pipe or tab
 * file as one column. `undefined` means no candidate is consistent (its most common count is 0): the
 * file has a single column, and commas in it are text ("Lorem, ipsum").
 */
export function detectDelimiter(text: string): CsvDelimiter | undefined {
  const perRecord = countOutsideQuotes(text);
  let best: { delimiter: CsvDelimiter; coverage: number; count: number } | undefined;
  for (const delimiter of CANDIDATES) {
    const counts = perRecord.map((record) => record[delimiter]);
    const { value: count, frequency } = mode(counts);
    if (count === 0) continue;
    const coverage = frequency / counts.length;
    if (!best || coverage > best.coverage || (coverage === best.coverage && count > best.count)) {
      best = { delimiter, coverage, count };
    }
  }
  return best?.delimiter;
}

export type Counts = Record<CsvDelimiter, number>;

// What each ASCII code unit is to the count: a candidate's index + 1, or one of these (SPACE: what
// String.prototype.trim removes, tab aside, which is a candidate).
const OTHER = 0;
const NEWLINE = 5;
const QUOTE = 6;
const SPACE = 7;
const ASCII_KIND = new Uint8Array(128);
CANDIDATES.forEach((d, i) => (ASCII_KIND[d.charCodeAt(0)] = i + 1));
ASCII_KIND[0x0a] = NEWLINE;
ASCII_KIND[0x22] = QUOTE;
for (const code of [0x0b, 0x0c, 0x0d, 0x20]) ASCII_KIND[code] = SPACE;
/** What String.prototype.trim removes outside ASCII: `\s` (ECMAScript's WhiteSpace and LineTerminator). */
const SPACE_OUTSIDE_ASCII = /^\s$/;

/**
 * Delimiter counts per non-blank record of the sample. A quote opens a quoted field only at the start of
 * a field (after a line start, a candidate or spaces), so an inch mark in `5" screen` does not hide the
 * rest of the line; `""` inside quotes is an escaped quote. Exported for tests.
 *
 * It reads character codes through a table, not one-character strings: every CSV file of an ingestion
 * is sampled here on the ingesting thread, and the string version took 180 ms of it per 25 MB of small
 * CSV files (docs/performance.md, twentieth pass).
 */
export function countOutsideQuotes(text: string): Counts[] {
  const records: Counts[] = [];
  const end = Math.min(text.length, SAMPLE_CHARS);
  const counts = new Int32Array(CANDIDATES.length);
  let blank = true;
  let inQuotes = false;
  let atFieldStart = true;
  for (let i = 0; i < end && records.length < SAMPLE_RECORDS; i++) {
    const code = text.charCodeAt(i);
    if (inQuotes) {
      if (code === 0x22) {
        if (text.charCodeAt(i + 1) === 0x22) i++;
        else inQuotes = false;
      }
      continue;
    }
    const kind =
      code < 128 ? ASCII_KIND[code]! : SPACE_OUTSIDE_ASCII.test(String.fromCharCode(code)) ? SPACE : OTHER;
    if (kind === NEWLINE) {
      if (!blank) records.push(countsOf(counts));
      counts.fill(0);
      blank = true;
      atFieldStart = true;
    } else if (kind !== OTHER && kind < NEWLINE) {
      counts[kind - 1]!++;
      blank = false;
      atFieldStart = true;
    } else if (kind === QUOTE && atFieldStart) {
      inQuotes = true;
      blank = false;
    } else if (kind !== SPACE) {
      blank = false;
      atFieldStart = false;
    }
  }
  if (!blank && records.length < SAMPLE_RECORDS) records.push(countsOf(counts));
  return records;
}

function countsOf(counts: Int32Array): Counts {
  return { ',': counts[0]!, ';': counts[1]!, '\t': counts[2]!, '|': counts[3]! };
}

/** The most frequent value (the larger one on a tie) and how often it occurs. */
function mode(values: number[]): { value: number; frequency: number } {
  const frequencies = new Map<number, number>();
  for (const value of values) frequencies.set(value, (frequencies.get(value) ?? 0) + 1);
  let best = { value: 0, frequency: 0 };
  for (const [value, frequency] of frequencies) {
    if (frequency > best.frequency || (frequency === best.frequency && value > best.value))
      best = { value, frequency };
  }
  return best;
}
