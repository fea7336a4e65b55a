import { appendTokenRows, foldedWordTokens, foldText, vocabularyRows, type RowOf } from './tokenize';

/**
 * How a text is cut into segments. Segments end at separators: ASCII characters that can be neither in
 * a word nor join one (not a letter, digit, apostrophe or hyphen). Text folding (NFKD, marks removed) and
 * lower-casing leave such characters where they are and never join characters across them, so a
 * segment's tokens do not depend on the text around it. The exception is the Greek final sigma, whose
 * lower case depends on the letters around it: a text with a capital sigma is read whole.
 */
const SEPARATOR = 0;
// Bit flags, or-ed over a segment's code units.
const DIGIT = 1;
const LETTER = 2;
const JOINER = 4; // ' and -
const NON_ASCII = 8;
const APOSTROPHE_SEEN = 16;
const ACCENTED = 32; // see ACCENTED_FOLD
const APOSTROPHE = 39;
const HYPHEN = 45;

const UNIT_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (c >= 48 && c <= 57) UNIT_CLASS[c] = DIGIT;
  else if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) UNIT_CLASS[c] = LETTER;
  else if (c === APOSTROPHE || c === HYPHEN) UNIT_CLASS[c] = JOINER;
}

/**
 * Latin letters that fold to one ASCII letter (é → e, Ö → o, ſ → s): NFKD, marks removed, lower-cased.
 * A word whose only non-ASCII characters are these is looked up like a plain word, folded as it is
 * scanned; as NFKD decomposes each of them apart from its neighbours, this is what folding the text gives.
 */
const ACCENTED_END = 0x250;
const ACCENTED_FOLD = new Uint16Array(ACCENTED_END);
for (let c = 128; c < ACCENTED_END; c++) {
  const folded = String.fromCharCode(c)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '');
  if (/^[A-Za-z]$/.test(folded)) ACCENTED_FOLD[c] = folded.toLowerCase().charCodeAt(0);
}

/**
 * A code unit of a word without non-ASCII characters other than ACCENTED_FOLD's, as the vocabulary
 * spells it: `c | 0x20` lower-cases ASCII letters and leaves digits, apostrophes and hyphens as they are.
 */
function folded(c: number): number {
  return c < 128 ? c | 0x20 : c < ACCENTED_END ? ACCENTED_FOLD[c]! : 0;
}

// FNV-1a over UTF-16 code units.
const HASH_SEED = 0x811c9dc5 | 0;
const HASH_PRIME = 0x01000193;

/** How close non-ASCII characters must be to be read in one piece (see nonAsciiRegionEnd). */
const NON_ASCII_GAP = 24;

/** The most frequent words (the package lists words by frequency) also get a small table of their own. */
const HOT_WORDS = 32_768;

/**
 * The vocabulary as open-addressing hash tables over the words' UTF-16 code units. `rows(text)` looks
 * words up while scanning the text: no substring, no lower-cased copy, no V8 string hashing. Only
 * segments with other non-ASCII characters than accented Latin letters, and words with an apostrophe,
 * take the exact path of `vocabularyRows` (regex, NFKD, clitics), with these tables as its lookup.
 *
 * A table holds two numbers per slot, row + 1 (0 = empty) and the word's hash. The large table holds
 * every word; the small one, at most half full, only the most frequent, so that most lookups stay in the
 * CPU cache.
 */
export class VocabularyIndex {
  /** Every word's code units, back to back; word `row` spans starts[row] .. starts[row + 1]. */
  private readonly units: Uint16Array;
  private readonly starts: Int32Array;
  private readonly all: Int32Array;
  private readonly allShift: number;
  private readonly hot: Int32Array;
  private readonly hotShift: number;
  /** The longest word's length: a longer range of text is not looked up. */
  private readonly longest: number;
  /** Whether some word is all digits; the package has none, so numbers in a text are not looked up. */
  private readonly numbers: boolean;
  /** Which code units occur in some word: a word with any other is not looked up (e.g. in other scripts). */
  private readonly used: Uint8Array;
  /** The row of a word exactly as spelled, or undefined (a bound function: the exact path's lookup). */
  readonly rowOf: RowOf = (word) => {
    let hash = HASH_SEED;
    for (let k = 0; k < word.length; k++) {
      const c = word.charCodeAt(k);
      if (this.used[c] === 0) return undefined;
      hash = Math.imul(hash ^ c, HASH_PRIME);
    }
    const row = this.find(this.all, this.allShift, hash, word, 0, word.length, false);
    return row < 0 ? undefined : row;
  };

  /** From the words, in row order; or from another index's `tables()` (another thread's, as they are). */
  constructor(source: readonly string[] | VocabularyTables) {
    const tables = isTables(source) ? source : buildTables(source);
    this.units = tables.units;
    this.starts = tables.starts;
    this.all = tables.all;
    this.allShift = tables.allShift;
    this.hot = tables.hot;
    this.hotShift = tables.hotShift;
    this.longest = tables.longest;
    this.numbers = tables.numbers;
    this.used = tables.used;
  }

