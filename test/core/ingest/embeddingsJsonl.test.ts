import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readEmbeddingsJsonl,
  readLines,
  type EmbeddingRecord,
} from '../../../src/core/ingest/embeddingsJsonl';
import { InvalidDocument, UnsupportedEmbeddingModel } from '../../../src/core/ingest/errors';
import { seededRandom } from '../../helpers/seeded';

const MODEL = 'text-embedding-3-small';
const DIMS = 1536;

let work: string;
let counter = 0;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'kbs-jsonl-test-'));
});

afterAll(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

const vector = (dims: number, seed = 1): number[] =>
  Array.from({ length: dims }, (_, i) => Math.sin(seed * 1000 + i) / 10);

async function writeJsonl(content: string, name = 'embeddings.jsonl'): Promise<string> {
  const dir = path.join(work, String(counter++));
  await fs.mkdir(dir);
  const file = path.join(dir, name);
  await fs.writeFile(file, content);
  return file;
}

async function readAll(file: string, model = MODEL, source?: string): Promise<EmbeddingRecord[]> {
  const records: EmbeddingRecord[] = [];
  for await (const record of readEmbeddingsJsonl(file, model, source)) records.push(record);
  return records;
}

async function failure(file: string, model = MODEL): Promise<Error> {
  const err = await readAll(file, model).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof Error)) throw new Error('expected the file to be refused');
  return err;
}

const line = (value: unknown): string => JSON.stringify(value);

