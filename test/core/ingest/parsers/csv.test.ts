import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidDocument } from '../../../../src/core/ingest/errors';
import {
  DELIMITER_SAMPLE_BYTES,
  parseCsv,
  rowSections,
  utf8Delimiter,
} from '../../../../src/core/ingest/parsers/csv';
import { buildColumns } from '../../../../src/core/ingest/parsers/csvColumns';
import type { Parser } from '../../../../src/core/ingest/types';

const repoRoot = new URL('../../../../', import.meta.url);
const fixtures = new URL('../shared/fixtures/docs/', repoRoot);

function fixture(name: string) {
  return parseCsv({ bytes: readFileSync(new URL(name, fixtures)), source: name });
}

function csv(text: string, source = 'table.csv', options?: { requiredColumns?: string[] }) {
  return parseCsv({ bytes: new TextEncoder().encode(text), source }, options);
}

describe('parseCsv on the shared fixtures', () => {
  it('skips the title row above the header and keeps headers as metadata keys (stanley-cups.csv)', async () => {
    const doc = await fixture('stanley-cups.csv');

    expect(doc.format).toBe('csv');
    expect(doc.sections).toEqual([
      {
        text: 'Team: Blues\nLocation: STL\nStanley Cups: 1',
        metadata: { row: 1, Team: 'Blues', Location: 'STL', 'Stanley Cups': '1' },
        atomic: true,
      },
      {
        text: 'Team: Flyers\nLocation: PHI\nStanley Cups: 2',
        metadata: { row: 2, Team: 'Flyers', Location: 'PHI', 'Stanley Cups': '2' },
        atomic: true,
      },
      {
        text: 'Team: Maple Leafs\nLocation: TOR\nStanley Cups: 13',
        metadata: { row: 3, Team: 'Maple Leafs', Location: 'TOR', 'Stanley Cups': '13' },
        atomic: true,
      },
    ]);
    expect(doc.metadata).toEqual({ title: 'Stanley Cups' });
    expect(doc.warnings).toEqual([
      'The first line "Stanley Cups" is a title above the header row; it was kept as the title, not as a row.',
    ]);
    expect(doc.skippedRows).toBeUndefined();
  });

  it('keeps emoji intact (stanley-cups-with-emoji.csv)', async () => {
    const doc = await fixture('stanley-cups-with-emoji.csv');

    expect(doc.sections).toHaveLength(4);
    expect(doc.sections[3]).toEqual({
      text: 'Team: 👨\\U+1F3FB🔧\nLocation: TOR\nStanley Cups: 15',
      metadata: { row: 4, Team: '👨\\U+1F3FB🔧', Location: 'TOR', 'Stanley Cups': '15' },
      atomic: true,
    });
  });

  it('keeps a quoted comma inside one field and de-duplicates headers (csv-with-escaped-commas.csv)', async () => {
    const doc = await fixture('csv-with-escaped-commas.csv');

    const row = { A: 'A', A_2: 'A', A_3: 'A', A_4: 'A,A', A_5: 'A' };
    expect(doc.sections).toEqual([
      { text: 'A: A\nA: A\nA: A\nA: A,A\nA: A', metadata: { row: 1, ...row }, atomic: true },
      { text: 'A: A\nA: A\nA: A\nA: A,A\nA: A', metadata: { row: 2, ...row }, atomic: true },
    ]);
  });

  it('reads a file without a consistent delimiter as one column, commas kept as text (single-column.csv)', async () => {
    const doc = await fixture('single-column.csv');

    expect(doc.sections.map((s) => s.metadata['Lorem, ipsum'])).toEqual([
      'dolor sit',
      'amet consectetur',
      'adipiscing, elit',
      'sed, do eiusmod',
      'tempor incididunt',
      'ut labore et',
      'dolore; magna aliqua',
      'Ut enim, ad minim, veniam',
    ]);
    expect(doc.sections[7]).toEqual({
      text: 'Lorem, ipsum: Ut enim, ad minim, veniam',
      metadata: { row: 8, 'Lorem, ipsum': 'Ut enim, ad minim, veniam' },
      atomic: true,
    });
  });
});

