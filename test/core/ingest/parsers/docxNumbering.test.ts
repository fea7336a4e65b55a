import { describe, expect, it } from 'vitest';
import { parseDocx } from '../../../../src/core/ingest/parsers/docx';
import { formatNumber } from '../../../../src/core/ingest/parsers/docxNumbering.mjs';
import { docxEntries, zip } from './docxBuild';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const xml = (text: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${text}`);

interface LevelSpec {
  format: string;
  text: string;
  start?: number;
  restart?: number;
  legal?: boolean;
  suffix?: string;
  style?: string;
}

function level(index: number, spec: LevelSpec): string {
  return (
    `<w:lvl w:ilvl="${index}"><w:start w:val="${spec.start ?? 1}"/><w:numFmt w:val="${spec.format}"/>` +
    (spec.restart === undefined ? '' : `<w:lvlRestart w:val="${spec.restart}"/>`) +
    (spec.style ? `<w:pStyle w:val="${spec.style}"/>` : '') +
    (spec.legal ? '<w:isLgl/>' : '') +
    (spec.suffix ? `<w:suff w:val="${spec.suffix}"/>` : '') +
    `<w:lvlText w:val="${spec.text}"/></w:lvl>`
  );
}

const abstractNum = (id: number, levels: LevelSpec[], extra = '') =>
  `<w:abstractNum w:abstractNumId="${id}">${extra}${levels.map((l, i) => level(i, l)).join('')}</w:abstractNum>`;
const num = (id: number, abstractId: number, overrides = '') =>
  `<w:num w:numId="${id}"><w:abstractNumId w:val="${abstractId}"/>${overrides}</w:num>`;

/** A paragraph with its own numbering (numId, level) and optionally a style. */
function item(text: string, numId?: number, ilvl?: number, style?: string, properties = ''): string {
  const numPr =
    numId === undefined
      ? ''
      : `<w:numPr>${ilvl === undefined ? '' : `<w:ilvl w:val="${ilvl}"/>`}<w:numId w:val="${numId}"/></w:numPr>`;
  const pStyle = style ? `<w:pStyle w:val="${style}"/>` : '';
  return `<w:p><w:pPr>${pStyle}${numPr}${properties}</w:pPr><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;
}

