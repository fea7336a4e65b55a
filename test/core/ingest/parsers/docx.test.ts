import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EncryptedDocument, InvalidDocument } from '../../../../src/core/ingest/errors';
import { createDocxParser, parseDocx } from '../../../../src/core/ingest/parsers/docx';
import { screenDocxArchive } from '../../../../src/core/ingest/parsers/docxArchive';
import type { ParsedDocument } from '../../../../src/core/ingest/types';

const docs = new URL('../shared/fixtures/docs/', new URL('../../../../', import.meta.url));

async function parseFixture(name: string): Promise<ParsedDocument> {
  return parseDocx({ bytes: readFileSync(new URL(name, docs)), source: name });
}

interface ZipEntry {
  name: string;
  data: Buffer;
  /** Uncompressed size written in the headers, when it should lie. */
  declaredSize?: number;
  encrypted?: boolean;
}

/** A ZIP archive assembled by hand (deflated entries), so tests can build bombs and damaged archives. */
function zip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const compressed = deflateRawSync(entry.data);
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at); // version needed
      header.writeUInt16LE(entry.encrypted ? 1 : 0, at + 2); // flags: bit 0 = encrypted
      header.writeUInt16LE(8, at + 4); // deflate
      header.writeUInt32LE(0, at + 6); // time, date
      header.writeUInt32LE(crc32(entry.data), at + 10);
      header.writeUInt32LE(compressed.length, at + 14);
      header.writeUInt32LE(entry.declaredSize ?? entry.data.length, at + 18);
      header.writeUInt16LE(name.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

function paragraph(text: string, style?: string): string {
  const properties = style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : '';
  return `<w:p>${properties}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
}

/** A minimal Word document: body paragraphs, a page header, and core properties. */
function docxEntries(body: string, extra: ZipEntry[] = []): ZipEntry[] {
  const xml = (text: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${text}`);
  return [
    {
      name: '[Content_Types].xml',
      data: xml(
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
          '<Default Extension="xml" ContentType="application/xml"/>' +
          '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
          '</Types>',
      ),
    },
    {
      name: '_rels/.rels',
      data: xml(
        `<Relationships xmlns="${REL}">` +
          `<Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/>` +
          `<Relationship Id="rId2" Type="${REL}/metadata/core-properties" Target="docProps/core.xml"/>` +
          '</Relationships>',
      ),
    },
    {
      name: 'docProps/core.xml',
      data: xml(
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ' +
          'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Q3 &amp; Q4 plan</dc:title>' +
          '<dc:creator>Ada Lovelace</dc:creator></cp:coreProperties>',
      ),
    },
    {
      name: 'word/document.xml',
      data: xml(
        `<w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>${body}` +
          '<w:sectPr><w:headerReference w:type="default" r:id="rIdHeader"/></w:sectPr></w:body></w:document>',
      ),
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: xml(
        `<Relationships xmlns="${REL}"><Relationship Id="rIdHeader" Type="${R}/header" Target="header1.xml"/>` +
          `<Relationship Id="rIdNotes" Type="${R}/footnotes" Target="footnotes.xml"/></Relationships>`,
      ),
    },
    {
      name: 'word/header1.xml',
      data: xml(`<w:hdr xmlns:w="${W}">${paragraph('CONFIDENTIAL RUNNING HEADER')}</w:hdr>`),
    },
    {
      name: 'word/footnotes.xml',
      data: xml(
        `<w:footnotes xmlns:w="${W}"><w:footnote w:id="1">${paragraph('The source of the claim.')}</w:footnote></w:footnotes>`,
      ),
    },
    ...extra,
  ];
}

describe('parseDocx on the fixtures', () => {
  it('writes tables one row per line with cells separated, nested tables inside their cell', async () => {
    const doc = await parseFixture('docx-tables.docx');
    expect(doc.format).toBe('docx');
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0]?.text).toBe(
      [
        'Simple uniform table',
        'Header Col 1 | Header Col 2\nLorem ipsum | A link example',
        'Nested Table',
        'a | >b< | c\nd | [e | f; g&t | h] | i\nj | k | l',
        'Table with merged cells',
        // Merged cells: one spanning rows is repeated in each, so every row keeps its columns.
        'a | b\na | c | d\ne | | d',
      ].join('\n\n'),
    );
  });

  it('writes list items one per line, nested numbers continuing their parent', async () => {
    const text = (await parseFixture('example-list-items-multiple.docx')).sections
      .map((s) => s.text)
      .join('\n\n');
    expect(text).toContain(
      'Lorem Ipsum\n\n- This is simply dummy text of the printing and typesetting industry.\n' +
        '- This is simply dummy text of the printing and typesetting industry.',
    );
    expect(text).toContain(
      '2. This is simply dummy text of the printing and typesetting industry.\n' +
        '2.1. The quick brown fox jumps over the lazy dog.\n2.2. The quick brown fox jumps over the lazy dog.',
    );
    expect(text).toContain(
      '2.1. Trying more lists.\n2.1.1. This is simply dummy text of the printing and typesetting industry.',
    );
  });

  it('puts the text under its heading, with the author from the document properties', async () => {
    const doc = await parseFixture('simple.docx');
    expect(doc.metadata).toEqual({ author: 'python-docx' });
    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0]?.metadata).toEqual({ headings: ['These are a few of my favorite things:'] });
    expect(doc.sections[0]?.text).toMatch(/^These are a few of my favorite things:\n\n• Parrots\n\n/);
    expect(doc.sections[0]?.text).toContain(
      '- Hockey\n\nAnalysis\n\nThis is my first thought. This is my second thought.',
    );
    expect(doc.sections[0]?.text).toMatch(/DOYLESTOWN, PA 18901$/);
  });

  it('reads a one-line document', async () => {
    const doc = await parseFixture('fake.docx');
    expect(doc.sections).toEqual([{ text: 'Lorem ipsum dolor sit amet.', metadata: {} }]);
    expect(doc.metadata).toEqual({ author: 'Mr. Miagi' });
  });
});

