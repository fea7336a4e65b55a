import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FieldFilter } from '../../src/core/retrieve/filters';
import { SqliteSearchRepository } from '../../src/db/repositories/search';
import { openServices, type StudioServices } from '../../src/db/services';
import { CosineBatch } from '../../src/core/retrieve/cosineKernel';
import { codeBytes } from '../../src/core/retrieve/signCodes';
import { HEADER_BYTES, VectorFile, vectorFileBytes } from '../../src/db/vectorFile';
import { commitChunks } from '../helpers/commitChunks';
import { tempDir } from '../helpers/studio';
import { seededRng } from '../../bench/prng';

const MODEL = 'test/model:64';
const DIMS = 64;
const random = seededRng(7).next;
/** Random vectors, and now and then a zero one (stored as no vector: no file slot, no distance). */
const vector = (k: number) =>
  k % 97 === 13 ? new Float32Array(DIMS) : Float32Array.from({ length: DIMS }, () => random() * 2 - 1);

const commit = (services: StudioServices, listingId: string, source: string, count: number, first = 0) =>
  commitChunks(
    services,
    listingId,
    source,
    Array.from({ length: count }, (_, i) => ({
      text: `chunk ${first + i}`,
      tokenCount: 2,
      contentHash: `${source}-${i}`,
      metadata: { bucket: (first + i) % 10 },
      vector: vector(first + i),
    })),
    { id: MODEL, dimensions: DIMS },
  );

