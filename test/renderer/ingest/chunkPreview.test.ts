import { describe, expect, it } from 'vitest';
import {
  chunkingError,
  metadataItems,
  previewSummary,
  sharedPrefix,
  skippedRowsSummary,
} from '../../../src/renderer/src/features/ingest/chunkPreview';
import { mergeQueue, filesFromInput } from '../../../src/renderer/src/features/ingest/dropFiles';
import { overallPercent } from '../../../src/renderer/src/features/ingest/jobView';
import type { IngestJob } from '../../../src/renderer/src/features/ingest/types';

describe('metadataItems', () => {
  it('puts page, row and headings first, joins heading paths and hides the reserved keys', () => {
    const items = metadataItems({
      source: 'a.md',
      format: 'markdown',
      documentId: 'doc_1',
      chunkIndex: 3,
      title: 'Guide',
      headings: ['Intro', 'Scope'],
      page: 2,
      tags: ['a', 'b'],
      empty: '',
    });
    expect(items).toEqual([
      { key: 'page', label: 'Page', value: '2' },
      { key: 'headings', label: 'Headings', value: 'Intro › Scope' },
      { key: 'title', label: 'Title', value: 'Guide' },
      { key: 'tags', label: 'tags', value: 'a, b' },
    ]);
  });

  it('shows CSV columns under their own names after the row number', () => {
    expect(metadataItems({ Team: 'Boston', row: 4, Year: 1970 }).map((i) => `${i.label}=${i.value}`)).toEqual(
      ['Row=4', 'Team=Boston', 'Year=1970'],
    );
  });
});

describe('chunkingError', () => {
  it('accepts the defaults and refuses what the server would refuse', () => {
    expect(chunkingError({ strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 })).toBeUndefined();
    expect(chunkingError({ strategy: 'fixed', chunkSize: 8, chunkOverlap: 0 })).toContain('16 to 8192');
    expect(chunkingError({ strategy: 'fixed', chunkSize: 100, chunkOverlap: 100 })).toContain('0 to 99');
    expect(chunkingError({ strategy: 'fixed', chunkSize: 100.5, chunkOverlap: 0 })).toContain('whole number');
  });
});

describe('sharedPrefix', () => {
  it('finds the overlap a chunk shares with the end of the previous one', () => {
    const previous = 'The court held that the contract was void. The appeal failed.';
    const current = 'The appeal failed. Costs were awarded to the respondent.';
    expect(current.slice(0, sharedPrefix(previous, current))).toBe('The appeal failed.');
  });

  it('is zero without a previous chunk or a real overlap', () => {
    expect(sharedPrefix(undefined, 'abc')).toBe(0);
    expect(sharedPrefix('one two three', 'four five six')).toBe(0);
    // A few shared characters are a coincidence, not an overlap.
    expect(sharedPrefix('ends with the', 'the start')).toBe(0);
  });
});

describe('previewSummary', () => {
  it('says how many chunks and tokens, and how many are shown', () => {
    expect(previewSummary(42, 12345, 20)).toBe('42 chunks · 12,345 tokens · showing the first 20');
    expect(previewSummary(1, 80, 1)).toBe('1 chunk · 80 tokens');
  });

  it('says "token" of a single token', () => {
    expect(previewSummary(1, 1, 1)).toBe('1 chunk · 1 token');
    expect(previewSummary(0, 0, 0)).toBe('0 chunks · 0 tokens');
  });
});

describe('skippedRowsSummary', () => {
  it('names the rows a CSV leaves out, grouped by why', () => {
    expect(skippedRowsSummary([])).toBeUndefined();
    expect(skippedRowsSummary([{ row: 3, reason: 'empty required field(s): notes' }])).toBe(
      '1 CSV row skipped: row 3 (empty required field(s): notes)',
    );
    expect(
      skippedRowsSummary([
        { row: 2, reason: 'empty required field(s): notes' },
        { row: 4, reason: 'empty required field(s): notes' },
        { row: 7, reason: 'empty required field(s): name, notes' },
      ]),
    ).toBe(
      '3 CSV rows skipped: rows 2 and 4 (empty required field(s): notes); row 7 (empty required field(s): name, notes)',
    );
  });

  it('counts the rows past the first ten of a reason, and the reasons past three', () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({ row: i + 1, reason: 'empty required field(s): a' }));
    const others = ['b', 'c', 'd'].map((c, i) => ({ row: 20 + i, reason: `empty required field(s): ${c}` }));
    expect(skippedRowsSummary([...rows, ...others])).toBe(
      '15 CSV rows skipped: rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more (empty required field(s): a); row 20 (empty required field(s): b); row 21 (empty required field(s): c); and 1 other row',
    );
  });
});

describe('the file queue', () => {
  const file = (name: string, relative = '') =>
    Object.assign(new File(['x'], name), { webkitRelativePath: relative }) as File;

  it('keeps folder-relative paths, drops OS litter, and replaces a path dropped twice', () => {
    const first = filesFromInput([
      file('a.md', 'docs/a.md'),
      file('.DS_Store', 'docs/.DS_Store'),
      file('b.csv'),
    ]);
    expect(first.map((f) => f.path)).toEqual(['docs/a.md', 'b.csv']);
    const newer = file('b.csv');
    const merged = mergeQueue(first, [{ file: newer, path: 'b.csv' }]);
    expect(merged.map((f) => f.path)).toEqual(['b.csv', 'docs/a.md']);
    expect(merged[0]!.file).toBe(newer);
  });
});

describe('overallPercent', () => {
  const job = (progress: IngestJob['progress'], state: IngestJob['state'] = 'running') =>
    ({ state, progress }) as IngestJob;

  it('moves with files done and the current file’s stage, and is full when the job ended', () => {
    const base = { filesTotal: 4, bytesDone: 0, bytesTotal: 1, chunks: 0 };
    expect(overallPercent(job(null))).toBe(0);
    expect(overallPercent(job({ ...base, stage: 'parsing', file: 'a', filesDone: 0 }))).toBe(7);
    expect(overallPercent(job({ ...base, stage: 'embedding', file: 'c', filesDone: 2 }))).toBe(62);
    expect(overallPercent(job({ ...base, stage: 'storing', filesDone: 4 }))).toBe(95);
    expect(overallPercent(job(null, 'cancelled'))).toBe(100);
  });
});