describe('parseDocx on built documents', () => {
  it('leaves out text its author hid (Hidden font effect), keeping what is turned back on', async () => {
    const run = (text: string, properties = '') =>
      `<w:r>${properties ? `<w:rPr>${properties}</w:rPr>` : ''}<w:t xml:space="preserve">${text}</w:t></w:r>`;
    const body =
      `<w:p>${run('Shown to buyers. ')}${run('Answer: 42. ', '<w:b/><w:vanish/>')}` +
      `${run('Also shown. ', '<w:vanish w:val="0"/>')}${run('Page 7', '<w:webHidden/>')}</w:p>` +
      `<w:p>${run('A hidden paragraph.', '<w:vanish w:val="true"/>')}</w:p>`;
    const doc = await parseDocx({ bytes: zip(docxEntries(body)), source: 'hidden.docx' });
    const text = doc.sections.map((s) => s.text).join('\n');
    expect(text).toContain('Shown to buyers. Also shown. Page 7');
    expect(text).not.toContain('Answer: 42');
    expect(text).not.toContain('A hidden paragraph');
  });

  it('cuts sections at headings with their heading path, leaves the page header out, reads title and author', async () => {
    const body = [
      paragraph('Before any heading.'),
      paragraph('Guide', 'Heading1'),
      paragraph('Install', 'Heading2'),
      paragraph('Run the installer.'),
      paragraph('Configure', 'Heading2'),
      paragraph('Edit the settings.'),
      paragraph('Reference', 'Heading1'),
      paragraph('All the options.'),
    ].join('');
    const doc = await parseDocx({ bytes: zip(docxEntries(body)), source: 'guide.docx' });
    expect(doc.metadata).toEqual({ title: 'Q3 & Q4 plan', author: 'Ada Lovelace' });
    expect(doc.sections).toEqual([
      { text: 'Before any heading.', metadata: {} },
      { text: 'Guide\n\nInstall\n\nRun the installer.', metadata: { headings: ['Guide', 'Install'] } },
      { text: 'Configure\n\nEdit the settings.', metadata: { headings: ['Guide', 'Configure'] } },
      { text: 'Reference\n\nAll the options.', metadata: { headings: ['Reference'] } },
    ]);
    expect(JSON.stringify(doc)).not.toContain('CONFIDENTIAL');
  });

  it('keeps footnote references and footnotes, without their back-links, the notes under a heading of their own', async () => {
    const body =
      '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Results</w:t></w:r></w:p>' +
      '<w:p><w:r><w:t>Claim</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r>' +
      '<w:r><w:t xml:space="preserve"> continues.</w:t></w:r></w:p>';
    const doc = await parseDocx({ bytes: zip(docxEntries(body)), source: 'notes.docx' });
    // Filed under "Notes", not under the last heading of the body, which the note may not annotate.
    expect(doc.sections).toEqual([
      { text: 'Results\n\nClaim[1] continues.', metadata: { headings: ['Results'] } },
      { text: 'Notes\n\n1. The source of the claim.', metadata: { headings: ['Notes'] } },
    ]);
  });

  it('reads a document beside a part over 1 MB, which is streamed when screened', async () => {
    const data = Buffer.from(randomBytes(3 * 2 ** 19).toString('base64'));
    const entries = docxEntries(paragraph('Still read.'), [{ name: 'word/big.xml', data }]);
    const doc = await parseDocx({ bytes: zip(entries), source: 'large-part.docx' });
    expect(doc.sections).toEqual([{ text: 'Still read.', metadata: {} }]);
  });

  it('warns about a document without text', async () => {
    const doc = await parseDocx({ bytes: zip(docxEntries('')), source: 'empty.docx' });
    expect(doc.sections).toEqual([]);
    expect(doc.warnings).toEqual(['empty.docx: the document has no text.']);
  });
});

