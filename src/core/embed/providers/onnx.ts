import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { FeatureExtractionPipeline } from '@huggingface/transformers';
import { inBatches, yieldToEventLoop } from '../batching';
import type { EmbedKind, Embedder } from '../embedder';
import { EmbeddingModelUnavailable } from '../errors';

export type OnnxDtype = 'fp32' | 'q8' | 'fp16' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4';

/** transformers.js's file name suffix per dtype, in the order a folder's files are preferred. */
const DTYPE_SUFFIXES: ReadonlyArray<readonly [OnnxDtype, string]> = [
  ['fp32', ''],
  ['q8', '_quantized'],
  ['fp16', '_fp16'],
  ['int8', '_int8'],
  ['uint8', '_uint8'],
  ['q4', '_q4'],
  ['q4f16', '_q4f16'],
  ['bnb4', '_bnb4'],
];

/** Where architectures keep their hidden size, which is the size of a pooled sentence vector. */
const HIDDEN_SIZE_KEYS = ['hidden_size', 'd_model', 'dim', 'n_embd'];

export interface OnnxEmbedderOptions {
  /** A local model folder as exported for transformers.js: config.json, tokenizer.json, onnx/model*.onnx. */
  modelDir: string;
  /** The id a listing records; the folder's name by default. */
  model?: string;
  /** How token vectors become one sentence vector; see the model's card (MiniLM, BGE: mean; BGE: cls). */
  pooling?: 'mean' | 'cls';
  normalize?: boolean;
  /** Which of the folder's ONNX files to run; the best present (fp32, then q8, fp16, …) by default. */
  dtype?: OnnxDtype;
  /** Prepended to documents and queries, for models trained with prefixes (e5: 'passage: ', 'query: '). */
  documentPrefix?: string;
  queryPrefix?: string;
  /** Texts per inference call; padding makes a batch cost its longest text times its size. */
  batchSize?: number;
}

interface ModelFolder {
  dir: string;
  dimensions: number;
  dtype: OnnxDtype;
  /** 'onnx' for the usual layout, '' when the ONNX file sits beside config.json. */
  subfolder: string;
}

/**
 * A sentence-embedding model run locally by ONNX Runtime through transformers.js, from a folder on
 * disk only: remote loading is switched off, so a missing file is an error, never a Hub download. The
 * folder is checked and its dimensions read at once (cheaply); transformers.js and the model load on
 * the first `embed` call, so nothing heavy is imported unless the model is used.
 */
export function onnxEmbedder(options: OnnxEmbedderOptions): Embedder {
  const model = options.model ?? basename(resolve(options.modelDir));
  const folder = inspectModelFolder(model, options.modelDir, options.dtype);
  const { pooling = 'mean', normalize = true, batchSize = 16 } = options;
  const prefix: Record<EmbedKind, string> = {
    document: options.documentPrefix ?? '',
    query: options.queryPrefix ?? '',
  };
  let loading: Promise<FeatureExtractionPipeline> | undefined;
  const extractor = () => {
    loading ??= loadPipeline(model, folder).catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };

  return {
    model,
    dimensions: folder.dimensions,
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      const run = await extractor();
      const out: Float32Array[] = [];
      let first = true;
      for (const batch of inBatches(texts, batchSize)) {
        if (!first) await yieldToEventLoop();
        first = false;
        let output;
        try {
          output = await run(
            batch.map((t) => prefix[kind] + t),
            { pooling, normalize },
          );
        } catch (err) {
          throw new EmbeddingModelUnavailable(model, `inference failed: ${(err as Error).message}`);
        }
        const [rows, size] = output.dims;
        if (rows !== batch.length || size !== folder.dimensions) {
          throw new EmbeddingModelUnavailable(
            model,
            `it produced ${size}-dimensional vectors, but config.json in ${folder.dir} gives ${folder.dimensions}.`,
          );
        }
        const data = output.data as Float32Array;
        for (let i = 0; i < batch.length; i++) out.push(data.slice(i * size, (i + 1) * size));
      }
      return out;
    },
  };
}

/** Checks the folder holds a model transformers.js can load and reads its vector size from config.json. */
export function inspectModelFolder(model: string, modelDir: string, dtype?: OnnxDtype): ModelFolder {
  const dir = resolve(modelDir);
  const fail = (reason: string) => new EmbeddingModelUnavailable(model, reason);
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (!stat) throw fail(`the model folder ${dir} does not exist.`);
  if (!stat.isDirectory()) throw fail(`${dir} is not a folder; give the folder holding config.json.`);
  const expected =
    'a model folder holds config.json, tokenizer.json and onnx/model.onnx (a transformers.js export)';

  const configFile = join(dir, 'config.json');
  if (!existsSync(configFile))
    throw fail(`${dir} is not a model folder: config.json is missing (${expected}).`);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw fail(`${configFile} is not valid JSON: ${(err as Error).message}`);
  }
  const dimensions = HIDDEN_SIZE_KEYS.map((key) => config?.[key]).find(
    (v): v is number => Number.isInteger(v) && (v as number) > 0,
  );
  if (!dimensions) throw fail(`${configFile} gives no hidden size (${HIDDEN_SIZE_KEYS.join(', ')}).`);
  if (!existsSync(join(dir, 'tokenizer.json'))) {
    throw fail(`${dir} is not a model folder: tokenizer.json is missing (${expected}).`);
  }

  for (const subfolder of ['onnx', '']) {
    const candidates = DTYPE_SUFFIXES.filter(([d]) => dtype === undefined || d === dtype);
    const found = candidates.find(([, suffix]) => existsSync(join(dir, subfolder, `model${suffix}.onnx`)));
    if (found) return { dir, dimensions, dtype: found[0], subfolder };
  }
  const wanted = dtype ? `model${DTYPE_SUFFIXES.find(([d]) => d === dtype)![1]}.onnx` : 'model*.onnx';
  throw fail(`${dir} is not a model folder: no onnx/${wanted} was found (${expected}).`);
}

async function loadPipeline(model: string, folder: ModelFolder): Promise<FeatureExtractionPipeline> {
  let transformers: typeof import('@huggingface/transformers');
  try {
    transformers = await import('@huggingface/transformers');
  } catch (err) {
    throw new EmbeddingModelUnavailable(
      model,
      `the package @huggingface/transformers could not be loaded (${(err as Error).message}); run npm install.`,
    );
  }
  const { env, pipeline } = transformers;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  // The file cache would copy local files into node_modules, which may be read-only in a packaged app.
  env.useFSCache = false;
  env.useBrowserCache = false;
  try {
    // An absolute path is not a Hub id, so transformers.js reads it as it is; env.localModelPath
    // (global to the process) stays untouched and two folders can load at once.
    return await pipeline('feature-extraction', folder.dir, {
      local_files_only: true,
      dtype: folder.dtype,
      subfolder: folder.subfolder,
      device: 'cpu',
      session_options: { logSeverityLevel: 3 },
    });
  } catch (err) {
    throw new EmbeddingModelUnavailable(model, `loading ${folder.dir} failed: ${(err as Error).message}`);
  }
}
