import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { SourceStore } from '../../../src/core/ingest/sourceStore';
import { openServices, type StudioServices } from '../../../src/db/services';
import { FIXTURES, tempDir } from '../../helpers/studio';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('SourceStore', () => {
  it('keeps one copy per content hash and prunes the unreferenced ones', async () => {
    const store = new SourceStore(join(dir.path, 'sources'));
    const a = join(dir.path, 'a.md');
    const b = join(dir.path, 'b.md');
    writeFileSync(a, '# A\n\nalpha');
    writeFileSync(b, '# B\n\nbeta');
    const ha = sha256(readFileSync(a));
    const hb = sha256(readFileSync(b));
    await store.put(ha, a);
    await store.put(ha, a);
    await store.put(hb, b);
    expect(readFileSync(store.pathOf(ha), 'utf8')).toBe('# A\n\nalpha');
    expect(await store.has(hb)).toBe(true);

    expect(await store.prune(new Set([ha]))).toBe(1);
    expect(await store.has(ha)).toBe(true);
    expect(await store.has(hb)).toBe(false);
  });

  it('keeps a copy after its shard folder was removed by hand, and names a source that is gone', async () => {
    const store = new SourceStore(join(dir.path, 'sources'));
    const a = join(dir.path, 'a.md');
    writeFileSync(a, '# A\n\nalpha');
    const ha = sha256(readFileSync(a));
    await store.put(ha, a);
    rmSync(join(dir.path, 'sources'), { recursive: true });
    await store.put(ha, a);
    expect(readFileSync(store.pathOf(ha), 'utf8')).toBe('# A\n\nalpha');

    const gone = join(dir.path, 'gone.md');
    await expect(store.put('ab'.repeat(32), gone)).rejects.toThrow(/ENOENT.*gone\.md/);
    // Nothing half-written is left beside the copies.
    expect(readdirSync(join(dir.path, 'sources', 'ab'))).toEqual([]);
  });

  it('refuses a name that is not a content hash (no path tricks)', () => {
    const store = new SourceStore(join(dir.path, 'sources'));
    expect(() => store.pathOf('../../etc/passwd')).toThrow(/SHA-256/);
  });
});

describe('ingestion keeps sources', () => {
  let services: StudioServices;
  beforeEach(() => {
    services = openServices(join(dir.path, 'data'));
  });
  afterEach(() => services.close());

  it('stores each ingested file by its hash and drops it when its listing is deleted', async () => {
    const listingId = services.listings.create(
      { title: 'Sources', accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
    const file = join(FIXTURES, 'codeblock.md');
    await services.ingestion.run({
      listingId,
      inputs: [{ path: file }],
      atomic: false,
      limits: STUDIO_LIMITS,
    });
    const [doc] = services.knowledgeBase.documents(listingId);
    expect(doc).toBeDefined();
    expect(readFileSync(services.sources.pathOf(doc!.contentHash))).toEqual(readFileSync(file));

    services.listings.delete(listingId);
    expect(await services.pruneSources()).toBe(1);
    expect(
      readdirSync(join(dir.path, 'data', 'sources')).flatMap((s) =>
        readdirSync(join(dir.path, 'data', 'sources', s)),
      ),
    ).toEqual([]);
  });
});
