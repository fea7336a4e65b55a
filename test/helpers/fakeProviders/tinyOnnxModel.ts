import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A complete transformers.js model folder small enough to build in a test: a word-level tokenizer over
 * `TINY_VOCAB` and an ONNX graph that is a single Gather from an embedding table, so the token vector
 * of word id i is `tinyTokenVector(i)` and mean or CLS pooling can be worked out by hand. The files have
 * the layout of a Hugging Face ONNX export (config.json, tokenizer.json, tokenizer_config.json,
 * onnx/model.onnx), and ONNX Runtime runs the graph for real.
 */
export const TINY_VOCAB = ['[PAD]', '[UNK]', 'cat', 'dog', 'fish', 'bird'] as const;
export const TINY_DIMENSIONS = 4;

export function tinyTokenVector(id: number): number[] {
  return Array.from({ length: TINY_DIMENSIONS }, (_, j) => (id + 1) * (j === id % TINY_DIMENSIONS ? 1 : 0.1));
}

export interface TinyModelOptions {
  /** The hidden size config.json declares (to test a mismatch with the graph's 4). */
  configHiddenSize?: number;
  /** The ONNX file name inside onnx/. */
  onnxFile?: string;
  /** Bytes to write instead of the model (a damaged file). */
  onnxBytes?: Buffer;
}

export async function writeTinyOnnxModel(dir: string, options: TinyModelOptions = {}): Promise<string> {
  await mkdir(join(dir, 'onnx'), { recursive: true });
  await writeFile(
    join(dir, 'onnx', options.onnxFile ?? 'model.onnx'),
    options.onnxBytes ?? tinyGatherModel(),
  );
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({ model_type: 'bert', hidden_size: options.configHiddenSize ?? TINY_DIMENSIONS }),
  );
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  await writeFile(
    join(dir, 'tokenizer.json'),
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [special(0, '[PAD]'), special(1, '[UNK]')],
      normalizer: { type: 'Lowercase' },
      pre_tokenizer: { type: 'Whitespace' },
      post_processor: null,
      decoder: null,
      model: {
        type: 'WordLevel',
        vocab: Object.fromEntries(TINY_VOCAB.map((w, i) => [w, i])),
        unk_token: '[UNK]',
      },
    }),
  );
  await writeFile(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      model_max_length: 64,
    }),
  );
  return dir;
}

/** ModelProto { ir_version 8, opset 13, graph: last_hidden_state = Gather(embeddings, input_ids) }. */
function tinyGatherModel(): Buffer {
  const table = new Float32Array(TINY_VOCAB.flatMap((_, id) => tinyTokenVector(id)));
  const INT64 = 7;
  const FLOAT = 1;
  const initializer = message(
    5,
    varintField(1, TINY_VOCAB.length),
    varintField(1, TINY_DIMENSIONS),
    varintField(2, FLOAT),
    stringField(8, 'embeddings'),
    bytesField(9, Buffer.from(table.buffer)),
  );
  const node = message(
    1,
    stringField(1, 'embeddings'),
    stringField(1, 'input_ids'),
    stringField(2, 'last_hidden_state'),
    stringField(3, 'gather'),
    stringField(4, 'Gather'),
  );
  const graph = message(
    7,
    node,
    stringField(2, 'tiny'),
    initializer,
    valueInfo(11, 'input_ids', INT64, ['batch', 'sequence']),
    valueInfo(11, 'attention_mask', INT64, ['batch', 'sequence']),
    valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'sequence', TINY_DIMENSIONS]),
  );
  const opset = message(8, stringField(1, ''), varintField(2, 13));
  return Buffer.concat([varintField(1, 8), stringField(2, 'kb-studio-test'), graph, opset]);
}

// Protocol Buffers wire format, just what the ONNX messages above need.
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  do {
    let byte = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return Buffer.from(out);
}
const tag = (field: number, wire: number) => varint(field * 8 + wire);
const varintField = (field: number, n: number) => Buffer.concat([tag(field, 0), varint(n)]);
const bytesField = (field: number, bytes: Buffer) =>
  Buffer.concat([tag(field, 2), varint(bytes.length), bytes]);
const stringField = (field: number, s: string) => bytesField(field, Buffer.from(s, 'utf8'));
const message = (field: number, ...parts: Buffer[]) => bytesField(field, Buffer.concat(parts));

/** ValueInfoProto { name, type: TypeProto { tensor_type { elem_type, shape { dim* } } } }. */
function valueInfo(field: number, name: string, elemType: number, dims: Array<number | string>): Buffer {
  const shape = dims.map((d) => message(1, typeof d === 'number' ? varintField(1, d) : stringField(2, d)));
  return message(
    field,
    stringField(1, name),
    message(2, message(1, varintField(1, elemType), message(2, ...shape))),
  );
}
