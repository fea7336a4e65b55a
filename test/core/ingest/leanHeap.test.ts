import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { openServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

// The setting is V8's, for the whole process: what is checked here is when it is set and lifted. Its
// effect on memory is measured by `npm run bench -- --only ingest.upload` (docs/performance.md).
const setFlags = vi.hoisted(() => vi.fn());
vi.mock('node:v8', async (original) => ({
  ...(await original<typeof import('node:v8')>()),
  setFlagsFromString: setFlags,
}));
const { capHeapGrowth } = await import('../../../src/core/ingest/leanHeap');

afterEach(() => setFlags.mockClear());

describe('capHeapGrowth', () => {
  it('caps the heap growth until released, and a second release changes nothing', () => {
    const release = capHeapGrowth();
    expect(setFlags.mock.calls).toEqual([['--heap-growing-percent=50']]);
    release();
    release();
    expect(setFlags.mock.calls).toEqual([['--heap-growing-percent=50'], ['--heap-growing-percent=0']]);
  });

  it('keeps the cap until the last of overlapping holders releases it', () => {
    const first = capHeapGrowth();
    const second = capHeapGrowth();
    first();
    first();
    expect(setFlags.mock.calls).toEqual([['--heap-growing-percent=50']]);
    second();
    expect(setFlags.mock.calls).toEqual([['--heap-growing-percent=50'], ['--heap-growing-percent=0']]);
  });
});

describe('ingestion', () => {
  it('caps the heap growth for an ingestion with pre-built embeddings, not for one without, and lifts it on failure', async () => {
    const dir = tempDir();
    const services = openServices(join(dir.path, 'data'));
    try {
      const wallet = services.wallets.defaultWallet().address;
      const listingId = services.listings.create(
        { title: 'KB', accessModel: 'one_time', price: 0 },
        wallet,
      ).id;
      const notes = join(dir.path, 'notes.md');
      writeFileSync(notes, '# Puffins\n\nPuffins nest in burrows on sea cliffs.\n');
      const ingest = (path: string) =>
        services.ingestion.run({ listingId, inputs: [{ path }], atomic: true, limits: STUDIO_LIMITS });
      await ingest(notes);
      expect(setFlags).not.toHaveBeenCalled();

      const lines = join(dir.path, 'lines.jsonl');
      const embedding = Array.from({ length: 100 }, (_, i) => Math.sin(i + 1));
      writeFileSync(lines, JSON.stringify({ text: 'gannets dive for fish', embedding }) + '\n');
      const result = await ingest(lines);
      expect(result.documents).toMatchObject([{ source: 'lines.jsonl', status: 'ingested', chunks: 1 }]);
      expect(setFlags.mock.calls).toEqual([['--heap-growing-percent=50'], ['--heap-growing-percent=0']]);

      setFlags.mockClear();
      const bad = join(dir.path, 'bad.jsonl');
      writeFileSync(bad, '{"text": "skuas"\n');
      await expect(ingest(bad)).rejects.toThrow(/line 1/);
      expect(setFlags.mock.calls).toEqual([['--heap-growing-percent=50'], ['--heap-growing-percent=0']]);
    } finally {
      services.close();
      dir.remove();
    }
  });
});
