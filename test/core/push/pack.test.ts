import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extractZip } from '../../../src/core/ingest/zip';
import { packPart } from '../../../src/core/push/pack';
import type { PlannedPart } from '../../../src/core/push/plan';
import { FIXTURES, tempDir } from '../../helpers/studio';

const dir = tempDir('kbs-pack-');
afterAll(() => dir.remove());

function part(files: string[]): PlannedPart {
  const planned = files.map((f) => ({
    source: `docs/sub/${f}`,
    format: f.split('.').pop()!,
    bytes: statSync(join(FIXTURES, f)).size,
    path: join(FIXTURES, f),
  }));
  return {
    chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
    files: planned,
    bytes: planned.reduce((n, f) => n + f.bytes, 0),
  };
}

describe('packPart', () => {
  it('writes each file at its source path, byte for byte, readable by the upload extractor', async () => {
    const files = ['codeblock.md', 'fake-memo.pdf', 'stanley-cups.csv'];
    const zip = join(dir.path, 'one.zip');
    const progress: { filesDone: number; bytesDone: number }[] = [];
    const size = await packPart(part(files), zip, (p) => progress.push(p));
    expect(size).toBe(statSync(zip).size);

    const extracted = await extractZip(zip, join(dir.path, 'out'), {
      source: 'one.zip',
      maxArchiveBytes: 1e9,
      maxTotalBytes: 1e9,
      maxFileBytes: 1e9,
      maxEmbeddingsFileBytes: 1e9,
    });
    expect(extracted.files.map((f) => f.entry).sort()).toEqual(files.map((f) => `docs/sub/${f}`).sort());
    for (const f of extracted.files) {
      const original = readFileSync(join(FIXTURES, f.entry.replace('docs/sub/', '')));
      expect(readFileSync(f.path).equals(original)).toBe(true);
    }
    expect(progress.at(-1)).toEqual({ filesDone: 3, bytesDone: part(files).bytes });
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      packPart(part(['codeblock.md']), join(dir.path, 'x.zip'), undefined, controller.signal),
    ).rejects.toThrow();
  });
});