describe('readEmbeddingsJsonl', () => {
  it('reads text, embedding and metadata line by line, skipping blank lines but counting them', async () => {
    const first = vector(DIMS, 1);
    const file = await writeJsonl(
      [
        line({ text: 'Grüße aus Köln 👋', embedding: first, metadata: { page: 3, tags: ['a'] } }),
        '',
        '   ',
        line({ text: '日本語のテキスト', embedding: vector(DIMS, 2) }),
        line({ text: 'null metadata', embedding: vector(DIMS, 3), metadata: null }),
      ].join('\r\n') + '\n',
    );
    const records = await readAll(file);
    expect(records.map((r) => [r.line, r.text, r.metadata])).toEqual([
      [1, 'Grüße aus Köln 👋', { page: 3, tags: ['a'] }],
      [4, '日本語のテキスト', {}],
      [5, 'null metadata', {}],
    ]);
    expect(records[0]!.embedding).toBeInstanceOf(Float32Array);
    expect(records[0]!.embedding).toHaveLength(DIMS);
    expect(records[0]!.embedding[7]).toBeCloseTo(first[7]!, 6);
  });

  it('keeps a metadata key the store sets on every chunk under a free name, never dropping it', async () => {
    const file = await writeJsonl(
      [
        line({ text: 'a', embedding: vector(DIMS), metadata: { page: 3, source: 'orig.pdf' } }),
        '{"text":"b","embedding":' +
          line(vector(DIMS)) +
          ',"metadata":{"line":9,"source":"x.pdf","source_2":"mine","__proto__":"p","chunkIndex":4,"format":"pdf","documentId":"d"}}',
      ].join('\n'),
    );
    const [first, second] = await readAll(file);
    expect(first!.metadata).toEqual({ page: 3, source_2: 'orig.pdf' });
    expect(Object.entries(second!.metadata)).toEqual([
      ['line_2', 9],
      ['source_3', 'x.pdf'],
      ['source_2', 'mine'],
      ['__proto__', 'p'],
      ['chunkIndex_2', 4],
      ['format_2', 'pdf'],
      ['documentId_2', 'd'],
    ]);
    expect(Object.getPrototypeOf(second!.metadata)).toBe(Object.prototype);
  });

  it('accepts a byte-order mark and the dimensions of each supported model', async () => {
    const file = await writeJsonl('\uFEFF' + line({ text: 'large', embedding: vector(3072) }));
    const [record] = await readAll(file, 'text-embedding-3-large');
    expect(record!.embedding).toHaveLength(3072);
    const cohere = await writeJsonl(line({ text: 'cohere', embedding: vector(1024) }));
    expect((await readAll(cohere, 'embed-multilingual-v3.0'))[0]!.text).toBe('cohere');
  });

  it('refuses an unknown model at once, listing the supported ones', () => {
    let thrown: unknown;
    try {
      readEmbeddingsJsonl('/does/not/matter.jsonl', 'my-own-model');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnsupportedEmbeddingModel);
    expect((thrown as UnsupportedEmbeddingModel).code).toBe('unsupported_embedding_model');
    expect((thrown as Error).message).toContain("'my-own-model' is not supported");
    expect((thrown as Error).message).toContain('text-embedding-3-large');
  });

  it('names the file and the line when an embedding has the wrong number of dimensions', async () => {
    const file = await writeJsonl(
      [
        line({ text: 'one', embedding: vector(DIMS) }),
        '',
        line({ text: 'three', embedding: vector(DIMS - 1) }),
      ].join('\n'),
    );
    const err = await failure(file);
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toBe(
      'embeddings.jsonl: line 3: embedding has 1535 dimensions; text-embedding-3-small needs 1536.',
    );
  });

  it.each([
    ['{"text": "a", "embedding": [1, 2', 'line 1: not valid JSON'],
    [
      line(['text', 'embedding']),
      'line 1: expected a JSON object with "text" and "embedding", got an array.',
    ],
    [line({ embedding: vector(DIMS) }), 'line 1: "text" is missing.'],
    [line({ text: 42, embedding: vector(DIMS) }), 'line 1: "text" must be a string, got number 42.'],
    [line({ text: '  ', embedding: vector(DIMS) }), 'line 1: "text" is empty.'],
    [line({ text: 'a' }), 'line 1: "embedding" is missing.'],
    [
      line({ text: 'a', embedding: '0.1,0.2' }),
      'line 1: "embedding" must be an array of numbers, got "0.1,0.2".',
    ],
    [
      line({ text: 'a', embedding: vector(DIMS).map((v, i) => (i === 12 ? '0.5' : v)) }),
      'line 1: embedding[12] is not a number (got "0.5").',
    ],
    [
      line({ text: 'a', embedding: vector(DIMS).map((v, i) => (i === 3 ? null : v)) }),
      'line 1: embedding[3] is not a number (got null).',
    ],
    [
      `{"text":"a","embedding":[${vector(DIMS)
        .map((v, i) => (i === 5 ? '1e39' : v))
        .join(',')}]}`,
      'line 1: embedding[5] (1e+39) is outside the 32-bit float range.',
    ],
    [line({ text: 'a', embedding: new Array(DIMS).fill(0) }), 'line 1: embedding is all zeros'],
    [
      line({ text: 'a', embedding: vector(DIMS), metadata: ['x'] }),
      'line 1: "metadata" must be an object, got an array.',
    ],
    [
      line({ text: 'a', embedding: vector(DIMS), metadata: 'x' }),
      'line 1: "metadata" must be an object, got "x".',
    ],
  ])('explains what is wrong with a bad line (%#)', async (content, expected) => {
    const err = await failure(await writeJsonl(content));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain(`embeddings.jsonl: ${expected}`);
  });

  it('yields the good lines before the bad one, in order', async () => {
    const file = await writeJsonl(
      [
        line({ text: 'ok 1', embedding: vector(DIMS) }),
        line({ text: 'ok 2', embedding: vector(DIMS) }),
        '{oops',
      ].join('\n'),
    );
    const seen: string[] = [];
    await expect(async () => {
      for await (const record of readEmbeddingsJsonl(file, MODEL, 'kb/vectors.jsonl')) seen.push(record.text);
    }).rejects.toThrow(/^kb\/vectors\.jsonl: line 3: not valid JSON/);
    expect(seen).toEqual(['ok 1', 'ok 2']);
  });

  it('refuses an over-long line without buffering it, naming its line number', async () => {
    const file = await writeJsonl(
      line({ text: 'fine', embedding: vector(DIMS) }) +
        '\n' +
        '{"text":"' +
        'x'.repeat(3 * 1024 * 1024) +
        '"}\n',
    );
    const err = await failure(file);
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain('embeddings.jsonl: line 2: the line is longer than 1 MB');
  });

  it('refuses a file without any record', async () => {
    const err = await failure(await writeJsonl('\n\n  \n'));
    expect(err).toBeInstanceOf(InvalidDocument);
    expect(err.message).toContain('embeddings.jsonl: the file has no lines');
  });

  it('streams thousands of lines', async () => {
    const row = line({ text: 'chunk', embedding: vector(DIMS) });
    const file = await writeJsonl(Array.from({ length: 2000 }, () => row).join('\n'));
    let count = 0;
    let lastLine = 0;
    for await (const record of readEmbeddingsJsonl(file, MODEL)) {
      count++;
      lastLine = record.line;
    }
    expect(count).toBe(2000);
    expect(lastLine).toBe(2000);
  });
});