  /** The index's tables (12 MB for the offline model's 341,479 words): an embedding worker's copy. */
  tables(): VocabularyTables {
    const { units, starts, all, allShift, hot, hotShift, longest, numbers, used } = this;
    return { units, starts, all, allShift, hot, hotShift, longest, numbers, used };
  }

  /** The vocabulary rows of a text's words, in order: the same as `vocabularyRows` gives. */
  rows(text: string): number[] {
    const rows: number[] = [];
    const n = text.length;
    let i = 0;
    while (i < n) {
      const first = text.charCodeAt(i);
      if (isSeparator(first)) {
        i++;
        continue;
      }
      const start = i;
      let seen = 0;
      let hash = HASH_SEED;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        const kind = c < 128 ? UNIT_CLASS[c]! : c < ACCENTED_END && ACCENTED_FOLD[c] ? ACCENTED : NON_ASCII;
        if (kind === SEPARATOR) break;
        seen |= kind;
        hash = Math.imul(hash ^ folded(c), HASH_PRIME);
      }
      if (seen & NON_ASCII || (seen & ACCENTED && seen & JOINER)) {
        i = nonAsciiRegionEnd(text, i);
        const region = foldText(text.slice(start, i));
        if (region.includes('Σ')) return vocabularyRows(text, this.rowOf);
        for (const token of foldedWordTokens(region)) appendTokenRows(token, this.rowOf, rows);
      } else if (seen & JOINER) {
        this.joinedRows(text, start, i, rows);
      } else if (seen & (LETTER | ACCENTED) || this.numbers) {
        // A plain word is one token; when it is unknown, no clitic or compound rule applies to it.
        const row = this.rangeRow(text, start, i, hash);
        if (row >= 0) rows.push(row);
      }
    }
    return rows;
  }

  /**
   * The rows of an ASCII segment with apostrophes or hyphens. Its tokens are runs of letters and digits
   * joined by single apostrophes or hyphens, as the tokenizer's regex reads them. A token with an
   * apostrophe takes the exact path (clitics); a compound is looked up whole, then part by part.
   */
  private joinedRows(text: string, start: number, end: number, rows: number[]): void {
    let p = start;
    while (p < end) {
      if (UNIT_CLASS[text.charCodeAt(p)] === JOINER) {
        p++;
        continue;
      }
      const tokenStart = p;
      let seen = 0;
      let hash = HASH_SEED;
      for (; p < end; p++) {
        const c = text.charCodeAt(p);
        const kind = UNIT_CLASS[c]!;
        if (kind === JOINER && (p + 1 === end || UNIT_CLASS[text.charCodeAt(p + 1)] === JOINER)) break;
        seen |= c === APOSTROPHE ? APOSTROPHE_SEEN : kind;
        hash = Math.imul(hash ^ (c | 0x20), HASH_PRIME);
      }
      if (seen & APOSTROPHE_SEEN) {
        appendTokenRows(text.slice(tokenStart, p).toLowerCase(), this.rowOf, rows);
        continue;
      }
      if (seen & (JOINER | LETTER) || this.numbers) {
        const row = this.rangeRow(text, tokenStart, p, hash);
        if (row >= 0) {
          rows.push(row);
          continue;
        }
      }
      if (!(seen & JOINER)) continue;
      for (let part = tokenStart; part < p; part++) {
        const partStart = part;
        while (part < p && text.charCodeAt(part) !== HYPHEN) part++;
        const partRow = this.partRow(text, partStart, part);
        if (partRow >= 0) rows.push(partRow);
      }
    }
  }

  /** The row of a word of letters and digits, without looking up digits when no word is a number. */
  private partRow(text: string, start: number, end: number): number {
    let hash = HASH_SEED;
    let letters = false;
    for (let k = start; k < end; k++) {
      const c = text.charCodeAt(k);
      if (c > 57) letters = true;
      hash = Math.imul(hash ^ (c | 0x20), HASH_PRIME);
    }
    return letters || this.numbers ? this.rangeRow(text, start, end, hash) : -1;
  }

  /** The row of text[start, end) folded, which holds only letters, digits, apostrophes and hyphens. */
  private rangeRow(text: string, start: number, end: number, hash: number): number {
    const length = end - start;
    if (length > this.longest) return -1;
    const row = this.find(this.hot, this.hotShift, hash, text, start, length, true);
    return row >= 0 ? row : this.find(this.all, this.allShift, hash, text, start, length, true);
  }

  /**
   * The row of the word text[start, start + length) in a table, or -1; with `lower`, the text's code
   * units are compared `folded` (right for ASCII letters, digits, apostrophes, hyphens and ACCENTED_FOLD).
   */
  private find(
    table: Int32Array,
    shift: number,
    hash: number,
    text: string,
    start: number,
    length: number,
    lower: boolean,
  ): number {
    const { units, starts } = this;
    const mask = (table.length >> 1) - 1;
    for (let slot = slotOf(hash, shift); ; slot = (slot + 1) & mask) {
      const row = table[2 * slot]! - 1;
      if (row < 0) return -1;
      if (table[2 * slot + 1] !== hash) continue;
      const wordStart = starts[row]!;
      if (starts[row + 1]! - wordStart !== length) continue;
      let k = 0;
      while (k < length) {
        const c = text.charCodeAt(start + k);
        if (units[wordStart + k] !== (lower ? folded(c) : c)) break;
        k++;
      }
      if (k === length) return row;
    }
  }
}

