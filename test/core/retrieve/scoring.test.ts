import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  BM25_K1,
  bm25Ceiling,
  bm25Idf,
  denseScore,
  hybridScore,
  lexicalPhrases,
  lexicalScore,
  weightedPhrases,
} from '../../../src/core/retrieve/scoring';

/** An in-memory FTS5 table tokenized like chunks_fts, to check the formulas against SQLite itself. */
function fts(docs: string[]) {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61')`);
  const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
  docs.forEach((d, i) => insert.run(i + 1, d));
  const bm25 = (query: string) =>
    new Map(
      (
        db.prepare('SELECT rowid, -bm25(t) AS s FROM t WHERE t MATCH ?').all(query) as {
          rowid: number;
          s: number;
        }[]
      ).map((r) => [r.rowid, r.s]),
    );
  return { db, bm25 };
}

describe('lexicalPhrases', () => {
  it('quotes each word once (ignoring case), dropping punctuation and FTS5 syntax', () => {
    expect(lexicalPhrases('Who is the "mayor" of Berlin? BERLIN! -x* OR NEAR(a b)')).toEqual([
      '"Who"',
      '"is"',
      '"the"',
      '"mayor"',
      '"of"',
      '"Berlin"',
      '"x"',
      '"OR"',
      '"NEAR"',
      '"a"',
      '"b"',
    ]);
    expect(lexicalPhrases("Zürich's café, 東京 2024")).toEqual([
      '"Zürich"',
      '"s"',
      '"café"',
      '"東京"',
      '"2024"',
    ]);
    expect(lexicalPhrases('?! ... --')).toEqual([]);
  });

  it('gives phrases FTS5 accepts, whatever the text', () => {
    const { bm25, db } = fts(['the mayor of berlin', 'a cafe in zurich']);
    expect([...bm25(lexicalPhrases('"Berlin" OR mayor* AND (x').join(' OR ')).keys()]).toEqual([1]);
    db.close();
  });
});

describe('BM25 normalization', () => {
  it("uses FTS5's idf: a term in 1 of 4 equal-length rows scores exactly its idf at frequency 1", () => {
    const { bm25, db } = fts(['apple one', 'pear two', 'plum three', 'fig four']);
    expect(bm25('"apple"').get(1)).toBeCloseTo(bm25Idf(4, 1), 12);
    expect(bm25Idf(4, 1)).toBeCloseTo(Math.log(3.5 / 1.5), 12);
    // At frequency 1 and average length a term reaches 1 / (k1 + 1) of its ceiling.
    const weighted = weightedPhrases(['"apple"'], { rows: 4, docFreq: [1] });
    expect(lexicalScore(bm25('"apple"').get(1)!, bm25Ceiling(weighted))).toBeCloseTo(1 / (BM25_K1 + 1), 12);
    db.close();
  });

  it('keeps every score below 1, approaching it as a chunk repeats every word', () => {
    const { bm25, db } = fts([
      'red',
      'blue',
      'green',
      'red blue '.repeat(200),
      'yellow',
      'black',
      'white',
      'grey',
    ]);
    const phrases = ['"red"', '"blue"'];
    const weighted = weightedPhrases(phrases, { rows: 8, docFreq: [2, 2] });
    const scores = bm25(phrases.join(' OR '));
    const share = lexicalScore(scores.get(4)!, bm25Ceiling(weighted));
    expect(share).toBeGreaterThan(0.9);
    expect(share).toBeLessThan(1);
    expect(lexicalScore(scores.get(1)!, bm25Ceiling(weighted))).toBeLessThan(0.5);
    db.close();
  });

  it('weighs only phrases present in fewer than half of the rows, unless none is', () => {
    const weighted = weightedPhrases(['"the"', '"rare"', '"absent"', '"half"'], {
      rows: 10,
      docFreq: [9, 1, 0, 5],
    });
    expect(weighted.map((w) => w.phrase)).toEqual(['"rare"']);
    expect(weighted[0]!.idf).toBeCloseTo(Math.log(9.5 / 1.5), 12);
    // Only common phrases present: they are all kept, at FTS5's idf of 1e-6.
    expect(weightedPhrases(['"the"', '"absent"', '"of"'], { rows: 2, docFreq: [2, 0, 1] })).toEqual([
      { phrase: '"the"', idf: 1e-6 },
      { phrase: '"of"', idf: 1e-6 },
    ]);
    expect(bm25Ceiling([])).toBe(0);
    expect(lexicalScore(3, 0)).toBe(0);
  });
});

describe('dense and hybrid scores', () => {
  it('maps cosine distance to similarity in [0, 1] and mixes the parts convexly', () => {
    expect(denseScore(0)).toBe(1);
    expect(denseScore(0.25)).toBe(0.75);
    expect(denseScore(1.4)).toBe(0);
    expect(hybridScore(1, 0, 0.3)).toBeCloseTo(0.3, 12);
    expect(hybridScore(0.5, 0.5, 0.3)).toBeCloseTo(0.5, 12);
    expect(hybridScore(1, 1)).toBeCloseTo(1, 12);
  });
});