describe('parseDocx refusals', () => {
  it('refuses a ZIP bomb by its compression ratio before inflating it', async () => {
    // 64 MB of zeros deflates to about 64 KB: a ratio near 1000:1.
    const bomb = docxEntries(paragraph('hi'), [
      { name: 'word/padding.xml', data: Buffer.alloc(64 * 2 ** 20) },
    ]);
    const refusal = parseDocx({ bytes: zip(bomb), source: 'bomb.docx' });
    await expect(refusal).rejects.toBeInstanceOf(InvalidDocument);
    await expect(refusal).rejects.toThrow(
      /^bomb\.docx: the \.docx entry word\/padding\.xml is compressed \d+:1, more than the 200:1 allowed/,
    );
  });

  it('refuses an archive whose entries declare more than the total uncompressed limit', async () => {
    const parse = createDocxParser({ limits: { maxUncompressedBytes: 100_000 } });
    const bytes = readFileSync(new URL('fake.docx', docs));
    await expect(parse({ bytes, source: 'big.docx' })).rejects.toThrow(
      /^big\.docx: the \.docx archive would unpack to more than 0 MB \(a ZIP bomb\?\)/,
    );
  });

  it('refuses an entry that inflates to more than its header declares', async () => {
    const entries = docxEntries(paragraph('hi'), [
      { name: 'word/liar.xml', data: Buffer.alloc(4 * 2 ** 20), declaredSize: 1000 },
    ]);
    const refusal = parseDocx({ bytes: zip(entries), source: 'liar.docx' });
    await expect(refusal).rejects.toBeInstanceOf(InvalidDocument);
    await expect(refusal).rejects.toThrow(/^liar\.docx: the \.docx archive is damaged: word\/liar\.xml: /);
  });

  it('refuses an entry that inflates to fewer bytes than its header declares', async () => {
    const entries = docxEntries(paragraph('hi'), [
      { name: 'word/short.xml', data: Buffer.alloc(1000, 'a'), declaredSize: 5000 },
    ]);
    await expect(parseDocx({ bytes: zip(entries), source: 'short.docx' })).rejects.toThrow(
      /^short\.docx: the \.docx archive is damaged: word\/short\.xml: it inflates to 1000 bytes, fewer than the 5000/,
    );
  });

  it('refuses a part over 1 MB (streamed, not inflated at once) that inflates to more than declared', async () => {
    // Random text compresses about 4:3, well within the ratio limit: only the declared size is wrong.
    const data = Buffer.from(randomBytes(3 * 2 ** 19).toString('base64'));
    const entries = docxEntries(paragraph('hi'), [
      { name: 'word/big.xml', data, declaredSize: 1.5 * 2 ** 20 },
    ]);
    const refusal = parseDocx({ bytes: zip(entries), source: 'big-liar.docx' });
    await expect(refusal).rejects.toBeInstanceOf(InvalidDocument);
    await expect(refusal).rejects.toThrow(/^big-liar\.docx: the \.docx archive is damaged: word\/big\.xml: /);
  });

  it('refuses a password-protected document (an encrypted package, or encrypted ZIP entries)', async () => {
    const header = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    const ole = Buffer.concat([
      header,
      Buffer.alloc(512),
      Buffer.from('EncryptedPackage', 'utf16le'),
      Buffer.alloc(512),
    ]);
    await expect(parseDocx({ bytes: ole, source: 'locked.docx' })).rejects.toBeInstanceOf(EncryptedDocument);
    const encrypted = docxEntries(paragraph('hi')).map((entry) => ({ ...entry, encrypted: true }));
    const refusal = parseDocx({ bytes: zip(encrypted), source: 'zipcrypto.docx' });
    await expect(refusal).rejects.toBeInstanceOf(EncryptedDocument);
    await expect(refusal).rejects.toThrow(/^zipcrypto\.docx: the document is encrypted/);
  });

  it('refuses a Word 97-2003 file and bytes that are not a ZIP, naming the file', async () => {
    const doc = Buffer.concat([
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
      Buffer.alloc(1024),
    ]);
    await expect(parseDocx({ bytes: doc, source: 'old.docx' })).rejects.toThrow(
      /^old\.docx: this is a Word 97-2003 \(\.doc\) file/,
    );
    const refusal = parseDocx({ bytes: Buffer.from('just some text'), source: 'text.docx' });
    await expect(refusal).rejects.toBeInstanceOf(InvalidDocument);
    await expect(refusal).rejects.toThrow(
      /^text\.docx: not a valid \.docx file: it is not a readable ZIP archive/,
    );
  });

  it('refuses a ZIP that holds no Word document', async () => {
    const bytes = zip([{ name: 'notes.txt', data: Buffer.from('hello') }]);
    await expect(parseDocx({ bytes, source: 'notes.docx' })).rejects.toThrow(
      /^notes\.docx: could not be read as a Word document/,
    );
  });
});

describe('screenDocxArchive', () => {
  it('screens a document without waiting for event-loop turns, so a file read ahead is ready for its worker', async () => {
    // yauzl's own buffer reader answers each read a turn later, and a turn of the ingesting thread can
    // wait behind the chunking and embedding of a whole file: 700 ms a DOCX in a mixed ingestion.
    let turns = 0;
    const tick = () => {
      turns++;
      if (turns < 100) setImmediate(tick);
    };
    setImmediate(tick);
    const properties = await screenDocxArchive(readFileSync(new URL('fake.docx', docs)), 'fake.docx');
    expect(turns).toBe(0);
    expect(properties).toEqual({ author: 'Mr. Miagi' });
  });
});
