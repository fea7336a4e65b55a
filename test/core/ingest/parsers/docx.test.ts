import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EncryptedDocument, InvalidDocument } from '../../../../src/core/ingest/errors';
import { createDocxParser, parseDocx } from '../../../../src/core/ingest/parsers/docx';
import { screenDocxArchive } from '../../../../src/core/ingest/parsers/docxArchive';
import type { ParsedDocument } from '../../../../src/core/ingest/types';
import { docxEntries, paragraph, zip } from './docxBuild';

const docs = new URL('../shared/fixtures/docs/', new URL('../../../../', import.meta.url));

async function parseFixture(name: string): Promise<ParsedDocument> {
  return parseDocx({ bytes: readFileSync(new URL(name, docs)), source: name });
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

  it("writes list items one per line, each with Word's label", async () => {
    const text = (await parseFixture('example-list-items-multiple.docx')).sections
      .map((s) => s.text)
      .join('\n\n');
    expect(text).toContain(
      'Lorem Ipsum\n\n- This is simply dummy text of the printing and typesetting industry.\n' +
        '- This is simply dummy text of the printing and typesetting industry.',
    );
    // The fixture's lists are numbered "%1)", "%2)" in lowerLetter, "%3)" in lowerRoman, "(%4)", "(%5)".
    expect(text).toContain(
      '1) This is simply dummy text of the printing and typesetting industry.\n' +
        '2) This is simply dummy text of the printing and typesetting industry.\n' +
        'a) The quick brown fox jumps over the lazy dog.\nb) The quick brown fox jumps over the lazy dog.',
    );
    expect(text).toContain(
      'i) Trying various lists.\nii) Trying various lists.\n(1) Trying more lists.\n' +
        '(a) This is simply dummy text of the printing and typesetting industry.',
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

describe('parseDocx keeps the text mammoth drops', () => {
  const run = (text: string, properties = '') =>
    `<w:r>${properties ? `<w:rPr>${properties}</w:rPr>` : ''}<w:t xml:space="preserve">${text}</w:t></w:r>`;
  const p = (...content: string[]) => `<w:p>${content.join('')}</w:p>`;
  const parse = async (body: string, source = 'built.docx') =>
    parseDocx({ bytes: zip(docxEntries(body)), source });
  const textOf = (doc: ParsedDocument) => doc.sections.map((s) => s.text).join('\n\n');

  it("keeps a simple field's displayed result, also inside a hyperlink, a smart tag, a tracked change and a table", async () => {
    const field = (instruction: string, content: string) =>
      `<w:fldSimple w:instr="${instruction}">${content}</w:fldSimple>`;
    const body =
      p(run('Total due: '), field(' MERGEFIELD amount ', run('1,250 EUR')), run(' by Friday.')) +
      p(
        run('See '),
        `<w:hyperlink w:anchor="terms">${field(' REF terms \\h ', run('Section 4'))}</w:hyperlink>`,
        run(' of '),
        `<w:smartTag w:uri="urn:x" w:element="company">${field(' DOCPROPERTY Client ', run('Acme Ltd'))}</w:smartTag>`,
        run('.'),
      ) +
      p(
        run('Signed '),
        `<w:ins w:id="1" w:author="A">${field(' DATE ', run('1 May 2026'))}</w:ins>`,
        `<w:del w:id="2" w:author="A">${field(' DATE ', '<w:r><w:delText>30 April 2026</w:delText></w:r>')}</w:del>`,
        field(
          ' USERNAME ',
          `<w:fldData>AAAA</w:fldData>${run(' by ')}${run('a hidden name', '<w:vanish/>')}${run('Ada')}`,
        ),
        // A complex field, which mammoth already read, beside them.
        run(', ref '),
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> SEQ Ref </w:instrText></w:r>',
        `<w:r><w:fldChar w:fldCharType="separate"/></w:r>${run('7')}<w:r><w:fldChar w:fldCharType="end"/></w:r>`,
        run('.'),
      ) +
      '<w:tbl><w:tr><w:tc>' +
      p(run('Pages')) +
      '</w:tc><w:tc>' +
      p(field(' NUMPAGES ', run('12'))) +
      '</w:tc></w:tr><w:tr><w:tc>' +
      p(run('Words')) +
      '</w:tc><w:tc>' +
      p(field(' NUMWORDS ', run('3,400'))) +
      '</w:tc></w:tr></w:tbl>';
    const doc = await parse(body);
    expect(textOf(doc)).toBe(
      [
        'Total due: 1,250 EUR by Friday.',
        'See Section 4 of Acme Ltd.',
        'Signed 1 May 2026 by Ada, ref 7.',
        'Pages | 12\nWords | 3,400',
      ].join('\n\n'),
    );
    expect(doc.warnings).toBeUndefined();
  });

  it('keeps Office Math as the text of its runs, in place, inline or as a paragraph of its own', async () => {
    const math = (...runs: string[]) => `<m:oMath>${runs.join('')}</m:oMath>`;
    const mr = (text: string, properties = '') =>
      `<m:r>${properties ? `<w:rPr>${properties}</w:rPr>` : ''}<m:t>${text}</m:t></m:r>`;
    const superscript = (base: string, exponent: string) =>
      '<m:sSup><m:sSupPr><m:ctrlPr><w:rPr><w:i/></w:rPr></m:ctrlPr></m:sSupPr>' +
      `<m:e>${mr(base)}</m:e><m:sup>${mr(exponent)}</m:sup></m:sSup>`;
    const body =
      p(run('Energy: '), math(mr('E=m'), superscript('c', '2')), run(' holds.')) +
      // A display equation of two lines, its paragraph's own.
      p(
        '<m:oMathPara><m:oMathParaPr><m:jc m:val="center"/></m:oMathParaPr>' +
          math(
            '<m:f><m:fPr><m:type m:val="lin"/></m:fPr>',
            `<m:num>${mr('a')}</m:num><m:den>${mr('b')}</m:den></m:f>`,
          ) +
          math(mr('c'), mr('=d')) +
          '</m:oMathPara>',
      ) +
      // One straight in the body, as a block; tracked changes and hidden runs inside it as elsewhere.
      `<m:oMathPara>${math(
        mr('x'),
        `<w:ins w:id="1" w:author="A">${mr('+1')}</w:ins>`,
        `<w:del w:id="2" w:author="A">${mr('-1')}</w:del>`,
        mr('+hidden', '<w:vanish/>'),
        `<w:hyperlink w:anchor="eq">${mr('=y')}</w:hyperlink>`,
      )}</m:oMathPara>` +
      p(run('After the math.'));
    expect(textOf(await parse(body))).toBe(
      ['Energy: E=mc2 holds.', 'ab\nc=d', 'x+1=y', 'After the math.'].join('\n\n'),
    );
  });

  it('reads page breaks, column breaks and carriage returns as line breaks', async () => {
    const body =
      p('<w:r><w:t>End of chapter one</w:t><w:br w:type="page"/><w:t>Start of chapter two</w:t></w:r>') +
      p(run('Left column'), '<w:r><w:br w:type="column"/></w:r>', run('Right column')) +
      p('<w:r><w:t>Before carriage</w:t><w:cr/><w:t>After carriage</w:t></w:r>') +
      p('<w:r><w:t>A line</w:t><w:br/><w:t>and the next</w:t></w:r>') +
      p('<w:r><w:br w:type="page"/></w:r>') +
      '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Part</w:t><w:br w:type="page"/><w:t>Two</w:t></w:r></w:p>' +
      p(run('Its text.'));
    const doc = await parse(body);
    expect(doc.sections).toEqual([
      {
        text:
          'End of chapter one\nStart of chapter two\n\nLeft column\nRight column\n\n' +
          'Before carriage\nAfter carriage\n\nA line\nand the next',
        metadata: {},
      },
      { text: 'Part Two\n\nIts text.', metadata: { headings: ['Part Two'] } },
    ]);
  });

  it('keeps bidi containers, ruby with its guide, positional tabs and symbols of Unicode fonts', async () => {
    const ruby = (base: string, guide: string) =>
      '<w:r><w:rPr><w:b/></w:rPr><w:ruby><w:rubyPr><w:rubyAlign w:val="distributeSpace"/></w:rubyPr>' +
      `<w:rt>${run(guide)}</w:rt><w:rubyBase>${run(base)}</w:rubyBase></w:ruby></w:r>`;
    const body =
      p(
        run('Name: '),
        `<w:dir w:val="rtl">${run('שלום')}</w:dir>`,
        run(', code '),
        `<w:bdo w:val="ltr">${run('AB-12')}</w:bdo>`,
        run(', place '),
        // Containers mammoth already read.
        `<w:smartTag w:uri="urn:x" w:element="place">${run('Paris')}</w:smartTag>`,
        `<w:customXml w:element="note">${run(' (HQ)')}</w:customXml>`,
      ) +
      p(ruby('漢字', 'かんじ'), run('を'), ruby('読', ''), run('む')) +
      p(
        '<w:r><w:t>Left</w:t><w:ptab w:relativeTo="margin" w:alignment="right" w:leader="none"/><w:t>Right</w:t></w:r>',
      ) +
      p(
        run('Caf'),
        '<w:r><w:sym w:font="Arial" w:char="00E9"/></w:r>',
        run(' done '),
        '<w:r><w:sym w:font="Wingdings" w:char="F0FC"/></w:r>',
        run(' '),
        '<w:r><w:sym w:font="Segoe UI Emoji" w:char="1F600"/></w:r>',
        run(' '),
        '<w:r><w:sym w:char="2192"/></w:r>',
      );
    const doc = await parse(body);
    expect(textOf(doc)).toBe(
      [
        'Name: שלום, code AB-12, place Paris (HQ)',
        '漢字(かんじ)を読む',
        'Left Right',
        'Café done ✓ 😀 →',
      ].join('\n\n'),
    );
    expect(doc.warnings).toBeUndefined();
  });

  it('reads a DrawingML text box without its VML fallback, and a choice without a fallback', async () => {
    const shape = (text: string) =>
      `<wps:wsp><wps:txbx><w:txbxContent>${p(run(text))}</w:txbxContent></wps:txbx></wps:wsp>`;
    const drawing = (graphic: string) =>
      '<w:drawing><wp:anchor><wp:docPr id="1" name="Shape"/><a:graphic>' +
      `<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">${graphic}</a:graphicData>` +
      '</a:graphic></wp:anchor></w:drawing>';
    const body =
      p(run('Body text.'), `<w:r>${drawing(shape('A callout.'))}</w:r>`) +
      p(
        run('Grouped:'),
        `<w:r>${drawing(`<wpg:wgp>${shape('First box.')}${shape('Second box.')}</wpg:wgp>`)}</w:r>`,
      ) +
      // Word's own text box: the drawing and its VML fallback, read once.
      p(
        run('Word box:'),
        '<w:r><mc:AlternateContent><mc:Choice Requires="wps">' +
          drawing(shape('Box text.')) +
          '</mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent>' +
          p(run('Box text.')) +
          '</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>',
      ) +
      p(
        run('Choice: '),
        '<mc:AlternateContent><mc:Choice Requires="w14">',
        run('only here'),
        '</mc:Choice></mc:AlternateContent>',
      );
    expect(textOf(await parse(body))).toBe(
      [
        'Body text.',
        'A callout.',
        'Grouped:',
        'First box.',
        'Second box.',
        'Word box:',
        'Box text.',
        'Choice: only here',
      ].join('\n\n'),
    );
  });

  it('warns naming the elements whose text is still left out, and only those', async () => {
    const body =
      p(run('Kept. '), '<w:r><w:sym w:font="Segoe UI Symbol" w:char="F0E8"/></w:r>') +
      '<w:altChunk r:id="rIdChunk"/>' +
      p(run('Extension: '), '<x:note xmlns:x="urn:example:ext">', run('in an unknown element'), '</x:note>') +
      p(
        '<w:permStart w:id="1"/>',
        run('Permitted.'),
        '<w:permEnd w:id="1"/>',
        '<x:mark xmlns:x="urn:example:ext"/>',
      );
    const doc = await parse(body, 'lossy.docx');
    expect(textOf(doc)).toBe('Kept.\n\nExtension:\n\nPermitted.');
    expect(doc.warnings).toEqual([
      'lossy.docx: some text was left out, in elements the Word reader cannot read: ' +
        'w:sym (a character of a symbol font with no Unicode equivalent), ' +
        'w:altChunk (content imported from another file), {urn:example:ext}note.',
    ]);
  });

  it('reads a document with a symbol that names no font (mammoth threw on it)', async () => {
    const body = p(
      run('Arrow '),
      '<w:r><w:sym w:char="2192"/></w:r>',
      run(' and '),
      '<w:r><w:sym w:char="F0E8"/></w:r>',
    );
    const doc = await parse(body, 'fontless.docx');
    expect(textOf(doc)).toBe('Arrow → and');
    expect(doc.warnings).toEqual([
      'fontless.docx: some text was left out, in elements the Word reader cannot read: ' +
        'w:sym (a character of a symbol font with no Unicode equivalent).',
    ]);
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