describe('parseCsv delimiters and layout', () => {
  it.each([
    ['semicolon', ';'],
    ['tab', '\t'],
    ['pipe', '|'],
  ])('detects a %s delimiter, quotes and all', async (_name, d) => {
    const doc = await csv(
      `name${d}city${d}note\nAda${d}London${d}"likes ${d}, and commas"\nBo${d}Paris${d}plain\n`,
    );

    expect(doc.sections).toEqual([
      {
        text: `name: Ada\ncity: London\nnote: likes ${d}, and commas`,
        metadata: { row: 1, name: 'Ada', city: 'London', note: `likes ${d}, and commas` },
        atomic: true,
      },
      {
        text: 'name: Bo\ncity: Paris\nnote: plain',
        metadata: { row: 2, name: 'Bo', city: 'Paris', note: 'plain' },
        atomic: true,
      },
    ]);
  });

  it('detects a title row above a wider header', async () => {
    const doc = await csv('Quarterly report\n\nregion;sales\nnorth;10\nsouth;12\n');

    expect(doc.metadata).toEqual({ title: 'Quarterly report' });
    expect(doc.sections.map((s) => s.metadata)).toEqual([
      { row: 1, region: 'north', sales: '10' },
      { row: 2, region: 'south', sales: '12' },
    ]);
    expect(doc.warnings?.[0]).toContain('"Quarterly report" is a title above the header row');
  });

  it("takes a header whose first cell is empty (pandas' index column) for the header, not a title", async () => {
    const doc = await csv(',text\n0,hello\n1,world\n2,again\n');

    expect(doc.metadata).toEqual({});
    expect(doc.warnings ?? []).toEqual([]);
    expect(doc.sections.map((s) => s.metadata)).toEqual([
      { row: 1, column_1: '0', text: 'hello' },
      { row: 2, column_1: '1', text: 'world' },
      { row: 3, column_1: '2', text: 'again' },
    ]);
  });

  it('de-duplicates header names and keeps reserved names off the row number', async () => {
    const doc = await csv('name,name,row,name_2\nAda,Lovelace,7,x\n');

    expect(doc.sections).toEqual([
      {
        text: 'name: Ada\nname: Lovelace\nrow: 7\nname_2: x',
        metadata: { row: 1, name: 'Ada', name_2: 'Lovelace', row_2: '7', name_2_2: 'x' },
        atomic: true,
      },
    ]);
  });

  it('handles quoted fields with embedded newlines and escaped quotes; blank lines are not rows', async () => {
    const doc = await csv('title,body\r\n"A","line one\r\nline two"\r\n\r\n,,\r\n  \r\nB,"say ""hi"""\r\n');

    expect(doc.sections.map((s) => [s.metadata.row, s.text])).toEqual([
      [1, 'title: A\nbody: line one\nline two'],
      [2, 'title: B\nbody: say "hi"'],
    ]);
  });

  it('keeps cells of ragged rows past the header and skips rows missing a required cell', async () => {
    const doc = await csv('a,b\n1,2,3\n4\n5,6\n');

    expect(doc.sections).toEqual([
      { text: 'a: 1\nb: 2\ncolumn_3: 3', metadata: { row: 1, a: '1', b: '2', column_3: '3' }, atomic: true },
      { text: 'a: 5\nb: 6', metadata: { row: 3, a: '5', b: '6' }, atomic: true },
    ]);
    expect(doc.skippedRows).toEqual([{ row: 2, reason: 'empty required field(s): b' }]);
  });

  it('decodes UTF-16 with a BOM and UTF-8 with a BOM', async () => {
    const text = 'name,city\nZoë,Zürich\n';
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from(text, 'utf16le')]);
    const utf8 = new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(text, 'utf8')]);

    for (const bytes of [utf16, utf8]) {
      const doc = await parseCsv({ bytes, source: 'cities.csv' });
      expect(doc.sections).toEqual([
        { text: 'name: Zoë\ncity: Zürich', metadata: { row: 1, name: 'Zoë', city: 'Zürich' }, atomic: true },
      ]);
    }
  });

  // The worker decodes UTF-8 itself; this thread decodes only the file's start, to find the delimiter.
  const filler = (rows: number) => Array.from({ length: rows }, (_, i) => `row ${i},plain ascii`).join('\n');

  it('reads a file that is UTF-8 only at its start as windows-1252, as decodeText does', async () => {
    const head = `name,note\n${filler(20_000)}\n`;
    expect(head.length).toBeGreaterThan(300_000);
    // é and the euro sign in windows-1252: 0xe9 and 0x80, neither of them valid UTF-8 here.
    const tail = [...Buffer.from('Caf'), 0xe9, ...Buffer.from(',10 '), 0x80, 0x0a];
    const bytes = new Uint8Array([...Buffer.from(head), ...tail]);
    // Valid UTF-8 as far as this thread looks: sent to the worker, which finds it is not.
    expect(utf8Delimiter(bytes)).toBe(',');
    const doc = await parseCsv({ bytes, source: 'legacy.csv' });
    expect(doc.sections).toHaveLength(20_001);
    expect(doc.sections.at(-1)!.metadata).toEqual({ row: 20_001, name: 'Café', note: '10 €' });
  });

  it('leaves to decodeText a file with a byte order mark, not UTF-8 at its start, or of one column', () => {
    const utf8 = Buffer.from('name,city\nZoë,Zürich\n');
    expect(utf8Delimiter(utf8)).toBe(',');
    expect(utf8Delimiter(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]))).toBeUndefined();
    expect(utf8Delimiter(Buffer.from('\ufeffname,city\n', 'utf16le'))).toBeUndefined();
    expect(utf8Delimiter(Buffer.from('name,city\nZoë,Zürich\n', 'latin1'))).toBeUndefined();
    expect(utf8Delimiter(Buffer.from('notes\nfirst line\nLorem, ipsum\nlast line\n'))).toBeUndefined();
  });

  it('reads UTF-8 whatever character the part decoded here ends in', async () => {
    // The emoji (4 bytes) and ë (2 bytes) cut after each of their bytes by the end of what this thread
    // decodes: its decoder must not take the cut for invalid UTF-8.
    for (const [character, cut] of [
      ['🦊', 1],
      ['🦊', 2],
      ['🦊', 3],
      ['ë', 1],
    ] as const) {
      const header = 'name,animal\n';
      const rows = filler(Math.floor(DELIMITER_SAMPLE_BYTES / 24));
      const pad = DELIMITER_SAMPLE_BYTES - cut - Buffer.byteLength(`${header}${rows}\nlast,`);
      const text = `${header}${rows}\nlast,${'-'.repeat(pad)}${character} at the cut\n`;
      expect(Buffer.from(text).indexOf(Buffer.from(character))).toBe(DELIMITER_SAMPLE_BYTES - cut);
      // Found here, so the worker decodes the file.
      expect(utf8Delimiter(Buffer.from(text))).toBe(',');
      const doc = await csv(text, 'cut.csv');
      expect(doc.sections.at(-1)!.metadata).toEqual({
        row: doc.sections.length,
        name: 'last',
        animal: `${'-'.repeat(pad)}${character} at the cut`,
      });
    }
  });
});

