// Word documents built by hand for the DOCX tests: a ZIP writer and the parts of a minimal document.
import { buildZip } from '../../../hardening/forgeZip';

export interface ZipEntry {
  name: string;
  data: Buffer;
  /** Uncompressed size written in the headers, when it should lie. */
  declaredSize?: number;
  encrypted?: boolean;
}

/** A deflated ZIP built by hand (test/hardening/forgeZip.ts), so tests can build bombs and damaged archives. */
export function zip(entries: ZipEntry[]): Buffer {
  return buildZip(
    entries.map(({ encrypted, ...entry }) => ({ ...entry, flags: encrypted ? 1 : 0 })), // bit 0: encrypted
  );
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
/** The other namespaces built bodies use: Office Math, markup compatibility, drawings, VML. */
const NAMESPACES = [
  'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"',
  'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"',
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"',
  'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"',
  'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"',
  'xmlns:wpg="http://schemas.microsoft.com/office/word/2010/wordprocessingGroup"',
  'xmlns:v="urn:schemas-microsoft-com:vml"',
].join(' ');

export function paragraph(text: string, style?: string): string {
  const properties = style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : '';
  return `<w:p>${properties}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
}

/**
 * A minimal Word document: body paragraphs, a page header, and core properties; `extra` parts named
 * word/styles.xml or word/numbering.xml are related to the document as its styles and numbering.
 */
export function docxEntries(body: string, extra: ZipEntry[] = []): ZipEntry[] {
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
        `<w:document xmlns:w="${W}" xmlns:r="${R}" ${NAMESPACES}><w:body>${body}` +
          '<w:sectPr><w:headerReference w:type="default" r:id="rIdHeader"/></w:sectPr></w:body></w:document>',
      ),
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: xml(
        `<Relationships xmlns="${REL}"><Relationship Id="rIdHeader" Type="${R}/header" Target="header1.xml"/>` +
          `<Relationship Id="rIdNotes" Type="${R}/footnotes" Target="footnotes.xml"/>` +
          // The document's styles and numbering, when the test supplies them.
          ['styles', 'numbering']
            .filter((part) => extra.some((entry) => entry.name === `word/${part}.xml`))
            .map((part) => `<Relationship Id="rId-${part}" Type="${R}/${part}" Target="${part}.xml"/>`)
            .join('') +
          '</Relationships>',
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
