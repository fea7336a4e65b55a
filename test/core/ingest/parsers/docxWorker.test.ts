import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import { describe, expect, it } from 'vitest';
import {
  convertDocx,
  readDocxXml,
  readXmlString,
  rewriteForMammoth,
} from '../../../../src/core/ingest/parsers/docxWorker.mjs';
import { seededRandom } from '../../../helpers/seeded';
import { docxEntries, paragraph, zip } from './docxBuild';

const require = createRequire(import.meta.url);
type ReadString = (xml: string, namespaces?: Record<string, string>) => Promise<unknown>;
/** mammoth's own reader (xmldom), which the worker's replaces. */
const xmldomReadString = (require('mammoth/lib/xml/reader.js') as { readString: ReadString }).readString;
const mammothXml = require('mammoth/lib/xml/index.js') as { readString: ReadString };
const mammoth = require('mammoth') as {
  convertToHtml(input: { buffer: Buffer }): Promise<{ value: string; messages: unknown[] }>;
};

const FIXTURES = new URL('../../../../../shared/fixtures/docs/', import.meta.url);
/** The namespaces mammoth maps to prefixes when it reads a document (a part of its map is enough here). */
const NAMESPACES = {
  'http://schemas.openxmlformats.org/wordprocessingml/2006/main': 'w',
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships': 'r',
  'http://schemas.openxmlformats.org/drawingml/2006/main': 'a',
  'http://schemas.openxmlformats.org/markup-compatibility/2006': 'mc',
};

const docxFixtures = () =>
  readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.docx') && name !== 'fake.docx')
    .map((name) => ({ name, bytes: readFileSync(new URL(name, FIXTURES)) }));

/** Every XML part of a DOCX archive, by name. */
async function xmlParts(bytes: Buffer): Promise<Map<string, string>> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    fromBuffer(bytes, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))),
  );
  const parts = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: Entry) => {
      if (!/\.(xml|rels)$/.test(entry.fileName)) return zip.readEntry();
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          parts.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return parts;
}