describe('parseCsv required fields', () => {
  const people =
    'name,email,,note\nAda,ada@example.com,,\nBo,,x,\n  ,cy@example.com,,hi\nDi,di@example.com,,\n';

  it('skips rows with an empty cell in any named column by default, with row numbers and column names', async () => {
    const doc = await csv(people);

    expect(doc.sections).toEqual([]);
    expect(doc.skippedRows).toEqual([
      { row: 1, reason: 'empty required field(s): note' },
      { row: 2, reason: 'empty required field(s): email, note' },
      { row: 3, reason: 'empty required field(s): name' },
      { row: 4, reason: 'empty required field(s): note' },
    ]);
  });

  it('checks only the columns asked for; empty cells stay in metadata, out of the text', async () => {
    const doc = await csv(people, 'people.csv', { requiredColumns: ['name', 'email'] });

    expect(doc.sections).toEqual([
      {
        text: 'name: Ada\nemail: ada@example.com',
        metadata: { row: 1, name: 'Ada', email: 'ada@example.com', column_3: '', note: '' },
        atomic: true,
      },
      {
        text: 'name: Di\nemail: di@example.com',
        metadata: { row: 4, name: 'Di', email: 'di@example.com', column_3: '', note: '' },
        atomic: true,
      },
    ]);
    expect(doc.skippedRows).toEqual([
      { row: 2, reason: 'empty required field(s): email' },
      { row: 3, reason: 'empty required field(s): name' },
    ]);
  });

  it('refuses unknown required columns, listing the real headers', async () => {
    await expect(csv(people, 'people.csv', { requiredColumns: ['name', 'phone'] })).rejects.toThrow(
      'people.csv: required column(s) "phone" not found; the header has "name", "email", "note".',
    );
  });

  it('is assignable to Parser', async () => {
    const parser: Parser = parseCsv;

    const doc = await parser({ bytes: new TextEncoder().encode('k\nv\n'), source: 'one.csv' });

    expect(doc.sections).toEqual([{ text: 'k: v', metadata: { row: 1, k: 'v' }, atomic: true }]);
  });
});

