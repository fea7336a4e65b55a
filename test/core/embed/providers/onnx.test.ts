import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosineSimilarity } from '../../../../src/core/embed/embedder';
import { DomainError } from '../../../../src/core/errors';
import { onnxEmbedder } from '../../../../src/core/embed/providers/onnx';
import { TINY_DIMENSIONS, tinyTokenVector, writeTinyOnnxModel } from '../../../helpers/fakeProviders';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'kbs-onnx-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** What the tiny model gives a text: the pooled token vectors of its known words, normalized. */
function expected(ids: number[], pooling: 'mean' | 'cls'): number[] {
  const rows = (pooling === 'cls' ? ids.slice(0, 1) : ids).map(tinyTokenVector);
  const mean = rows[0]!.map((_, j) => rows.reduce((s, r) => s + r[j]!, 0) / rows.length);
  const norm = Math.hypot(...mean);
  return mean.map((x) => x / norm);
}

const close = (actual: Float32Array, wanted: number[]) =>
  wanted.forEach((x, i) => expect(actual[i]).toBeCloseTo(x, 5));

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected an error');
}

describe('onnxEmbedder on a tiny model built in the test', () => {
  it('reads the dimensions from config.json and mean-pools over the real tokens only', async () => {
    const dir = await writeTinyOnnxModel(join(root, 'tiny-mean'));
    const embedder = onnxEmbedder({ modelDir: dir });
    expect(embedder.model).toBe('tiny-mean');
    expect(embedder.dimensions).toBe(TINY_DIMENSIONS);

    // "cat dog" = ids 2 3; "Fish" = 4 (lower-cased), padded in the batch; "bird zebra" = 5 and [UNK] 1.
    const vectors = await embedder.embed(['cat dog', 'Fish', 'bird zebra'], 'document');
    expect(vectors).toHaveLength(3);
    close(vectors[0]!, expected([2, 3], 'mean'));
    close(vectors[1]!, expected([4], 'mean'));
    close(vectors[2]!, expected([5, 1], 'mean'));
    vectors.forEach((v) => expect(Math.hypot(...v)).toBeCloseTo(1, 5));
  });

  it('pools the first token with cls, prepends the query prefix, and batches', async () => {
    const dir = await writeTinyOnnxModel(join(root, 'tiny-cls'));
    const embedder = onnxEmbedder({
      modelDir: dir,
      model: 'tiny-cls-v1',
      pooling: 'cls',
      queryPrefix: 'bird ',
      batchSize: 2,
    });
    expect(embedder.model).toBe('tiny-cls-v1');
    const docs = await embedder.embed(['dog cat', 'fish dog', 'cat'], 'document');
    close(docs[0]!, expected([3], 'cls'));
    close(docs[1]!, expected([4], 'cls'));
    close(docs[2]!, expected([2], 'cls'));
    const [query] = await embedder.embed(['dog cat'], 'query');
    close(query!, expected([5], 'cls'));
  });

  it('finds a quantized file when there is no fp32 one', async () => {
    const dir = await writeTinyOnnxModel(join(root, 'tiny-q8'), { onnxFile: 'model_quantized.onnx' });
    const [v] = await onnxEmbedder({ modelDir: dir }).embed(['cat'], 'query');
    close(v!, expected([2], 'mean'));
  });

  it('refuses a missing folder, a file, and folders that are not models, naming what is missing', async () => {
    const missing = thrown(() => onnxEmbedder({ modelDir: join(root, 'nowhere') }));
    expect(missing.code).toBe('embedding_provider_unavailable');
    expect(missing.message).toContain(`the model folder ${join(root, 'nowhere')} does not exist`);

    const file = join(root, 'a-file.txt');
    await writeFile(file, 'hello');
    expect(thrown(() => onnxEmbedder({ modelDir: file })).message).toContain('is not a folder');

    const empty = await mkdtemp(join(root, 'empty-'));
    expect(thrown(() => onnxEmbedder({ modelDir: empty })).message).toContain('config.json is missing');

    const noOnnx = await writeTinyOnnxModel(join(root, 'no-onnx'), { onnxFile: 'weights.bin' });
    expect(thrown(() => onnxEmbedder({ modelDir: noOnnx })).message).toContain(
      'no onnx/model*.onnx was found',
    );
    expect(thrown(() => onnxEmbedder({ modelDir: noOnnx, dtype: 'fp16' })).message).toContain(
      'no onnx/model_fp16.onnx was found',
    );

    const badConfig = await writeTinyOnnxModel(join(root, 'bad-config'));
    await writeFile(join(badConfig, 'config.json'), '{"model_type": "bert"}');
    expect(thrown(() => onnxEmbedder({ modelDir: badConfig })).message).toContain('gives no hidden size');
  });

  it('reports a damaged ONNX file when the model loads, and a size that contradicts config.json', async () => {
    const damaged = await writeTinyOnnxModel(join(root, 'damaged'), {
      onnxBytes: Buffer.from('not a model'),
    });
    const err = (await onnxEmbedder({ modelDir: damaged })
      .embed(['cat'], 'document')
      .catch((e: unknown) => e)) as DomainError;
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('embedding_provider_unavailable');
    expect(err.message).toContain(`loading ${damaged} failed`);

    const lying = await writeTinyOnnxModel(join(root, 'lying'), { configHiddenSize: 8 });
    const err2 = (await onnxEmbedder({ modelDir: lying })
      .embed(['cat'], 'document')
      .catch((e: unknown) => e)) as DomainError;
    expect(err2.message).toContain('it produced 4-dimensional vectors, but config.json');
  });
});

const realModelDir = process.env.KBSTUDIO_TEST_ONNX_MODEL_DIR;
const realModelTitle = realModelDir
  ? `onnxEmbedder on the real model in ${realModelDir}`
  : 'onnxEmbedder on a real model (skipped: set KBSTUDIO_TEST_ONNX_MODEL_DIR to a local transformers.js model folder, e.g. all-MiniLM-L6-v2)';

describe.skipIf(!realModelDir)(realModelTitle, () => {
  it('embeds sentences so that related ones are closer than unrelated ones', async () => {
    const pooling = process.env.KBSTUDIO_TEST_ONNX_POOLING === 'cls' ? 'cls' : 'mean';
    const embedder = onnxEmbedder({ modelDir: realModelDir!, pooling });
    const [cat, kitten, tax] = await embedder.embed(
      [
        'The cat sleeps on the sofa.',
        'A kitten is napping on the couch.',
        'Quarterly tax filings are due in April.',
      ],
      'document',
    );
    expect(cat).toHaveLength(embedder.dimensions);
    expect(Math.hypot(...cat!)).toBeCloseTo(1, 4);
    expect(cosineSimilarity(cat!, kitten!)).toBeGreaterThan(cosineSimilarity(cat!, tax!));
  });
});
