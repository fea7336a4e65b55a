import { existsSync, mkdirSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FieldFilter } from '../../src/core/retrieve/filters';
import { SqliteSearchRepository } from '../../src/db/repositories/search';
import { openServices, type StudioServices } from '../../src/db/services';
import { CosineBatch } from '../../src/core/retrieve/cosineKernel';
import { VectorFile, vectorFileBytes } from '../../src/db/vectorFile';
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
  const generation = () =>
    services.db
      .prepare(`SELECT generation FROM knowledge_base_generations WHERE listing_id = ?`)
      .pluck()
      .get(listingId) as number;
  /** The listing's vectors file in `directory` (the only one written there). */
  const vectorsPath = () =>
    join(
      directory,
      readdirSync(directory).find((n) => n.endsWith('.vectors'))!,
    );
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
      expect(statSync(path).size).toBe(vectorFileBytes(count, DIMS));
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
      expect(statSync(path).size).toBe(vectorFileBytes(vectorCount(), DIMS));
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
