import { describe, expect, it } from 'vitest';
import { appendTokenRows, foldText, vocabularyRows, wordTokens } from '../../../src/core/embed/tokenize';

describe('wordTokens', () => {
  it('lower-cases, drops punctuation and keeps inner hyphens and apostrophes', () => {
    expect(wordTokens('The well-known Café, in "Zürich" -- isn\'t it? E-mail: a_b@c.org 3.14')).toEqual([
      'the',
      'well-known',
      'cafe',
      'in',
      'zurich',
      "isn't",
      'it',
      'e-mail',
      'a',
      'b',
      'c',
      'org',
      '3',
      '14',
    ]);
  });

  it('unifies typographic apostrophes and hyphens and folds compatibility forms', () => {
    expect(wordTokens('Don\u2019t co\u2010operate \uFB01nal ＡＢＣ naïve')).toEqual([
      "don't",
      'co-operate',
      'final',
      'abc',
      'naive',
    ]);
  });

  it('returns no tokens for text without letters or digits', () => {
    expect(wordTokens(' -- ... !? ')).toEqual([]);
    expect(wordTokens('')).toEqual([]);
  });
});

describe('foldText', () => {
  it('leaves ASCII text as it is and folds accents, compatibility forms, apostrophes and hyphens', () => {
    expect(foldText("Don't -- STOP_x")).toBe("Don't -- STOP_x");
    expect(foldText('Café \u201cZürich\u201d don\u2019t co\u2010op \ufb01ne ＡＢ')).toBe(
      "Cafe \u201cZurich\u201d don't co-op fine AB",
    );
  });
});

describe('vocabularyRows', () => {
  const vocab = [
    'the',
    'cat',
    'do',
    'not',
    'can',
    'will',
    'it',
    'are',
    'well-known',
    'related',
    'darcy',
    'rock',
    'roll',
  ];
  const rowOf = (w: string) => {
    const i = vocab.indexOf(w);
    return i < 0 ? undefined : i;
  };
  const words = (text: string) => vocabularyRows(text, rowOf).map((r) => vocab[r]);

  it('keeps repeated words and skips unknown ones', () => {
    expect(words('The cat, the CAT and the dog')).toEqual(['the', 'cat', 'the', 'cat', 'the']);
    expect(words('zzzz qqqq 1234')).toEqual([]);
  });

  it('spells out negations and contractions the vocabulary lacks', () => {
    expect(words("don't can't won't")).toEqual(['do', 'not', 'can', 'not', 'will', 'not']);
    expect(words("it's they're cat's")).toEqual(['it', 'are', 'cat']);
  });

  it('joins or splits other apostrophes', () => {
    expect(words("D'Arcy rock'n'roll")).toEqual(['darcy', 'rock', 'roll']);
  });

  it('treats words that name object properties as plain words', () => {
    expect(words("constructorn't cat'constructor __proto__'s toString")).toEqual(['not', 'cat']);
  });

  it('appends one token at a time by the same rules', () => {
    const rows = [1];
    for (const token of ["don't", 'covid-related', 'zzz', "it's"]) appendTokenRows(token, rowOf, rows);
    expect(rows.map((r) => vocab[r])).toEqual(['cat', 'do', 'not', 'related', 'it']);
  });

  it('keeps a known compound whole and splits an unknown one into its known parts', () => {
    expect(words('well-known covid-related cat-do')).toEqual(['well-known', 'related', 'cat', 'do']);
  });
});
