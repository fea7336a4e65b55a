const CANDIDATES = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CANDIDATES)[number];

const SAMPLE_RECORDS = 50;
const SAMPLE_CHARS = 64 * 1024;

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

type Counts = Record<CsvDelimiter, number>;

/**
 * Delimiter counts per non-blank record of the sample. A quote opens a quoted field only at the start of
 * a field (after a line start, a candidate or spaces), so an inch mark in `5" screen` does not hide the
 * rest of the line; `""` inside quotes is an escaped quote.
 */
function countOutsideQuotes(text: string): Counts[] {
  const records: Counts[] = [];
  const sample = text.slice(0, SAMPLE_CHARS);
  let counts = emptyCounts();
  let blank = true;
  let inQuotes = false;
  let atFieldStart = true;
  for (let i = 0; i < sample.length && records.length < SAMPLE_RECORDS; i++) {
    const char = sample[i] as string;
    if (inQuotes) {
      if (char === '"' && sample[i + 1] === '"') i++;
      else if (char === '"') inQuotes = false;
      continue;
    }
    if (char === '\n') {
      if (!blank) records.push(counts);
      counts = emptyCounts();
      blank = true;
      atFieldStart = true;
    } else if (isCandidate(char)) {
      counts[char]++;
      blank = false;
      atFieldStart = true;
    } else if (char === '"' && atFieldStart) {
      inQuotes = true;
      blank = false;
    } else if (char.trim() !== '') {
      blank = false;
      atFieldStart = false;
    }
  }
  if (!blank && records.length < SAMPLE_RECORDS) records.push(counts);
  return records;
}

function isCandidate(char: string): char is CsvDelimiter {
  return (CANDIDATES as readonly string[]).includes(char);
}

function emptyCounts(): Counts {
  return { ',': 0, ';': 0, '\t': 0, '|': 0 };
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
