import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { decodeText, decodeTextInTurns } from '../../../src/core/ingest/decode';
import { EventLoopTurns } from '../../../src/core/ingest/eventLoopTurns';
import { parseDocument } from '../../../src/core/ingest/parse';

const CP1252_LINE = 'Café “quoted” – naïve €5 Straße';

const textOf = (doc: { sections: { text: string }[] }) => doc.sections.map((s) => s.text).join('\n\n');

describe('decodeText: undeclared legacy charsets', () => {
  it('reads windows-1252 as windows-1252 where a guess only ties it or beats it by a little ("naďve")', async () => {
    // The line alone ties windows-1250 (36 each); under these headings windows-1250 scores 38 to 29 and
    // 40 to 32, though it reads only "ï" differently.
    for (const text of [CP1252_LINE, `# Doc\n\n${CP1252_LINE}\n`, `# Test file\n\n${CP1252_LINE}\n`]) {
      const bytes = iconv.encode(text, 'windows-1252');
      expect(decodeText(bytes)).toBe(text);
      expect(await decodeTextInTurns(bytes, new EventLoopTurns())).toBe(text);
    }
    const markdown = iconv.encode(`# Doc\n\n${CP1252_LINE}\n`, 'windows-1252');
    const doc = await parseDocument('markdown', { bytes: markdown, source: 'cp1252.md' });
    expect(textOf(doc)).toBe(`Doc\n\n${CP1252_LINE}`);
  });

  it('still reads text that is really in another charset as that charset', () => {
    const texts: [string, string][] = [
      ['windows-1251', 'Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России.'],
      ['windows-1251', 'Привет'],
      // windows-1255 scores 27 to windows-1251's 20, but leaves some of these bytes undefined.
      ['windows-1251', 'Київ — столиця України, найбільше місто країни.'],
      // "ť" is 0x9D, a byte windows-1252 leaves undefined: windows-1250 wins though chardet scores them 7 each.
      ['windows-1250', 'Příliš žluťoučký kůň úpěl ďábelské ódy.'],
      ['windows-1250', 'Árvíztűrő tükörfúrógép. Magyarország közép-európai ország a Kárpát-medencében.'],
      ['windows-1253', 'Η Ελλάδα είναι χώρα της νοτιοανατολικής Ευρώπης. Πρωτεύουσα είναι η Αθήνα.'],
      ['windows-1257', 'Lietuva yra valstybė Baltijos jūros rytinėje pakrantėje. Sostinė – Vilnius.'],
      ['shift_jis', '日本語のテキストです。東京都は日本の首都です。'],
      ['euc-kr', '대한민국은 동아시아에 위치한 나라입니다. 서울은 수도입니다.'],
      ['gb18030', '中华人民共和国是一个位于东亚的国家。我们的产品质量很好。'],
      [
        'windows-1252',
        'Le cœur a ses raisons que la raison ne connaît point. « Très bien », dit-il, naïvement.',
      ],
      ['windows-1252', 'Größe, Straße, übermäßig schöne Bücher für Käufer – „Zitat“, 5 €.'],
    ];
    for (const [charset, text] of texts) {
      expect(decodeText(iconv.encode(text, charset)), charset).toBe(text);
      expect(decodeText(iconv.encode(`# Notes\n\n${text}\n`, charset)), charset).toBe(`# Notes\n\n${text}\n`);
    }
  });

  it('reads UTF-16 by its byte order mark', () => {
    const text = 'Zürich, Москва, 東京 – “quoted” €5';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]);
    expect(decodeText(le)).toBe(text);
    expect(decodeText(be)).toBe(text);
  });

  it('judges a large file by the text around its non-ASCII bytes, found after a long ASCII start', async () => {
    const filler = 'Plain ASCII text before the first letter that tells the charsets apart.\n'.repeat(3000);
    const files: [string, string][] = [
      [
        'windows-1251',
        'Москва — столица России, крупнейший по численности населения город страны.\n'.repeat(400),
      ],
      [
        'windows-1250',
        'Příliš žluťoučký kůň úpěl ďábelské ódy. Česká republika je vnitrozemský stát.\n'.repeat(400),
      ],
      ['shift_jis', '日本語のテキストです。東京都は日本の首都です。\n'.repeat(400)],
      ['windows-1252', `${CP1252_LINE}\n`.repeat(400)],
    ];
    for (const [charset, body] of files) {
      const text = `${filler}${body}`;
      const bytes = iconv.encode(text, charset);
      expect(bytes.length).toBeGreaterThan(200 * 1024);
      expect(decodeText(bytes) === text, charset).toBe(true);
      expect((await decodeTextInTurns(bytes, new EventLoopTurns())) === text, charset).toBe(true);
    }
  });

  it('reads CSV and JSON files in legacy charsets the same way', async () => {
    const csv = iconv.encode(`name,note\nDoc,${CP1252_LINE}\n`, 'windows-1252');
    const rows = await parseDocument('csv', { bytes: csv, source: 'cp1252.csv' });
    expect(rows.sections.map((s) => s.metadata.note)).toEqual([CP1252_LINE]);

    const russian = 'Москва — столица России';
    const json = iconv.encode(
      JSON.stringify([{ text: russian }, { text: 'Съешь же ещё этих булок' }]),
      'windows-1251',
    );
    const items = await parseDocument('json', { bytes: json, source: 'cp1251.json' });
    expect(items.sections.map((s) => s.text)).toEqual([russian, 'Съешь же ещё этих булок']);
  });
});