describe('vectors files: rescoring from a flat copy of the float blobs', () => {
  const dir = tempDir();
  const directory = join(dir.path, 'vectors');
  let services: StudioServices;
  let listingId: string;
  /** Without files: rescoring reads SQLite, the reference. */
  let plain: SqliteSearchRepository;
  const queries = Array.from({ length: 12 }, (_, k) => vector(k + 1));
  const listing = () => ({ listingId, model: MODEL, dimensions: DIMS });
  const generation = (id = listingId) =>
    services.db
      .prepare(`SELECT generation FROM knowledge_base_generations WHERE listing_id = ?`)
      .pluck()
      .get(id) as number;
  /** The vectors file in `at` (the only one written there). */
  const vectorsPathIn = (at: string) =>
    join(
      at,
      readdirSync(at).find((n) => n.endsWith('.vectors'))!,
    );
  /** The listing's vectors file in `directory`. */
  const vectorsPath = () => vectorsPathIn(directory);
  /** Chunks with a vector (a zero vector is stored as none). */
  const vectorCount = () =>
    services.db
      .prepare(`SELECT count(*) FROM embeddings e JOIN chunks c ON c.id = e.chunk_id WHERE c.listing_id = ?`)
      .pluck()
      .get(listingId) as number;
  const withFiles = (restMs = 0, at = directory) =>
    new SqliteSearchRepository(services.db, { exactBudget: 0, vectorFiles: { directory: at, restMs } });
  /** The same hits and distances, to the bit, for every query, at topK 20 and 100, with and without a filter. */
  const expectSameAnswers = (repo: SqliteSearchRepository) => {
    const filters: FieldFilter[][] = [[], [{ key: 'bucket', conditions: [{ op: 'eq', value: 3 }] }]];
    for (const q of queries) {
      for (const limit of [20, 100]) {
        for (const f of filters) {
          expect(repo.denseSearch(listingId, MODEL, q, f, limit)).toEqual(
            plain.denseSearch(listingId, MODEL, q, f, limit),
          );
        }
      }
    }
  };

  beforeAll(async () => {
    services = openServices(dir.path);
    const wallet = services.wallets.defaultWallet().address;
    listingId = services.listings.create({ title: 'Files', accessModel: 'one_time', price: 0 }, wallet).id;
    await commit(services, listingId, 'base.jsonl', 3_000);
    plain = new SqliteSearchRepository(services.db, { exactBudget: 0 });
  }, 60_000);

  afterAll(() => {
    services.close();
    dir.remove();
  });

  it('writes the file on warm-up; rescoring from it gives the hits and distances SQLite gives', async () => {
    const repo = withFiles(60_000);
    try {
      expect(await repo.warmUp()).toEqual([listingId]);
      const file = repo.vectorFiles!.held(listing(), generation());
      const count = vectorCount();
      expect(count).toBeGreaterThan(2_900);
      expect(file?.header).toMatchObject({ listingId, model: MODEL, dimensions: DIMS, count });
      const path = vectorsPath();
      expect(statSync(path).size).toBe(vectorFileBytes(count, DIMS, codeBytes(DIMS)));
      const read = vi.spyOn(VectorFile.prototype, 'distances');
      expectSameAnswers(repo);
      // Every rescoring was answered from the file, none fell back to SQLite.
      expect(read).toHaveBeenCalled();
      expect(read.mock.results.every((r) => r.value !== undefined)).toBe(true);
      read.mockRestore();
      const ids = Array.from({ length: 300 }, (_, k) => k * 10 + 1);
      expect(repo.denseScores(listingId, MODEL, queries[0]!, ids)).toEqual(
        plain.denseScores(listingId, MODEL, queries[0]!, ids),
      );
    } finally {
      repo.close();
    }
  });

  it('gives the same distances in JavaScript where the WebAssembly batch cannot run', () => {
    const path = vectorsPath();
    const noBatch = vi.spyOn(CosineBatch, 'create').mockReturnValue(undefined);
    const file = VectorFile.open(path, { ...listing(), generation: generation() })!;
    noBatch.mockRestore();
    try {
      const ids = Array.from({ length: 500 }, (_, k) => k * 7 + 3);
      const byId = (hits: { id: number; distance: number }[]) => [...hits].sort((a, b) => a.id - b.id);
      for (const q of queries.slice(0, 4)) {
        expect(byId(file.distances(q, ids)!)).toEqual(byId(plain.denseScores(listingId, MODEL, q, ids)));
      }
    } finally {
      file.close();
    }
  });

  it('opens the file an earlier process wrote, without writing it again', async () => {
    const path = vectorsPath();
    const written = statSync(path).mtimeMs;
    const repo = withFiles(60_000);
    try {
      await repo.warmUp();
      expect(repo.vectorFiles!.held(listing(), generation())).toBeDefined();
      expect(statSync(path).mtimeMs).toBe(written);
      expectSameAnswers(repo);
    } finally {
      repo.close();
    }
  });

  /** The listing's rows of vector_codes, in chunk id order. */
  const storedCodes = (id = listingId) =>
    services.db
      .prepare(`SELECT chunk_id, code FROM vector_codes WHERE listing_id = ? AND model = ? ORDER BY chunk_id`)
      .raw()
      .all(id, MODEL) as [number, Buffer][];

  it('holds the search codes after the ids; a warm-up after a restart reads them from there', async () => {
    const file = VectorFile.open(vectorsPath(), { ...listing(), generation: generation() })!;
    try {
      expect(file.codeBytes).toBe(codeBytes(DIMS));
      const codes = new Uint8Array(file.header.count * file.codeBytes);
      expect(await file.readCodes(codes)).toBe(true);
      const rows = storedCodes();
      expect(Array.from(file.ids)).toEqual(rows.map(([id]) => id));
      expect(Buffer.from(codes).equals(Buffer.concat(rows.map(([, code]) => code)))).toBe(true);
      // Not their size: nothing read.
      expect(await file.readCodes(new Uint8Array(codes.length - 1))).toBe(false);
    } finally {
      file.close();
    }
    const read = vi.spyOn(VectorFile.prototype, 'readCodes');
    const pages = vi.spyOn(services.db, 'prepare');
    const repo = withFiles(60_000);
    try {
      expect(await repo.warmUp()).toEqual([listingId]);
      expect(read).toHaveBeenCalledTimes(1);
      expect(await read.mock.results[0]!.value).toBe(true);
      // vector_codes was not read.
      expect(pages.mock.calls.filter(([sql]) => /FROM vector_codes/.test(sql))).toEqual([]);
      expect(repo.densePlan(listingId, MODEL)).toBe('binary');
      expectSameAnswers(repo);
    } finally {
      read.mockRestore();
      pages.mockRestore();
      repo.close();
    }
  });

  it('reads the codes from vector_codes when the file at its path is another one, or holds none', async () => {
    const path = vectorsPath();
    const file = VectorFile.open(path, { ...listing(), generation: generation() })!;
    const original = readFileSync(path);
    try {
      // The same bytes under the same name, but another file (as a new write renamed over it).
      copyFileSync(path, `${path}.copy`);
      renameSync(`${path}.copy`, path);
      expect(await file.readCodes(new Uint8Array(file.header.count * file.codeBytes))).toBe(false);
    } finally {
      file.close();
    }
    // A file of this format without codes: its header says 0 code bytes, and it ends after the ids.
    const header = JSON.parse(original.subarray(0, HEADER_BYTES).toString('utf8')) as { count: number };
    const head = Buffer.alloc(HEADER_BYTES, ' ');
    Buffer.from(JSON.stringify({ ...header, codeBytes: 0 })).copy(head);
    const idsEnd = HEADER_BYTES + header.count * (DIMS * 4 + 8);
    writeFileSync(path, Buffer.concat([head, original.subarray(HEADER_BYTES, idsEnd)]));
    const read = vi.spyOn(VectorFile.prototype, 'readCodes');
    const repo = withFiles(60_000);
    try {
      expect(await repo.warmUp()).toEqual([listingId]);
      expect(repo.vectorFiles!.held(listing(), generation())?.codeBytes).toBe(0);
      expect(read).not.toHaveBeenCalled();
      expect(repo.densePlan(listingId, MODEL)).toBe('binary');
      expectSameAnswers(repo);
    } finally {
      read.mockRestore();
      repo.close();
    }
    writeFileSync(path, original);
  });

  it('writes no codes into the file when a vector has none (committed before codes existed)', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const older = services.listings.create({ title: 'Older', accessModel: 'one_time', price: 0 }, wallet).id;
    await commit(services, older, 'older.jsonl', 200);
    const [first] = storedCodes(older)[0]!;
    services.db.prepare(`DELETE FROM vector_codes WHERE chunk_id = ?`).run(first);
    const repo = withFiles(0, join(dir.path, 'older'));
    try {
      const at = { listingId: older, model: MODEL, dimensions: DIMS };
      expect(await repo.vectorFiles!.ensure(at)).toBe(true);
      const file = repo.vectorFiles!.find(at, generation(older))!;
      expect(file.codeBytes).toBe(0);
      expect(file.header.count).toBeGreaterThan(190);
      expect(statSync(vectorsPathIn(join(dir.path, 'older'))).size).toBe(
        vectorFileBytes(file.header.count, DIMS, 0),
      );
      // Without codes for every vector, that listing is searched exactly, as before.
      expect(repo.densePlan(older, MODEL)).toBe('exact');
    } finally {
      repo.close();
      services.listings.delete(older);
    }
  });

  it('sets the file aside when the knowledge base changes, answers from SQLite, and writes it again once rested', async () => {
    const repo = withFiles(0);
    try {
      await repo.warmUp();
      const before = generation();
      await commit(services, listingId, 'more.jsonl', 500, 3_000);
      expect(generation()).not.toBe(before);
      const read = vi.spyOn(VectorFile.prototype, 'distances');
      // The first search sees the new generation: the old file is not used (it lacks the new chunks).
      expectSameAnswers(repo);
      expect(read).not.toHaveBeenCalled();
      read.mockRestore();
      // Rested (restMs 0), the next searches start writing it; meanwhile they still answer from SQLite.
      expect(await repo.vectorFiles!.ensure(listing())).toBe(true);
      expect(repo.vectorFiles!.held(listing(), generation())?.header.count).toBe(vectorCount());
      expectSameAnswers(repo);
    } finally {
      repo.close();
    }
  });

  it('waits for the knowledge base to rest before a search starts writing the file', async () => {
    const repo = withFiles(60_000, join(dir.path, 'rested'));
    try {
      for (let k = 0; k < 3; k++) repo.denseSearch(listingId, MODEL, queries[k]!, [], 20);
      expect(existsSync(join(dir.path, 'rested'))).toBe(false);
    } finally {
      repo.close();
    }
    const eager = withFiles(0, join(dir.path, 'eager'));
    try {
      for (let k = 0; k < 3; k++) eager.denseSearch(listingId, MODEL, queries[k]!, [], 20);
      // The second search found the generation rested and started the write.
      await vi.waitFor(() => expect(eager.vectorFiles!.held(listing(), generation())).toBeDefined(), {
        timeout: 20_000,
        interval: 50,
      });
      eager.denseSearch(listingId, MODEL, queries[0]!, [], 20);
    } finally {
      eager.close();
    }
  });

  it('refuses a file that is not whole or not this listing’s, and writes it again', async () => {
    const path = vectorsPath();
    const size = statSync(path).size;
    const expected = { ...listing(), generation: generation() };
    const whole = VectorFile.open(path, expected);
    expect(whole?.header.count).toBe(vectorCount());
    whole?.close();
    expect(VectorFile.open(path, { ...expected, model: 'other' })).toBeUndefined();
    expect(VectorFile.open(path, { ...expected, dimensions: 32 })).toBeUndefined();
    expect(VectorFile.open(path, { ...expected, listingId: 'lst_other' })).toBeUndefined();
    expect(VectorFile.open(path, { ...expected, generation: expected.generation + 1 })).toBeUndefined();
    truncateSync(path, size - 4);
    expect(VectorFile.open(path, expected)).toBeUndefined();
    writeFileSync(path, 'not a vectors file');
    expect(VectorFile.open(path, expected)).toBeUndefined();
    const repo = withFiles(60_000);
    try {
      await repo.warmUp();
      expect(statSync(path).size).toBe(size);
      expectSameAnswers(repo);
    } finally {
      repo.close();
    }
  });

  it('a file cut short under a search: that search answers from SQLite, and the file is written again', async () => {
    const repo = withFiles(60_000);
    try {
      await repo.warmUp();
      const path = vectorsPath();
      truncateSync(path, 4096 + 10 * DIMS * 4);
      expectSameAnswers(repo);
      // Not used again: written again at once (without waiting the 60 s rest), then used.
      await vi.waitFor(
        () => expect(repo.vectorFiles!.held(listing(), generation())?.header.count).toBe(vectorCount()),
        { timeout: 20_000, interval: 50 },
      );
      expect(statSync(path).size).toBe(vectorFileBytes(vectorCount(), DIMS, codeBytes(DIMS)));
      expectSameAnswers(repo);
    } finally {
      repo.close();
    }
  });

  it('keeps answering from SQLite when the file cannot be written, and says why', async () => {
    const blocked = join(dir.path, 'a-file');
    writeFileSync(blocked, '');
    const repo = withFiles(0, join(blocked, 'vectors'));
    try {
      await repo.warmUp();
      expect(repo.vectorFiles!.held(listing(), generation())).toBeUndefined();
      expect(repo.vectorFiles!.lastError).toMatch(/ENOTDIR|EEXIST/);
      expectSameAnswers(repo);
    } finally {
      repo.close();
    }
  });

  it('writes no file that would leave its disk short of space, and says so', async () => {
    const repo = new SqliteSearchRepository(services.db, {
      exactBudget: 0,
      vectorFiles: { directory: join(dir.path, 'full'), restMs: 0, spareBytes: 2 ** 60 },
    });
    try {
      await repo.warmUp();
      expect(repo.vectorFiles!.held(listing(), generation())).toBeUndefined();
      expect(repo.vectorFiles!.lastError).toMatch(/^not written: \d+ MB would leave under \d+ MB free/);
      expect(readdirSync(join(dir.path, 'full'))).toEqual([]);
      expectSameAnswers(repo);
    } finally {
      repo.close();
    }
  });

  it('deletes, on warm-up, the files of deleted listings and the partial files of stopped writers', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const gone = services.listings.create({ title: 'Gone', accessModel: 'one_time', price: 0 }, wallet).id;
    mkdirSync(directory, { recursive: true });
    const name = basename(vectorsPath());
    const files = {
      gone: `${gone}.0123456789abcdef.vectors`,
      stopped: `${name}.999999999-1.tmp`,
      running: `${name}.${process.pid}-7.tmp`,
      other: 'notes.txt',
    };
    for (const f of Object.values(files)) writeFileSync(join(directory, f), 'x');
    services.listings.delete(gone);
    const repo = withFiles(60_000);
    try {
      await repo.warmUp();
      const left = readdirSync(directory);
      expect(left).toContain(name);
      expect(left).toContain(files.running);
      expect(left).toContain(files.other);
      expect(left).not.toContain(files.gone);
      expect(left).not.toContain(files.stopped);
    } finally {
      repo.close();
    }
  });
});