describe('parseCsv edge files', () => {
  it('gives no sections and a warning for a header-only file', async () => {
    const doc = await csv('name,email\n');

    expect(doc.sections).toEqual([]);
    expect(doc.warnings).toEqual(['The file has a header row but no data rows.']);
  });

  it('refuses an empty file and an unclosed quote', async () => {
    const empty = csv('\n \n', 'empty.csv');
    await expect(empty).rejects.toBeInstanceOf(InvalidDocument);
    await expect(empty).rejects.toThrow('empty.csv: the file is empty.');
    await expect(csv('a,b\n"x,1\n2,3\n', 'quote.csv')).rejects.toThrow(
      /^quote\.csv: invalid CSV: Quote Not Closed: .* at line 3\.$/,
    );
  });
});

describe('parseCsv on its worker thread', () => {
  /** `rows` data rows of three columns, about 40 bytes each. */
  const largeCsv = (rows: number) =>
    [
      'id,name,comment',
      ...Array.from({ length: rows }, (_, i) => `${i},"name ${i}","a comment, quoted ${i}"`),
    ].join('\n');

  it('reads the records beside the calling thread, which keeps turning meanwhile', async () => {
    // Read on the calling thread (as before), 2 MB of CSV held it for the whole parse: no turn at all.
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    const doc = await csv(largeCsv(50_000), 'large.csv');
    reading = false;
    expect(doc.sections).toHaveLength(50_000);
    expect(doc.sections[49_999]).toEqual({
      text: 'id: 49999\nname: name 49999\ncomment: a comment, quoted 49999',
      metadata: { row: 50_000, id: '49999', name: 'name 49999', comment: 'a comment, quoted 49999' },
      atomic: true,
    });
    expect(turns).toBeGreaterThan(0);
  });

  it('keeps the text exactly: a leading byte order mark, CRLF inside quotes, lone carriage returns', async () => {
    const doc = await csv('\uFEFFa,b\r\n"x\r\ny",2\r\n"p\rq",3\r\n', 'crlf.csv');
    expect(doc.sections.map((s) => s.metadata)).toEqual([
      { row: 1, a: 'x\ny', b: '2' },
      { row: 2, a: 'p\nq', b: '3' },
    ]);
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    const reading = parseCsv(
      { bytes: new TextEncoder().encode(largeCsv(50_000)), source: 'cancelled.csv' },
      { signal: controller.signal },
    );
    controller.abort(reason);
    await expect(reading).rejects.toBe(reason);
    // The pool is usable afterwards.
    expect((await csv('a,b\n1,2\n')).sections).toHaveLength(1);
  });
});

describe('rowSections', () => {
  it("gives the thread's event loop turns while it builds a large file's rows", async () => {
    // 100,000 rows take well over EventLoopTurns' 20 ms to build (about 300 ms here): a callback queued
    // before must run before they are all built. Without the turns it ran only after.
    const header = ['name', 'city', 'note'];
    const rows = Array.from({ length: 100_000 }, (_, i) => [
      `Name ${i}`,
      i % 10 ? `City ${i % 97}` : '',
      `n${i}`,
    ]);
    const columns = buildColumns(header, 3);
    let turned = false;
    setImmediate(() => (turned = true));
    const { sections, skippedRows } = await rowSections(rows, columns, columns.slice(0, 2), 3);
    expect(turned).toBe(true);
    expect(sections).toHaveLength(90_000);
    expect(skippedRows).toHaveLength(10_000);
    expect(sections[0]).toEqual({
      text: 'name: Name 1\ncity: City 1\nnote: n1',
      metadata: { row: 2, name: 'Name 1', city: 'City 1', note: 'n1' },
      atomic: true,
    });
    expect(skippedRows[0]).toEqual({ row: 1, reason: 'empty required field(s): city' });
  });
});