/** An index's tables (see VocabularyIndex's fields). */
export interface VocabularyTables {
  units: Uint16Array;
  starts: Int32Array;
  all: Int32Array;
  allShift: number;
  hot: Int32Array;
  hotShift: number;
  longest: number;
  numbers: boolean;
  used: Uint8Array;
}

const isTables = (source: readonly string[] | VocabularyTables): source is VocabularyTables =>
  !Array.isArray(source);

function buildTables(words: readonly string[]): VocabularyTables {
  let total = 0;
  for (const word of words) total += word.length;
  const units = new Uint16Array(total);
  const starts = new Int32Array(words.length + 1);
  const used = new Uint8Array(0x10000);
  // About two thirds full: most lookups end in the small table.
  const bits = Math.max(4, Math.ceil(Math.log2(words.length * 1.5)));
  const all = new Int32Array(2 << bits);
  const allShift = 32 - bits;
  const hashes = new Int32Array(words.length);
  let longest = 0;
  let numbers = false;
  let offset = 0;
  for (let row = 0; row < words.length; row++) {
    const word = words[row]!;
    let hash = HASH_SEED;
    let digits = word.length > 0;
    for (let k = 0; k < word.length; k++) {
      const c = word.charCodeAt(k);
      units[offset++] = c;
      used[c] = 1;
      hash = Math.imul(hash ^ c, HASH_PRIME);
      if (c < 48 || c > 57) digits = false;
    }
    starts[row + 1] = offset;
    hashes[row] = hash;
    longest = Math.max(longest, word.length);
    numbers ||= digits;
    insert(units, starts, all, allShift, row, hash);
  }
  // A word listed twice keeps its later row, so its small-table entry is taken from the large table.
  const hotBits = Math.max(4, Math.ceil(Math.log2(Math.min(words.length, HOT_WORDS) * 2)));
  const hot = new Int32Array(2 << hotBits);
  const hotShift = 32 - hotBits;
  for (let at = 0; at < all.length; at += 2) {
    const row = all[at]! - 1;
    if (row >= 0 && row < HOT_WORDS) place(hot, hotShift, row, hashes[row]!);
  }
  return { units, starts, all, allShift, hot, hotShift, longest, numbers, used };
}

/** Puts a word in the large table; a repeated word takes the later row, as a Map built from the list would. */
function insert(
  units: Uint16Array,
  starts: Int32Array,
  all: Int32Array,
  allShift: number,
  row: number,
  hash: number,
): void {
  const start = starts[row]!;
  const length = starts[row + 1]! - start;
  const mask = (all.length >> 1) - 1;
  for (let slot = slotOf(hash, allShift); ; slot = (slot + 1) & mask) {
    const other = all[2 * slot]! - 1;
    if (other < 0) return place(all, allShift, row, hash);
    if (all[2 * slot + 1] !== hash) continue;
    const otherStart = starts[other]!;
    if (starts[other + 1]! - otherStart !== length) continue;
    let k = 0;
    while (k < length && units[start + k] === units[otherStart + k]) k++;
    if (k === length) {
      all[2 * slot] = row + 1;
      return;
    }
  }
}

/**
 * Where the exact path's region ends, given the end of a segment with non-ASCII characters: at the end of
 * the last following segment with one, as long as each is within NON_ASCII_GAP code units of the
 * previous one. Text in another script is then read in one piece rather than word by word.
 */
function nonAsciiRegionEnd(text: string, segmentEnd: number): number {
  let end = segmentEnd;
  for (let k = segmentEnd; k < text.length && k - end <= NON_ASCII_GAP; k++) {
    if (text.charCodeAt(k) < 128) continue;
    while (k < text.length && !isSeparator(text.charCodeAt(k))) k++;
    end = k;
  }
  return end;
}

function isSeparator(c: number): boolean {
  return c < 128 && UNIT_CLASS[c] === SEPARATOR;
}

/** The slot for a hash: the high bits of the mixed hash, which depend on all of its bits. */
function slotOf(hash: number, shift: number): number {
  return Math.imul(hash ^ (hash >>> 16), 0x45d9f3b) >>> shift;
}

/** Puts a row in the first free slot from its hash's slot on. */
function place(table: Int32Array, shift: number, row: number, hash: number): void {
  const mask = (table.length >> 1) - 1;
  let slot = slotOf(hash, shift);
  while (table[2 * slot] !== 0) slot = (slot + 1) & mask;
  table[2 * slot] = row + 1;
  table[2 * slot + 1] = hash;
}