describe('readLines', () => {
  const MB = 1024 * 1024;
  const neverTooLong = () => new Error('too long');

  async function ours(file: string, maxBytes = 8 * MB): Promise<string[]> {
    const lines: string[] = [];
    for await (const l of readLines(file, maxBytes, neverTooLong)) lines.push(l);
    return lines;
  }

  /** What node:readline makes of the file, as the reader used to (crlfDelay: Infinity). */
  async function readlines(file: string): Promise<string[]> {
    const lines: string[] = [];
    const rl = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    for await (const l of rl) lines.push(l);
    return lines;
  }

  it('splits lines as readline does: \\n, \\r\\n and a lone \\r, blank lines and a last line without an end', async () => {
    for (const content of [
      'a\nb\r\nc\rd\n\n\r\n\re',
      'one\r',
      'one\r\r\ntwo\r\n',
      '\n\n',
      '',
      '\uFEFF{"x":1}\n',
      'é€😀\r\n😀',
    ]) {
      const file = await writeJsonl(content);
      expect(await ours(file), JSON.stringify(content)).toEqual(await readlines(file));
    }
  });

  it('keeps characters and line ends whole across its 1 MB reads (seeded random files of 2.5 MB)', async () => {
    const alphabet = ['a', 'b', ' ', '\n', '\r', '\r\n', 'é', '€', '😀', '{"t":"x"}'];
    for (let seed = 1; seed <= 3; seed++) {
      const { next } = seededRandom(seed);
      const parts: string[] = [];
      let bytes = 0;
      while (bytes < 2.5 * MB) {
        // Long runs of one character, so boundaries fall inside multi-byte characters and line ends.
        const piece = alphabet[Math.floor(next() * alphabet.length)]!.repeat(1 + Math.floor(next() * 4000));
        parts.push(piece);
        bytes += Buffer.byteLength(piece);
      }
      const file = await writeJsonl(parts.join(''));
      const expected = await readlines(file);
      expect(expected.length).toBeGreaterThan(100);
      expect(await ours(file)).toEqual(expected);
    }
    // A 4-byte character across the first read boundary, a \r\n across the second.
    const file = await writeJsonl('a'.repeat(MB - 2) + '😀\n' + 'b'.repeat(MB - 4 + 2 - 1) + '\r\nc');
    expect(await ours(file)).toEqual(await readlines(file));
  });

  it('fails on the line past the limit, counting lines as it yields them', async () => {
    const file = await writeJsonl('short\r' + 'x'.repeat(300) + '\nok\n');
    const seen: string[] = [];
    await expect(async () => {
      for await (const l of readLines(file, 200, (n) => new Error(`line ${n} too long`))) seen.push(l);
    }).rejects.toThrow('line 1 too long');
    expect(seen).toEqual([]);
    const later = await writeJsonl('a\nb\n' + 'y'.repeat(2 * MB) + '\n');
    await expect(async () => {
      for await (const l of readLines(later, MB, (n) => new Error(`line ${n} too long`))) seen.push(l);
    }).rejects.toThrow('line 3 too long');
    expect(seen).toEqual(['a', 'b']);
  });
});
