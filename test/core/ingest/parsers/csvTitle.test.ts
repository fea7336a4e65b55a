import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../../src/core/ingest/limits';
import { parseCsv } from '../../../../src/core/ingest/parsers/csv';
import { previewChunks } from '../../../../src/core/ingest/preview';

function csv(text: string) {
  return parseCsv({ bytes: new TextEncoder().encode(text), source: 'table.csv' });
}

/** The metadata of each chunk ingestion would store for the file (the document's and the row's). */
async function storedMetadata(text: string): Promise<Record<string, unknown>[]> {
  const dir = mkdtempSync(join(tmpdir(), 'kbs-csv-title-'));
  try {
    const file = join(dir, 'books.csv');
    writeFileSync(file, text);
    const preview = await previewChunks({
      path: file,
      source: 'books.csv',
      limit: 100,
      limits: STUDIO_LIMITS,
    });
    return preview.chunks.map((chunk) => chunk.metadata);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('parseCsv: a first record alone in its first cell, above data rather than a header', () => {
  it('takes "id,," over "1,foo,bar" for the header, not a title (the first data row became the header)', async () => {
    const doc = await csv('id,,\n1,foo,bar\n2,baz,qux');

    expect(doc.metadata).toEqual({});
    expect(doc.warnings ?? []).toEqual([]);
    expect(doc.sections).toEqual([
      {
        text: 'id: 1\ncolumn_2: foo\ncolumn_3: bar',
        metadata: { row: 1, id: '1', column_2: 'foo', column_3: 'bar' },
        atomic: true,
      },
      {
        text: 'id: 2\ncolumn_2: baz\ncolumn_3: qux',
        metadata: { row: 2, id: '2', column_2: 'baz', column_3: 'qux' },
        atomic: true,
      },
    ]);
  });

  it.each([
    ['numbers, with or without a row below', 'id,,\n1,foo,bar'],
    ['prices and percentages', 'Totals,,\nnorth,"$1,234.50",12%\nsouth,"$99.00",3%'],
    ['dates', 'Log,,\nstart,2024-03-01,10:30\nstop,2024-03-02,11:00'],
    ['e-mail addresses', 'name,,\nAda,ada@example.org,London\nBob,bob@example.org,Paris'],
    ['URLs', 'link,,\nhome,https://example.org/,yes\nblog,https://example.org/blog,no'],
    ['codes shaped like the cells below them', 'id,,\nA1,foo,bar\nA2,baz,qux'],
    ['codes shaped like the cells below them', 'Invoices,,\nINV-0001,Ada,paid\nINV-0002,Bob,due'],
  ])('keeps a first data row of %s as a row', async (_kind, text) => {
    const doc = await csv(text);

    expect(doc.metadata).toEqual({});
    expect(doc.sections[0]!.metadata.row).toBe(1);
    expect(doc.sections).toHaveLength(text.split('\n').length - 1);
  });

  it('still takes a title above a header of names, beside digits that do not look like the rows below', async () => {
    const doc = await csv('Quarterly sales,,,\nRegion,Q1,Q2,Notes\nNorth,120,130,ok\nSouth,90,95,late\n');

    expect(doc.metadata).toEqual({ title: 'Quarterly sales' });
    expect(doc.sections.map((s) => s.metadata)).toEqual([
      { row: 1, Region: 'North', Q1: '120', Q2: '130', Notes: 'ok' },
      { row: 2, Region: 'South', Q1: '90', Q2: '95', Notes: 'late' },
    ]);
  });
});

describe('parseCsv: a title row above a header with a "title" column', () => {
  it('keeps the title under "title_2" and says so, where the column overwrote it', async () => {
    const text = 'My Books,,\ntitle,author,year\nDune,Frank Herbert,1965';
    const doc = await csv(text);

    expect(doc.metadata).toEqual({ title_2: 'My Books' });
    expect(doc.warnings).toEqual([
      'The first line "My Books" is a title above the header row; it was kept as the title under "title_2" (a column is named "title"), not as a row.',
    ]);
    expect(doc.sections).toEqual([
      {
        text: 'title: Dune\nauthor: Frank Herbert\nyear: 1965',
        metadata: { row: 1, title: 'Dune', author: 'Frank Herbert', year: '1965' },
        atomic: true,
      },
    ]);
    expect(await storedMetadata(text)).toEqual([
      { title_2: 'My Books', row: 1, title: 'Dune', author: 'Frank Herbert', year: '1965' },
    ]);
  });

  it('takes the next free name when "title_2" is a column too', async () => {
    const doc = await csv('My Books,,\ntitle,title_2,year\nDune,Frank Herbert,1965');

    expect(doc.metadata).toEqual({ title_3: 'My Books' });
    expect(doc.warnings?.[0]).toContain('kept as the title under "title_3" (a column is named "title")');
  });
});
