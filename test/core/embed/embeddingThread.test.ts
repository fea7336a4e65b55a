import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EmbeddingThread } from '../../../src/core/embed/embeddingThread';
import {
  EMBEDDING_THREAD_RESTARTS,
  embeddingThreadOf,
  GloveSentenceModel,
  loadGloveSentenceModel,
  offlineGloveEmbedder,
} from '../../../src/core/embed/offlineGlove';
import { expectDocumentsEmbeddedHere } from '../../helpers/embedHere';
import { syntheticJson, syntheticModel, writeSyntheticPackage } from './syntheticGlove';

const TEXTS = [
  'The cat sat on the mat.',
  'A well-known stock market crash',
  '',
  'Nothing here is in the vocabulary',
  'Zurich café, do not say "hi"',
  'kitten rug '.repeat(5_000),
];

const bits = (v: Float32Array) => Array.from(new Uint32Array(v.buffer, v.byteOffset, v.length)).join();

const threads: EmbeddingThread[] = [];
function startThread(model: GloveSentenceModel): EmbeddingThread {
  const thread = new EmbeddingThread(model.share()!, model.dimensions);
  threads.push(thread);
  return thread;
}
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(threads.map((t) => t.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('EmbeddingThread', () => {
  it('embeds on another thread over the shared table: the same vectors, bit for bit, in order', async () => {
    const model = syntheticModel();
    const thread = startThread(model);
    // Starting loads the worker (through tsx from the sources): nothing is taken meanwhile.
    expect(thread.usable).toBe(false);
    expect(thread.embed(['the cat'])).toBeUndefined();
    await vi.waitFor(() => expect(thread.usable).toBe(true), { timeout: 20_000 });

    const vectors = await thread.embed(TEXTS)!;
    expect(vectors.map(bits)).toEqual(TEXTS.map((t) => bits(model.embed(t))));
    // Each its own array, not a view into the batch's buffer (which a copy would carry whole).
    for (const v of vectors) expect(v.buffer.byteLength).toBe(400);
    // Batches in flight at once are answered each with its own vectors.
    const batches = await Promise.all([thread.embed(['the cat']), thread.embed(['stock market'])]);
    expect(batches.map((b) => bits(b![0]!))).toEqual([
      bits(model.embed('the cat')),
      bits(model.embed('stock market')),
    ]);
  });

  it('rejects what it was given when it stops, and takes nothing more', async () => {
    const model = syntheticModel();
    const thread = startThread(model);
    await vi.waitFor(() => expect(thread.usable).toBe(true), { timeout: 20_000 });
    const pending = thread.embed(['kitten '.repeat(200_000)])!;
    await thread.close();
    await expect(pending).rejects.toThrow(/embedding thread stopped/);
    expect(thread.usable).toBe(false);
    expect(thread.embed(['the cat'])).toBeUndefined();
  });
});

/** Options of an offline embedder over a synthetic package of its own (a model of its own). */
function syntheticPackage() {
  const root = mkdtempSync(join(tmpdir(), 'kbs-embedding-thread-'));
  dirs.push(root);
  return {
    package: writeSyntheticPackage(root, syntheticJson()),
    cacheFile: join(root, 'cache.f32'),
    log: () => undefined,
  };
}

describe('the offline embedder with its embedding thread', () => {
  it('embeds documents on the thread once it has started, with the vectors queries get here', async () => {
    const options = syntheticPackage();
    const embedder = offlineGloveEmbedder(options);
    const here = vi.spyOn(GloveSentenceModel.prototype, 'embed');
    try {
      // The first documents start the thread and are embedded here meanwhile.
      const first = await embedder.embed(TEXTS, 'document');
      expect(here).toHaveBeenCalledTimes(TEXTS.length);
      const thread = embeddingThreadOf(await loadGloveSentenceModel(options))!;
      threads.push(thread);
      await vi.waitFor(() => expect(thread.usable).toBe(true), { timeout: 20_000 });

      here.mockClear();
      const documents = await embedder.embed(TEXTS, 'document');
      expect(here).not.toHaveBeenCalled();
      const queries = await embedder.embed(TEXTS, 'query');
      expect(here).toHaveBeenCalledTimes(TEXTS.length);
      expect(documents.map(bits)).toEqual(queries.map(bits));
      expect(first.map(bits)).toEqual(queries.map(bits));

      // A thread that stops mid-way: its texts are embedded here instead, and the next ones too.
      const stopping = embedder.embed(['kitten '.repeat(200_000), ...TEXTS], 'document');
      await thread.close();
      const after = await stopping;
      expect(after.slice(1).map(bits)).toEqual(queries.map(bits));
      here.mockClear();
      await embedder.embed(TEXTS, 'document');
      expect(here).toHaveBeenCalledTimes(TEXTS.length);
    } finally {
      here.mockRestore();
    }
  });

  it('starts the thread again when it stops on its own, a few times at most', async () => {
    const lines: string[] = [];
    const options = { ...syntheticPackage(), log: (line: string) => lines.push(line) };
    const embedder = offlineGloveEmbedder(options);
    const model = await loadGloveSentenceModel(options);
    const expected = TEXTS.map((t) => bits(model.embed(t)));
    const here = vi.spyOn(GloveSentenceModel.prototype, 'embed');
    try {
      let thread = embeddingThreadOf(model)!;
      for (let crash = 1; crash <= EMBEDDING_THREAD_RESTARTS + 1; crash++) {
        threads.push(thread);
        await vi.waitFor(() => expect(thread.usable).toBe(true), { timeout: 20_000 });
        here.mockClear();
        expect((await embedder.embed(TEXTS, 'document')).map(bits)).toEqual(expected);
        expect(here).not.toHaveBeenCalled();
        // A crash, as an out-of-memory worker's: the thread ends without close().
        const { worker } = thread as unknown as { worker: Worker };
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        await worker.terminate();
        await exited;
        expect(thread.stoppedOnItsOwn).toBe('exit code 1');
        // The batch that finds it stopped starts the next thread, and is embedded here meanwhile.
        here.mockClear();
        expect((await embedder.embed(TEXTS, 'document')).map(bits)).toEqual(expected);
        expect(here).toHaveBeenCalledTimes(TEXTS.length);
        const next = embeddingThreadOf(model)!;
        if (crash <= EMBEDDING_THREAD_RESTARTS) {
          expect(next).not.toBe(thread);
          expect(lines.at(-1)).toBe(
            `The offline model's embedding thread stopped (exit code 1); starting it again (${crash} of ${EMBEDDING_THREAD_RESTARTS}).`,
          );
          thread = next;
        } else {
          // Past the restarts, documents stay on the calling thread.
          expect(next).toBe(thread);
          expect(next.usable).toBe(false);
        }
      }
      expect(lines.filter((l) => l.includes('embedding thread'))).toHaveLength(EMBEDDING_THREAD_RESTARTS);
    } finally {
      here.mockRestore();
    }
  });

  it('does not start a thread closed on purpose again', async () => {
    const options = syntheticPackage();
    const model = await loadGloveSentenceModel(options);
    const thread = embeddingThreadOf(model)!;
    threads.push(thread);
    await vi.waitFor(() => expect(thread.usable).toBe(true), { timeout: 20_000 });
    await thread.close();
    expect(thread.stoppedOnItsOwn).toBeUndefined();
    expect(embeddingThreadOf(model)).toBe(thread);
  });

  it('keeps documents on the calling thread when told to', async () => {
    const embedder = offlineGloveEmbedder({ ...syntheticPackage(), thread: false });
    await expectDocumentsEmbeddedHere(embedder, TEXTS);
  });
});
