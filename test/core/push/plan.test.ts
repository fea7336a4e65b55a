import { describe, expect, it } from 'vitest';
import type { ExistingDocument } from '../../../src/core/ingest/store';
import { BULK_PART_LIMITS, planParts } from '../../../src/core/push/plan';

const recursive = { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 };

function doc(source: string, bytes: number, chunking: unknown = recursive): ExistingDocument {
  return {
    id: `doc-${source}`,
    source,
    contentHash: source.padEnd(64, '0'),
    chunkCount: 1,
    documentCount: 1,
    bytes,
    metadata: chunking === undefined ? {} : { chunking },
  };
}

const locate = (d: ExistingDocument) => `/kept/${d.source}`;

describe('planParts', () => {
  it('uses the spec bulk threshold by default: 500 MB and 1,000 files per part', () => {
    expect(BULK_PART_LIMITS).toEqual({ maxBytes: 500 * 1024 * 1024, maxFiles: 1000 });
    const docs = Array.from({ length: 2500 }, (_, i) => doc(`f${String(i).padStart(4, '0')}.md`, 10));
    const plan = planParts(docs, locate);
    expect(plan.parts.map((p) => p.files.length)).toEqual([1000, 1000, 500]);
    expect(plan.parts[0]!.files[0]).toEqual({
      source: 'f0000.md',
      format: 'markdown',
      bytes: 10,
      path: '/kept/f0000.md',
    });
  });

  it('splits by bytes, never above the limit unless one file alone is larger', () => {
    const docs = [doc('a.md', 40), doc('b.md', 40), doc('c.md', 30), doc('d.pdf', 250), doc('e.md', 10)];
    const plan = planParts(docs, locate, { maxBytes: 100, maxFiles: 10 });
    expect(plan.parts.map((p) => p.files.map((f) => f.source))).toEqual([
      ['a.md', 'b.md'],
      ['c.md'],
      ['d.pdf'],
      ['e.md'],
    ]);
    expect(plan.parts.map((p) => p.bytes)).toEqual([80, 30, 250, 10]);
  });

  it('splits by file count', () => {
    const docs = ['a', 'b', 'c', 'd', 'e'].map((n) => doc(`${n}.md`, 1));
    const plan = planParts(docs, locate, { maxBytes: 1000, maxFiles: 2 });
    expect(plan.parts.map((p) => p.files.map((f) => f.source))).toEqual([
      ['a.md', 'b.md'],
      ['c.md', 'd.md'],
      ['e.md'],
    ]);
  });

  it('groups documents by the chunking they were ingested with; JSONL embeddings join a group', () => {
    const fixed = { strategy: 'fixed', chunkSize: 128, chunkOverlap: 0 };
    const csv = { ...recursive, csvRequiredColumns: ['name'] };
    const plan = planParts(
      [doc('a.md', 1), doc('b.md', 1, fixed), doc('c.md', 1), doc('v.jsonl', 1, {}), doc('p.csv', 1, csv)],
      locate,
    );
    expect(plan.parts.map((p) => [p.chunking, p.files.map((f) => f.source)])).toEqual([
      [recursive, ['a.md', 'c.md', 'v.jsonl']],
      [fixed, ['b.md']],
      [{ ...recursive, requiredColumns: ['name'] }, ['p.csv']],
    ]);
  });

  it('gives documents from before chunking was recorded the defaults', () => {
    const plan = planParts([doc('old.md', 5, undefined)], locate);
    expect(plan.parts[0]!.chunking).toEqual(recursive);
  });

  it('lists documents whose original bytes are not kept instead of planning them', () => {
    const plan = planParts([doc('a.md', 5), doc('gone.pdf', 7)], (d) =>
      d.source === 'gone.pdf' ? undefined : locate(d),
    );
    expect(plan.missing).toEqual([{ source: 'gone.pdf', format: 'pdf', bytes: 7 }]);
    expect(plan.parts.flatMap((p) => p.files.map((f) => f.source))).toEqual(['a.md']);
  });
});