/** Paragraph styles: id → [name, numbering it sets (numId, level)?, basedOn?]. */
function styles(entries: [string, string, string?, string?][], numberingStyles = ''): string {
  return (
    `<w:styles xmlns:w="${W}"><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
    entries
      .map(([id, name, numPr, basedOn]) => {
        const based = basedOn ? `<w:basedOn w:val="${basedOn}"/>` : '';
        const pPr = numPr ? `<w:pPr><w:numPr>${numPr}</w:numPr></w:pPr>` : '';
        return `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/>${based}${pPr}</w:style>`;
      })
      .join('') +
    numberingStyles +
    '</w:styles>'
  );
}

async function text(body: string, numbering: string, stylesXml = styles([])): Promise<string> {
  const bytes = zip(
    docxEntries(body, [
      { name: 'word/styles.xml', data: xml(stylesXml) },
      { name: 'word/numbering.xml', data: xml(`<w:numbering xmlns:w="${W}">${numbering}</w:numbering>`) },
    ]),
  );
  const doc = await parseDocx({ bytes, source: 'numbered.docx' });
  return doc.sections.map((s) => s.text).join('\n\n');
}

const LETTERS_ROMAN: LevelSpec[] = [
  { format: 'lowerLetter', text: '(%1)' },
  { format: 'lowerRoman', text: '%2.' },
];

describe('Word list labels in DOCX text', () => {
  it('writes each item with its own label, nested levels restarting, numbering continuing past body text', async () => {
    const body =
      item('Payment is due monthly.', 1, 0) +
      item('By card.', 1, 1) +
      item('By transfer.', 1, 1) +
      item('Refunds follow the policy.', 1, 0) +
      item('Within 30 days.', 1, 1) +
      item('Some body text between the items.') +
      item('Disputes go to arbitration.', 1, 0);
    expect(await text(body, abstractNum(0, LETTERS_ROMAN) + num(1, 0))).toBe(
      '(a) Payment is due monthly.\ni. By card.\nii. By transfer.\n(b) Refunds follow the policy.\n' +
        'i. Within 30 days.\n\nSome body text between the items.\n\n(c) Disputes go to arbitration.',
    );
  });

  it('numbers headings whose style is in a list, and files the text under the numbered heading', async () => {
    const stylesXml = styles([
      ['Heading1', 'heading 1', '<w:numId w:val="3"/>'],
      ['Heading2', 'heading 2', '<w:ilvl w:val="1"/><w:numId w:val="3"/>'],
    ]);
    const numbering =
      abstractNum(2, [
        { format: 'decimal', text: '%1.', style: 'Heading1' },
        { format: 'decimal', text: '%1.%2', style: 'Heading2' },
      ]) + num(3, 2);
    const body =
      item('Scope', undefined, undefined, 'Heading1') +
      item('This agreement covers the services.') +
      item('Definitions', undefined, undefined, 'Heading2') +
      item('Terms', undefined, undefined, 'Heading2') +
      item('Fees', undefined, undefined, 'Heading1') +
      item('Late payment', undefined, undefined, 'Heading2') +
      item('Interest accrues at 1% a month.');
    const bytes = zip(
      docxEntries(body, [
        { name: 'word/styles.xml', data: xml(stylesXml) },
        { name: 'word/numbering.xml', data: xml(`<w:numbering xmlns:w="${W}">${numbering}</w:numbering>`) },
      ]),
    );
    const doc = await parseDocx({ bytes, source: 'contract.docx' });
    expect(doc.sections.map((s) => s.metadata?.headings)).toEqual([
      ['1. Scope'],
      ['1. Scope', '1.1 Definitions'],
      ['1. Scope', '1.2 Terms'],
      // A heading followed at once by its first subheading heads no section of its own.
      ['2. Fees', '2.1 Late payment'],
    ]);
    expect(doc.sections.at(-1)?.text).toBe('2. Fees\n\n2.1 Late payment\n\nInterest accrues at 1% a month.');
  });

  it('restarts an instance with a start override, and continues instances of one list that have none', async () => {
    const numbering =
      abstractNum(0, LETTERS_ROMAN) +
      num(1, 0) +
      num(2, 0) +
      num(3, 0, '<w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride>');
    const body =
      item('First.', 1, 0) +
      item('Second.', 1, 0) +
      item('Gap.') +
      item('Third, continued by another instance.', 2, 0) +
      item('Gap.') +
      item('Restarted.', 3, 0) +
      item('Then on.', 3, 0);
    expect(await text(body, numbering)).toBe(
      '(a) First.\n(b) Second.\n\nGap.\n\n(c) Third, continued by another instance.\n\nGap.\n\n' +
        '(a) Restarted.\n(b) Then on.',
    );
  });

  it('follows lvlRestart, isLgl, the suffix, formats and text around the number', async () => {
    const numbering =
      abstractNum(0, [
        { format: 'upperRoman', text: 'Article %1', suffix: 'space' },
        // isLgl: every number of the label in decimal, the Roman article's too.
        { format: 'decimalZero', text: '%1.%2', legal: true, restart: 0 },
        { format: 'upperLetter', text: '%3', suffix: 'nothing' },
      ]) + num(1, 0);
    const body =
      item('General', 1, 0) +
      item('Purpose.', 1, 1) +
      item('Sub.', 1, 2) +
      item('Duties', 1, 0) +
      item('Never restarted, in decimal.', 1, 1);
    expect(await text(body, numbering)).toBe(
      'Article I General\n1.1 Purpose.\nASub.\nArticle II Duties\n2.2 Never restarted, in decimal.',
    );
  });

  it('reads a list defined through a numbering style, a level naming the paragraph style, and basedOn', async () => {
    const numberingStyle =
      '<w:style w:type="numbering" w:styleId="LegalList"><w:name w:val="Legal List"/>' +
      '<w:pPr><w:numPr><w:numId w:val="7"/></w:numPr></w:pPr></w:style>';
    const stylesXml = styles(
      [
        ['Clause', 'Clause', '<w:numId w:val="8"/>'],
        ['ClauseBold', 'Clause Bold', undefined, 'Clause'],
        ['Step', 'Step'],
      ],
      numberingStyle,
    );
    const numbering =
      abstractNum(6, [{ format: 'decimal', text: 'Clause %1:' }]) +
      abstractNum(5, [], '<w:numStyleLink w:val="LegalList"/>') +
      num(7, 6) +
      num(8, 5) +
      abstractNum(9, [{ format: 'ordinal', text: '%1 step', style: 'Step' }]) +
      num(10, 9);
    const body =
      item('Linked through the style.', undefined, undefined, 'Clause') +
      item('Inherited from the base style.', undefined, undefined, 'ClauseBold') +
      item('Named by the level.', undefined, undefined, 'Step') +
      item('Named again.', undefined, undefined, 'Step');
    // mammoth makes list items only of the last two (a level names their style): the others are
    // paragraphs, with their labels all the same.
    expect(await text(body, numbering, stylesXml)).toBe(
      'Clause 1: Linked through the style.\n\nClause 2: Inherited from the base style.\n\n' +
        '1st step Named by the level.\n2nd step Named again.',
    );
  });

  it('labels nothing for numId 0, a hidden paragraph mark or a bullet, and counts no hidden item', async () => {
    const stylesXml = styles([['Heading1', 'heading 1', '<w:numId w:val="1"/>']]);
    const numbering =
      abstractNum(0, [{ format: 'decimal', text: '%1.' }]) +
      num(1, 0) +
      abstractNum(1, [{ format: 'bullet', text: '•' }]) +
      num(2, 1);
    const body =
      item('Numbered heading', undefined, undefined, 'Heading1') +
      item('Unnumbered heading', 0, 0, 'Heading1') +
      item('Hidden item', 1, 0, undefined, '<w:rPr><w:vanish/></w:rPr>') +
      item('Second numbered heading', undefined, undefined, 'Heading1') +
      item('A bullet.', 2, 0) +
      item('Another.', 2, 0);
    expect(await text(body, numbering, stylesXml)).toBe(
      '1. Numbered heading\n\nUnnumbered heading\n\nHidden item\n\n2. Second numbered heading\n\n- A bullet.\n- Another.',
    );
  });

  it('counts items in table cells where they stand', async () => {
    const cell = (content: string) => `<w:tc>${content}</w:tc>`;
    const body =
      item('Before the table.', 1, 0) +
      `<w:tbl><w:tr>${cell(item('In a cell.', 1, 0))}${cell(item('Beside it.', 1, 0))}</w:tr></w:tbl>` +
      item('After the table.', 1, 0);
    const out = await text(body, abstractNum(0, LETTERS_ROMAN) + num(1, 0));
    expect(out).toContain('(a) Before the table.');
    expect(out.indexOf('(b) In a cell.')).toBeGreaterThan(0);
    expect(out.indexOf('(c) Beside it.')).toBeGreaterThan(out.indexOf('(b) In a cell.'));
    expect(out).toContain('(d) After the table.');
  });
});

describe('formatNumber (w:numFmt)', () => {
  it('writes the Latin-script formats as Word does', () => {
    const cases: [number, string, string][] = [
      [7, 'decimal', '7'],
      [7, 'decimalZero', '07'],
      [12, 'decimalZero', '12'],
      [7, 'decimalFullWidth', '７'],
      [1994, 'upperRoman', 'MCMXCIV'],
      [4, 'lowerRoman', 'iv'],
      [1, 'lowerLetter', 'a'],
      [26, 'lowerLetter', 'z'],
      [27, 'upperLetter', 'AA'],
      [54, 'lowerLetter', 'bbb'],
      [1, 'ordinal', '1st'],
      [12, 'ordinal', '12th'],
      [22, 'ordinal', '22nd'],
      [113, 'ordinal', '113th'],
      [21, 'cardinalText', 'Twenty-one'],
      [140, 'cardinalText', 'One hundred forty'],
      [3, 'ordinalText', 'Third'],
      [20, 'ordinalText', 'Twentieth'],
      [112, 'ordinalText', 'One hundred twelfth'],
      [3, 'decimalEnclosedParen', '(3)'],
      [3, 'decimalEnclosedCircle', '③'],
      [21, 'decimalEnclosedCircle', '21'],
      [3, 'none', ''],
      [0, 'lowerRoman', '0'],
      [5, 'chineseCounting', '5'],
    ];
    for (const [n, format, expected] of cases)
      expect(formatNumber(n, format), `${n} ${format}`).toBe(expected);
  });
});