async function outcome(read: ReadString, xml: string): Promise<unknown> {
  try {
    return { tree: await read(xml, NAMESPACES) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('readXmlString (mammoth without xmldom)', () => {
  it('reads every XML part of every DOCX fixture into the tree xmldom gives', async () => {
    const fixtures = docxFixtures();
    expect(fixtures.length).toBeGreaterThanOrEqual(3);
    let parts = 0;
    for (const { name, bytes } of fixtures) {
      for (const [part, xml] of await xmlParts(bytes)) {
        expect(await readXmlString(xml, NAMESPACES), `${name} ${part}`).toEqual(
          await xmldomReadString(xml, NAMESPACES),
        );
        parts++;
      }
    }
    expect(parts).toBeGreaterThan(20);
  });

  it('splits text where xmldom does, at comments, processing instructions and CDATA, and decodes alike', async () => {
    const cases = [
      '<w:p xmlns:w="urn:w">a<!--note-->b<?pi data?>c<![CDATA[dropped]]>d</w:p>',
      '<w:p xmlns:w="urn:w">one &amp; two &lt;&gt; &#x41;&#66; &quot;&apos;<w:br/>line\r\nend</w:p>',
      '<w:p xmlns:w="urn:w" w:a="x\r\ny\tz" plain="&#10;"><w:t xml:space="preserve">  spaced  </w:t>  </w:p>',
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<root xmlns="urn:default" xmlns:q="urn:q"><q:x q:y="1"/></root>\n',
      '\ufeff<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>',
    ];
    for (const xml of cases)
      expect(await outcome(readXmlString, xml), xml).toEqual(await outcome(xmldomReadString, xml));
  });

  it('leaves XML that saxes refuses to xmldom: the same tree where xmldom is lenient, the same error where not', async () => {
    const lenient = '<w:p xmlns:w="urn:w"><u:run/>\u0001</w:p>'; // an unbound prefix, a control character
    expect(await outcome(readXmlString, lenient)).toEqual(await outcome(xmldomReadString, lenient));
    expect(await readXmlString(lenient)).toMatchObject({ name: '{urn:w}p' });
    for (const broken of ['<w:p xmlns:w="urn:w">&nbsp;</w:p>', '', '<a/><b/>', '<a><b></a>']) {
      const expected = await outcome(xmldomReadString, broken);
      expect(expected, broken).toHaveProperty('error');
      expect(await outcome(readXmlString, broken), broken).toEqual(expected);
    }
  });

  it('gives the tree xmldom gives for seeded WordprocessingML with entities, comments and odd spacing', async () => {
    const { between, pick } = seededRandom(23);
    const texts = [
      'plain',
      ' lead',
      'trail ',
      '&amp;',
      '&lt;b&gt;',
      '&#233;t&#xE9;',
      'é ü ß 漢字',
      '\r\n',
      '\t',
      '  ',
    ];
    const inlines = [
      () => `<w:r><w:t xml:space="preserve">${pick(texts)}${pick(texts)}</w:t></w:r>`,
      () => `<w:r><w:t>${pick(texts)}</w:t><w:tab/></w:r>`,
      () => `<!-- ${pick(['c', 'x y'])} -->`,
      () => `<w:r><w:rPr><w:b w:val="${pick(['0', '1', 'true'])}"/></w:rPr><w:t>${pick(texts)}</w:t></w:r>`,
      () => `<w:hyperlink r:id="rId${between(1, 9)}"><w:r><w:t>${pick(texts)}</w:t></w:r></w:hyperlink>`,
      () =>
        `<mc:AlternateContent><mc:Choice Requires="x"><w:r/></mc:Choice><mc:Fallback>${pick(texts)}</mc:Fallback></mc:AlternateContent>`,
      () => pick(texts),
    ];
    for (let doc = 0; doc < 200; doc++) {
      const paragraphs: string[] = [];
      for (let p = between(0, 6); p > 0; p--) {
        const runs = Array.from({ length: between(0, 5) }, () => pick(inlines)());
        const style = between(0, 2) === 0 ? `<w:pPr><w:pStyle w:val="Heading${between(1, 3)}"/></w:pPr>` : '';
        paragraphs.push(`<w:p>${style}${runs.join(pick(['', ' ', '\n']))}</w:p>`);
      }
      const xml =
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${pick(['', '\n', '\r\n'])}` +
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" ' +
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">' +
        `<w:body>${paragraphs.join(pick(['', '\n  ']))}</w:body></w:document>`;
      expect(await outcome(readXmlString, xml), xml).toEqual(await outcome(xmldomReadString, xml));
    }
  });

  it('keeps the tree of a styles or numbering part for the next document with the same part, and only those', async () => {
    const [fixture] = docxFixtures();
    const parts = await xmlParts(fixture!.bytes);
    const styles = parts.get('word/styles.xml')!;
    const document = parts.get('word/document.xml')!;
    const first = await readXmlString(styles, NAMESPACES);
    expect(await readXmlString(styles, NAMESPACES)).toBe(first);
    expect(first).toEqual(await xmldomReadString(styles, NAMESPACES));
    // Another namespace map gives other names: not the kept tree.
    const otherMap = { 'http://schemas.openxmlformats.org/wordprocessingml/2006/main': 'x' };
    const renamed = await readXmlString(styles, otherMap);
    expect(renamed).toMatchObject({ name: 'x:styles' });
    expect(renamed).toEqual(await xmldomReadString(styles, otherMap));
    // A document part is read each time (it is a document's own).
    expect(await readXmlString(document, NAMESPACES)).not.toBe(await readXmlString(document, NAMESPACES));
    const numbering =
      '<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:num w:numId="1"/></w:numbering>';
    expect(await readXmlString(numbering, NAMESPACES)).toBe(await readXmlString(numbering, NAMESPACES));
  });

  it('keeps the parts of documents from several templates in turn: 16 parts, 4 M characters of XML', async () => {
    const styles = (template: number, chars: number) =>
      `<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:styleId="t${template}"/>${'<w:x/>'.repeat(Math.floor(chars / 6))}</w:styles>`;
    const numbering = (template: number) =>
      `<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:num w:numId="${template}"/></w:numbering>`;
    const read = (xml: string) => readXmlString(xml, NAMESPACES);

    // Eight templates' styles and numbering, read in turn: all 16 parts stay kept.
    const parts = Array.from({ length: 8 }, (_, t) => [styles(t, 20_000), numbering(t)]).flat();
    const trees = [];
    for (const xml of parts) trees.push(await read(xml));
    for (let round = 0; round < 2; round++) {
      for (const [i, xml] of parts.entries()) expect(await read(xml), `part ${i}`).toBe(trees[i]);
    }
    // A 17th part: the least recently used goes.
    await read(numbering(99));
    expect(await read(parts[0]!)).not.toBe(trees[0]);
    expect(await read(parts[15]!)).toBe(trees[15]);

    // Four parts of 900,000 characters fit in 4 M; a fifth pushes out the oldest, though only 5 are kept.
    const large = Array.from({ length: 5 }, (_, t) => styles(100 + t, 900_000));
    const largeTrees = [];
    for (const xml of large.slice(0, 4)) largeTrees.push(await read(xml));
    for (const [i, xml] of large.slice(0, 4).entries()) expect(await read(xml)).toBe(largeTrees[i]);
    await read(large[4]!);
    expect(await read(large[1]!)).toBe(largeTrees[1]);
    expect(await read(large[0]!)).not.toBe(largeTrees[0]);
  });

  it('is the reader mammoth uses once the worker is loaded, and mammoth converts every fixture as with xmldom', async () => {
    expect(mammothXml.readString).toBe(readDocxXml);
    for (const { name, bytes } of docxFixtures()) {
      // Twice: the second time from the styles and numbering trees kept the first time.
      expect(await mammoth.convertToHtml({ buffer: bytes }), name).toEqual(
        await mammoth.convertToHtml({ buffer: bytes }),
      );
      const withSaxes = await mammoth.convertToHtml({ buffer: bytes });
      mammothXml.readString = xmldomReadString;
      try {
        expect(withSaxes, name).toEqual(await mammoth.convertToHtml({ buffer: bytes }));
      } finally {
        mammothXml.readString = readDocxXml;
      }
      expect(withSaxes.value.length, name).toBeGreaterThan(100);
    }
  });

  it('is called by mammoth for every part it reads (mammoth looks the reader up at each call)', async () => {
    const parts: string[] = [];
    mammothXml.readString = (xml, namespaces) => {
      parts.push(xml.slice(0, 200));
      return readXmlString(xml, namespaces);
    };
    try {
      const [fixture] = docxFixtures();
      await mammoth.convertToHtml({ buffer: fixture!.bytes });
    } finally {
      mammothXml.readString = readDocxXml;
    }
    expect(parts.some((xml) => xml.includes('<w:document'))).toBe(true);
    expect(parts.some((xml) => xml.includes('<w:styles'))).toBe(true);
  });
});

describe('rewriteForMammoth (the text Word shows, in elements mammoth reads)', () => {
  it('leaves a tree it rewrote as it is, and the styles and numbering parts of the fixtures untouched', async () => {
    const xml =
      '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ' +
      'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" ' +
      'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>' +
      '<w:p><w:fldSimple w:instr=" DATE "><w:fldSimple w:instr=" REF x "><w:r><w:t>a</w:t></w:r></w:fldSimple></w:fldSimple>' +
      '<w:r><w:t>b</w:t><w:br w:type="page"/><w:cr/><w:ptab/><w:sym w:char="2192"/></w:r>' +
      '<w:r><w:ruby><w:rt><w:r><w:t>c</w:t></w:r></w:rt><w:rubyBase><w:r><w:t>d</w:t></w:r></w:rubyBase></w:ruby></w:r>' +
      '<m:oMath><m:r><w:rPr><w:vanish/></w:rPr><m:t>e</m:t></m:r><m:r><m:t>f</m:t></m:r></m:oMath>' +
      '<mc:AlternateContent><mc:Choice Requires="x"><w:r><w:t>g</w:t></w:r></mc:Choice></mc:AlternateContent></w:p>' +
      '<m:oMathPara><m:oMath><m:r><m:t>h</m:t></m:r></m:oMath></m:oMathPara></w:body></w:document>';
    const once = rewriteForMammoth(await readXmlString(xml, NAMESPACES));
    expect(rewriteForMammoth(rewriteForMammoth(await readXmlString(xml, NAMESPACES)))).toEqual(once);
    expect(once).not.toEqual(await readXmlString(xml, NAMESPACES));
    let parts = 0;
    for (const { name, bytes } of docxFixtures()) {
      for (const [part, partXml] of await xmlParts(bytes)) {
        if (!/^word\/(styles|numbering)\.xml$/.test(part)) continue;
        const tree = await xmldomReadString(partXml, NAMESPACES);
        expect(rewriteForMammoth(structuredClone(tree) as never), `${name} ${part}`).toEqual(tree);
        parts++;
      }
    }
    expect(parts).toBeGreaterThanOrEqual(3);
  });

  it('names the elements whose text was left out of each document, when several are converted at once', async () => {
    const lossy = zip(
      docxEntries(
        '<w:p><x:note xmlns:x="urn:example:ext"><w:r><w:t>unread</w:t></w:r></x:note></w:p><w:altChunk r:id="rIdChunk"/>',
      ),
    );
    // Elements mammoth ignores that hold no text lose nothing.
    const whole = zip(
      docxEntries(
        `${paragraph('All read.')}<w:p><w:permStart w:id="1"/><x:mark xmlns:x="urn:example:ext"/></w:p>`,
      ),
    );
    const symbol = zip(docxEntries('<w:p><w:r><w:sym w:font="Segoe UI Symbol" w:char="F0E8"/></w:r></w:p>'));
    const results = await Promise.all(
      [lossy, whole, symbol, lossy, whole].map((bytes) => convertDocx(bytes)),
    );
    expect(results.map((r) => r.leftOut)).toEqual([
      ['w:altChunk', '{urn:example:ext}note'],
      [],
      ['w:sym'],
      ['w:altChunk', '{urn:example:ext}note'],
      [],
    ]);
    expect(results[1]!.value).toBe('<p>All read.</p>');
  });
});
