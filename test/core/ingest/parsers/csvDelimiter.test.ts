import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  countOutsideQuotes,
  detectDelimiter,
  type Counts,
  type CsvDelimiter,
} from '../../../../src/core/ingest/parsers/csvDelimiter';
import { seededRandom } from '../../../helpers/seeded';

const FIXTURES = fileURLToPath(new URL('../../../../../shared/fixtures/docs/', import.meta.url));

/**
 * The counts as the first version read them, one-character strings and String.prototype.trim: the
 * reference the character-code version must agree with.
 */
function referenceCounts(text: string): Counts[] {
  const candidates: readonly string[] = [',', ';', '\t', '|'];
  const records: Counts[] = [];
  const sample = text.slice(0, 64 * 1024);
  const empty = (): Counts => ({ ',': 0, ';': 0, '\t': 0, '|': 0 });
  let counts = empty();
  let blank = true;
  let inQuotes = false;
  let atFieldStart = true;
  for (let i = 0; i < sample.length && records.length < 50; i++) {
    const char = sample[i]!;
    if (inQuotes) {
      if (char === '"' && sample[i + 1] === '"') i++;
      else if (char === '"') inQuotes = false;
      continue;
    }
    if (char === '\n') {
      if (!blank) records.push(counts);
      counts = empty();
      blank = true;
      atFieldStart = true;
    } else if (candidates.includes(char)) {
      counts[char as CsvDelimiter]++;
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
  if (!blank && records.length < 50) records.push(counts);
  return records;
}

/** Characters the counting treats apart, every kind of white space String.prototype.trim removes, and others. */
const ALPHABET = [
  ...',;\t|"\n\r ',
  ...'ab9',
  '\u000b',
  '\u000c',
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u200b', // not white space
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
  '\u180e', // no longer white space
  '\ud83d\ude00',
  'é',
];

describe('countOutsideQuotes', () => {
  it('counts as the string version did, on random texts of the characters it treats apart', () => {
    const rng = seededRandom(20261127);
    for (let n = 0; n < 3_000; n++) {
      const length = rng.int(n < 2_000 ? 80 : 400);
      let text = '';
      for (let i = 0; i < length; i++) text += rng.pick(ALPHABET);
      expect(countOutsideQuotes(text), JSON.stringify(text)).toEqual(referenceCounts(text));
    }
  });

  it('stops where the sample ends: 64 K characters or 50 records', () => {
    const long = `${'x'.repeat(64 * 1024 - 2)}",a,b\nc,d`;
    expect(countOutsideQuotes(`"${long}`)).toEqual(referenceCounts(`"${long}`));
    const many = Array.from({ length: 80 }, (_, i) => `a,${i};b`).join('\n');
    expect(countOutsideQuotes(many)).toHaveLength(50);
    expect(countOutsideQuotes(many)).toEqual(referenceCounts(many));
  });

  it('reads every CSV fixture as the string version did', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.csv'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(FIXTURES, file), 'utf8');
      expect(countOutsideQuotes(text), file).toEqual(referenceCounts(text));
    }
  });

  it('does not count a delimiter inside quotes, nor take an inch mark for a quote', () => {
    expect(countOutsideQuotes('a,"b;c",d\n5" screen;x,y\n')).toEqual([
      { ',': 2, ';': 0, '\t': 0, '|': 0 },
      { ',': 1, ';': 1, '\t': 0, '|': 0 },
    ]);
    // A line of white space only (no-break and ideographic spaces, a line separator) is not a record.
    expect(countOutsideQuotes('a|b\n \u00a0\u3000\u2028\nc|d')).toEqual([
      { ',': 0, ';': 0, '\t': 0, '|': 1 },
      { ',': 0, ';': 0, '\t': 0, '|': 1 },
    ]);
  });
});

describe('detectDelimiter', () => {
  it.each([
    [',', 'name,team,cups\nA,B,1\nC,D,2\n'],
    [';', 'name;team;cups\nA;B;1\nC;"D; E";2\n'],
    ['\t', 'name\tteam\tcups\nA\tB\t1\n'],
    ['|', 'name|team|cups\nA|B, C|1\nD|E|2\n'],
  ] as const)('finds %j', (delimiter, text) => {
    expect(detectDelimiter(text)).toBe(delimiter);
  });

  it('finds none in a single column whose commas are text', () => {
    expect(detectDelimiter('Notes\nLorem, ipsum\nDolor sit\nAmet, consectetur, elit\n')).toBeUndefined();
  });
});
