import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { SourceStore } from '../../../src/core/ingest/sourceStore';
import { openServices, type StudioServices } from '../../../src/db/services';
import { FIXTURES, tempDir } from '../../helpers/studio';
import { writeZip } from '../../helpers/zip';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A store in the test's folder, and a file `a.md` beside it with its hash. */
function storeWithFile() {
  const store = new SourceStore(join(dir.path, 'sources'));
  const a = join(dir.path, 'a.md');
  writeFileSync(a, '# A\n\nalpha');
  return { store, a, ha: sha256(readFileSync(a)) };
}

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
    expect(store.has(hb)).toBe(true);

    expect(await store.prune(new Set([ha]))).toBe(1);
    expect(store.has(ha)).toBe(true);
    expect(store.has(hb)).toBe(false);
  });

  it('keeps a copy after its shard folder was removed by hand, and names a source that is gone', async () => {
    const { store, a, ha } = storeWithFile();
    await store.put(ha, a);
    rmSync(join(dir.path, 'sources'), { recursive: true });
    await store.put(ha, a);
    expect(readFileSync(store.pathOf(ha), 'utf8')).toBe('# A\n\nalpha');

    const gone = join(dir.path, 'gone.md');
    await expect(store.put('ab'.repeat(32), gone)).rejects.toThrow(/ENOENT.*gone\.md/);
    // Nothing half-written is left beside the copies.
    expect(readdirSync(join(dir.path, 'sources', 'ab'))).toEqual([]);
  });

  it('keeps bytes of its own: the original edited in place or removed afterwards leaves the copy as it was', async () => {
    // A copy, or a copy-on-write clone where the file system makes one (APFS, btrfs, XFS): never a link
    // to the creator's file, whose later edits would change what the stored hash names.
    const { store, a, ha } = storeWithFile();
    await store.put(ha, a);
    const kept = store.pathOf(ha);
    expect(statSync(kept).ino).not.toBe(statSync(a).ino);
    writeFileSync(a, '# A, edited in place');
    expect(readFileSync(kept, 'utf8')).toBe('# A\n\nalpha');
    rmSync(a);
    expect(sha256(readFileSync(kept))).toBe(ha);
  });

  it('moves a file it is allowed to: the same file, no second copy; a file already kept stays put', async () => {
    const { store, a, ha } = storeWithFile();
    const inode = statSync(a).ino;
    await store.put(ha, a, { move: true });
    expect(existsSync(a)).toBe(false);
    expect(statSync(store.pathOf(ha)).ino).toBe(inode);
    expect(readFileSync(store.pathOf(ha), 'utf8')).toBe('# A\n\nalpha');

    // The same bytes again: the kept file is not replaced, and the caller's file is left for it to remove.
    const again = join(dir.path, 'again.md');
    writeFileSync(again, '# A\n\nalpha');
    await store.put(ha, again, { move: true });
    expect(statSync(store.pathOf(ha)).ino).toBe(inode);
    expect(existsSync(again)).toBe(true);
  });

  it('moves after its shard folder was removed by hand, and names a file to move that is gone', async () => {
    const { store, a, ha } = storeWithFile();
    await store.put(ha, a);
    rmSync(join(dir.path, 'sources'), { recursive: true });
    const moved = join(dir.path, 'moved.md');
    copyFileSync(a, moved);
    await store.put(ha, moved, { move: true });
    expect(existsSync(moved)).toBe(false);
    expect(readFileSync(store.pathOf(ha), 'utf8')).toBe('# A\n\nalpha');

    await expect(store.put('cd'.repeat(32), join(dir.path, 'gone.md'), { move: true })).rejects.toThrow(
      /ENOENT.*gone\.md/,
    );
    expect(readdirSync(join(dir.path, 'sources', 'cd'))).toEqual([]);
  });

  // tmpfs (/dev/shm) is another file system than the test's folder on disk, where a rename cannot go.
  const otherFs = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(tempDirParent()).dev;
  it.skipIf(!otherFs)('copies a file to move from another file system (a rename cannot cross)', async () => {
    const store = new SourceStore(join(dir.path, 'sources'));
    const shm = mkdtempSync('/dev/shm/kbs-test-');
    try {
      const a = join(shm, 'a.md');
      writeFileSync(a, '# A\n\nalpha');
      const ha = sha256(readFileSync(a));
      await store.put(ha, a, { move: true });
      expect(readFileSync(store.pathOf(ha), 'utf8')).toBe('# A\n\nalpha');
      expect(statSync(store.pathOf(ha)).dev).not.toBe(statSync(a).dev);
      expect(readdirSync(join(dir.path, 'sources', ha.slice(0, 2)))).toEqual([ha]);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('leaves held copies, and their copies being made, to the prune after their release', async () => {
    const { store, a, ha } = storeWithFile();
    const release = store.hold(ha);
    await store.put(ha, a);
    const partial = `${store.pathOf(ha)}.0a1b2c3d.part`;
    writeFileSync(partial, '# A');
    const stray = join(dir.path, 'sources', ha.slice(0, 2), `${'0'.repeat(64)}.ffffffff.part`);
    writeFileSync(stray, 'left by a killed copy');

    expect(await store.prune(new Set())).toBe(1);
    expect(existsSync(stray)).toBe(false);
    expect(store.has(ha)).toBe(true);
    expect(existsSync(partial)).toBe(true);

    release();
    release(); // Once only: a second call releases nothing more.
    expect(await store.prune(new Set())).toBe(2);
    expect(store.has(ha)).toBe(false);
  });

  it('counts holds: a copy two ingestions keep stays until both have released it', async () => {
    const { store, a, ha } = storeWithFile();
    const first = store.hold(ha);
    const second = store.hold(ha);
    await store.put(ha, a);
    first();
    expect(await store.prune(new Set())).toBe(0);
    second();
    expect(await store.prune(new Set())).toBe(1);
  });

  it('keeps a copy released during a prune, which started before its document was committed', async () => {
    const { store, a, ha } = storeWithFile();
    const release = store.hold(ha);
    await store.put(ha, a);
    // The prune was given the documents before the commit: this copy is not among them.
    const pruning = store.prune(new Set());
    release();
    expect(await pruning).toBe(0);
    expect(store.has(ha)).toBe(true);
  });

  it('refuses a name that is not a content hash (no path tricks)', () => {
    const store = new SourceStore(join(dir.path, 'sources'));
    expect(() => store.pathOf('../../etc/passwd')).toThrow(/SHA-256/);
  });
});

/** Where tempDir() makes its folders. */
function tempDirParent(): string {
  const probe = tempDir();
  probe.remove();
  return join(probe.path, '..');
}

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

    // The input was not the ingestion's to move.
    expect(existsSync(file)).toBe(true);

    services.listings.delete(listingId);
    expect(await services.pruneSources()).toBe(1);
    expect(
      readdirSync(join(dir.path, 'data', 'sources')).flatMap((s) =>
        readdirSync(join(dir.path, 'data', 'sources', s)),
      ),
    ).toEqual([]);
  });

  it('keeps the copies of an ingestion under way when a prune runs before its commit', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const listingId = services.listings.create(
      { title: 'Running', accessModel: 'one_time', price: 1 },
      wallet,
    ).id;
    const other = services.listings.create(
      { title: 'Deleted', accessModel: 'one_time', price: 1 },
      wallet,
    ).id;
    let pruned: Promise<number> | undefined;
    await services.ingestion.run({
      listingId,
      inputs: ['codeblock.md', 'fake-html.html', 'fake-memo.pdf'].map((name) => ({
        path: join(FIXTURES, name),
      })),
      atomic: false,
      limits: STUDIO_LIMITS,
      // Every copy is in place, none referenced yet: the creator deletes another listing now.
      onProgress: (progress) => {
        if (progress.stage !== 'storing' || pruned) return;
        services.listings.delete(other);
        pruned = services.pruneSources();
      },
    });
    expect(await pruned).toBe(0);
    const documents = services.knowledgeBase.documents(listingId);
    expect(documents).toHaveLength(3);
    for (const doc of documents) expect(services.sources.has(doc.contentHash)).toBe(true);

    // Once committed they are referenced; a failed ingestion's copies go with the next prune.
    expect(await services.pruneSources()).toBe(0);
  });

  it('drops nothing while another live process uses the data directory', async () => {
    const { a, ha } = storeWithFile();
    await services.sources.put(ha, a);
    // This test's parent process (the test runner) stands for a `kbstudio ingest` on the same directory.
    const marker = join(dir.path, 'data', 'tmp', '.owners', String(process.ppid));
    writeFileSync(marker, '');
    expect(await services.pruneSources()).toBe(0);
    expect(services.sources.has(ha)).toBe(true);
    rmSync(marker);
    expect(await services.pruneSources()).toBe(1);
    expect(services.sources.has(ha)).toBe(false);
  });

  it('moves disposable inputs (received uploads) and entries extracted from a ZIP instead of copying them', async () => {
    const listingId = services.listings.create(
      { title: 'Moved', accessModel: 'one_time', price: 1 },
      services.wallets.defaultWallet().address,
    ).id;
    const received = join(dir.path, 'received');
    mkdirSync(received);
    const doc = join(received, 'codeblock.md');
    copyFileSync(join(FIXTURES, 'codeblock.md'), doc);
    const inode = statSync(doc).ino;
    const zip = await writeZip(join(received, 'more.zip'), {
      'notes/a.md': '# Alpha\n\nThe first note of the archive.',
    });
    // What the pipeline asks of the store (the extracted entry is gone with the job's folder afterwards).
    const store = services.sources;
    const put = store.put.bind(store);
    const asked: { file: string; move: boolean | undefined }[] = [];
    store.put = (hash, file, options) => {
      asked.push({ file, move: options?.move });
      return put(hash, file, options);
    };
    await services.ingestion.run({
      listingId,
      inputs: [
        { path: doc, disposable: true },
        { path: zip, disposable: true },
      ],
      atomic: false,
      limits: STUDIO_LIMITS,
    });
    const docs = services.knowledgeBase.documents(listingId);
    expect(docs.map((d) => d.source).sort()).toEqual(['codeblock.md', 'notes/a.md']);
    const kept = (source: string) =>
      services.sources.pathOf(docs.find((d) => d.source === source)!.contentHash);
    expect(existsSync(doc)).toBe(false);
    expect(statSync(kept('codeblock.md')).ino).toBe(inode);
    expect(readFileSync(kept('codeblock.md'))).toEqual(readFileSync(join(FIXTURES, 'codeblock.md')));
    expect(readFileSync(kept('notes/a.md'), 'utf8')).toBe('# Alpha\n\nThe first note of the archive.');
    // The archive itself is not a source: it stays for the caller to remove.
    expect(existsSync(zip)).toBe(true);
    // The received document, and the entry extracted under the data directory's scratch folder.
    const scratch = join(dir.path, 'data', 'tmp');
    expect(asked.map((a) => [a.file === doc || a.file.startsWith(scratch + sep), a.move])).toEqual([
      [true, true],
      [true, true],
    ]);
  });
});
