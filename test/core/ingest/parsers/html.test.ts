import { readFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { InvalidDocument } from '../../../../src/core/ingest/errors';
import { createHtmlParser, parseHtml } from '../../../../src/core/ingest/parsers/html';
import type { ParsedDocument } from '../../../../src/core/ingest/types';

/** Deep enough to overflow a worker's stack (4 MB) in the tree's recursive walks. */
const DEEP_LEVELS = 50_000;
const docs = new URL('../shared/fixtures/docs/', new URL('../../../../', import.meta.url));

async function parseFixture(name: string): Promise<ParsedDocument> {
  return parseHtml({ bytes: readFileSync(new URL(name, docs)), source: name });
}

function parseString(html: string, source = 'page.html'): Promise<ParsedDocument> {
  return parseHtml({ bytes: Buffer.from(html), source });
}

function allText(doc: ParsedDocument): string {
  return doc.sections.map((s) => s.text).join('\n\n');
}

describe('parseHtml on the fixtures', () => {
  it('strips the header and footer elements', async () => {
    const doc = await parseFixture('fake-html-with-footer-and-header.html');
    expect(doc.format).toBe('html');
    expect(doc.sections).toEqual([
      { text: 'My First Heading\n\nMy first paragraph.', metadata: { headings: ['My First Heading'] } },
    ]);
  });

  it('reads headings, nested lists and a table', async () => {
    const doc = await parseFixture('fake-html.html');
    expect(doc.sections.map((s) => s.metadata)).toEqual([
      { headings: ['My First Heading', 'My Second Heading'] },
      { headings: ['My First Heading', 'My Second Heading', 'A Third Heading'] },
    ]);
    expect(doc.sections[0]?.text).toBe(
      'My First Heading\n\nMy Second Heading\n\nMy first paragraph. lorem ipsum dolor set amet. if the cow comes home ' +
        "under the sun how do you fault the cow for it's worn hooves?\n\n" +
        '- A test list\n- With sub-bullets!\n- And another\n- Back at the root',
    );
    expect(doc.sections[1]?.text).toBe(
      'A Third Heading\n\nColumn 1 | Column 2\nRow 1, Cell 1 | Row 1, Cell 2\nRow 2, Cell 1 | Row 2, Cell 2',
    );
  });

  it('keeps the umlauts of an undeclared UTF-8 page', async () => {
    const doc = await parseFixture('fake-html-lang-de.html');
    expect(doc.sections[0]?.text).toBe('Jahresabschluss zum Geschäftsjahr vom 01.01.2020 bis zum 31.12.2020');
  });

  it('leaves out scripts, navigation, the sidebar, the footer and skip links of a real page', async () => {
    const doc = await parseFixture('example-with-scripts.html');
    expect(doc.metadata).toEqual({
      title: 'Russian Offensive Campaign Assessment, December 13 | Institute for the Study of War',
      lang: 'en',
    });
    const text = allText(doc);
    expect(text).toContain(
      'Belarusian forces remain unlikely to attack Ukraine despite a snap Belarusian military readiness check',
    );
    expect(doc.sections[0]?.metadata).toEqual({
      headings: ['Russian Offensive Campaign Assessment, December 13'],
    });
    for (const noise of [
      'facebook-jssdk',
      'GoogleAnalyticsObject',
      'jQuery',
      'Who We Are',
      '1400 16th Street',
      'Skip to main content',
    ]) {
      expect(text).not.toContain(noise);
    }
  });

  it('reads an SEC filing (inline XBRL) as text, tables as rows, without XBRL names', async () => {
    const text = allText(await parseFixture('example-10k-1p.html'));
    expect(text).toContain('Commission file number: 000-30653\n\nGalaxy Gaming, Inc.');
    expect(text).toContain('Nevada | 20-8143439');
    expect(text).toContain('Common stock | GLXZ | OTCQB marketplace');
    expect(text).toContain('Item 1A. | Risk Factors | 9');
    expect(text).toContain('For the transition period from to');
    expect(text).not.toMatch(/dei:|contextRef|C_0000013156|\u00a0/);
  });

  it('reads an essay laid out in tables as paragraphs, without the page scripts', async () => {
    const doc = await parseFixture('ideas-page.html');
    expect(doc.metadata).toEqual({ title: 'How to Get New Ideas' });
    const text = allText(doc);
    // The title is drawn as an image: its alt text is the page's first line.
    expect(text).toMatch(/^How to Get New Ideas\n\nJanuary 2023\n\n\(Someone fed my essays into GPT/);
    expect(text).toContain('\n\nThe way to get new ideas is to notice anomalies: what seems strange,');
    expect(text).toContain('\n\nKnowledge grows fractally.');
    expect(text).not.toContain('csell');
    expect(text).not.toContain(' | ');
  });
});

describe('parseHtml text and sections', () => {
  it('keeps words apart on minified HTML', async () => {
    const doc = await parseString(
      '<div>one</div><div>two</div><p>three</p><p>four<br>five</p><span>six</span> <span>seven</span><table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>',
    );
    expect(allText(doc)).toBe('one\ntwo\n\nthree\n\nfour\nfive\n\nsix seven\na | b\nc | d');
  });

  it("reads an image's alt text where the image stands, and nothing for decorative images", async () => {
    const doc = await parseString(
      '<nav><img alt="Site logo"></nav><main><h2><img src="t.gif" alt=" Quarterly\n results "></h2>' +
        '<p>Press <img src="i.png" alt="the gear icon"> to open settings.</p>' +
        '<p>Before<img src="s.gif" alt="">after<img alt="spacer" role="presentation"><img alt="hidden" aria-hidden="true"></p>' +
        '<figure><img src="d.png" alt="Diagram: the four chambers of the heart"><figcaption>Figure 1</figcaption></figure></main>',
    );
    expect(doc.sections).toEqual([
      {
        text: 'Quarterly results\n\nPress the gear icon to open settings.\n\nBeforeafter\n\nDiagram: the four chambers of the heart\nFigure 1',
        metadata: { headings: ['Quarterly results'] },
      },
    ]);
  });

  it('drops invisible characters: soft hyphens, zero-width spaces', async () => {
    const doc = await parseString('<p>hyphen&shy;ation and zero\u200bwidth</p>');
    expect(allText(doc)).toBe('hyphenation and zerowidth');
  });

  it('leaves out hidden elements and form controls, keeps labels', async () => {
    const doc = await parseString(
      '<body><p>Visible</p><p hidden>attr-hidden</p><div aria-hidden="true">aria-hidden</div>' +
        '<div style="color:red; display: none">styled-none</div><span style="visibility:hidden">invisible</span>' +
        '<div style="display:none"><ix:header><ix:hidden><ix:nonNumeric name="dei:AmendmentFlag">false</ix:nonNumeric></ix:hidden></ix:header></div>' +
        '<template><p>template</p></template><noscript>Enable JavaScript</noscript><svg><text>svg-text</text></svg>' +
        '<form><label>Your name</label><input value="input-value"><select><option>option-text</option></select>' +
        '<textarea>textarea-text</textarea><button>Send</button></form><dialog>closed dialog</dialog><style>p{}</style></body>',
    );
    expect(allText(doc)).toBe('Visible\n\nYour name');
  });

  it('strips a page-level aside but keeps an aside inside the article', async () => {
    const doc = await parseString(
      '<aside>Related posts</aside><main><article><p>Body text.</p><aside>A note in the article.</aside></article></main>' +
        '<nav>Menu</nav><div role="navigation">Role menu</div>',
    );
    expect(allText(doc)).toBe('Body text.\n\nA note in the article.');
  });

  it("keeps an article's or a section's own header and footer, strips the page's", async () => {
    const doc = await parseString(
      '<header>Site banner</header><main><h1>Archive</h1><p>Latest posts.</p>' +
        '<article><header><h2>How we cut our build time</h2><p>By Jane Doe</p></header><p>Body.</p>' +
        '<footer><p>Filed under: builds</p></footer></article>' +
        '<section><header hidden>Hidden header</header><p>Section text.</p></section></main>' +
        '<footer>Site footer</footer><div role="contentinfo">Role footer</div>',
    );
    expect(doc.sections).toEqual([
      { text: 'Archive\n\nLatest posts.', metadata: { headings: ['Archive'] } },
      {
        text: 'How we cut our build time\n\nBy Jane Doe\n\nBody.\n\nFiled under: builds\n\nSection text.',
        metadata: { headings: ['Archive', 'How we cut our build time'] },
      },
    ]);
  });

  it('keeps empty table cells in their column, drops columns empty in every row, repeats a cell spanning rows', async () => {
    const doc = await parseString(
      '<table><tr><th>Name</th><td></td><th>Phone</th><th>Email</th></tr>' +
        '<tr><td>Ada</td><td></td><td>555</td><td>ada@example.com</td></tr>' +
        '<tr><td>Bob</td><td></td><td></td><td>bob@example.com</td></tr>' +
        '<tr><td>Carol</td><td></td><td>556</td><td></td></tr>' +
        '<tr><td rowspan="2">North</td><td></td><td colspan="2">777 (shared)</td></tr><tr><td></td><td>778</td><td>n@example.com</td></tr></table>',
    );
    expect(allText(doc)).toBe(
      [
        'Name | Phone | Email',
        'Ada | 555 | ada@example.com',
        'Bob | | bob@example.com',
        'Carol | 556',
        'North | 777 (shared)',
        'North | 778 | n@example.com',
      ].join('\n'),
    );
  });

  it('keeps the question of an accordion: the disclosure button inside its heading is the section title', async () => {
    const doc = await parseString(
      '<h2 class="accordion-header"><button class="accordion-button" type="button" data-bs-toggle="collapse" aria-expanded="true" aria-controls="c1">How long does shipping take to Canada?</button></h2><div id="c1" class="accordion-collapse collapse show"><div class="accordion-body">Usually five to seven business days.</div></div>',
    );
    expect(doc.sections).toEqual([
      {
        text: 'How long does shipping take to Canada?\n\nUsually five to seven business days.',
        metadata: { headings: ['How long does shipping take to Canada?'] },
      },
    ]);
  });

  it('keeps disclosure buttons as lines of their own, strips form, menu and dialog buttons', async () => {
    const doc = await parseString(
      '<main><div class="faq"><button class="btn" data-toggle="collapse" data-target="#a1">Do you ship abroad?</button>' +
        '<div id="a1" class="collapse">Yes, to 40 countries.</div>' +
        '<button aria-expanded="false">Can I return an item?</button>Within 30 days.</div>' +
        '<form><button type="submit">Submit</button></form><p>Price: 5 <button class="add">Add to cart</button></p>' +
        '<button aria-expanded="false" aria-haspopup="menu">Sort by</button>' +
        '<button data-bs-toggle="modal" data-bs-target="#m" aria-controls="m">Open dialog</button>' +
        '<div class="modal"><p>Dialog text</p><button data-bs-dismiss="modal">Close</button></div></main>',
    );
    expect(allText(doc)).toBe(
      'Do you ship abroad?\n\nYes, to 40 countries.\n\nCan I return an item?\n\nWithin 30 days.\n\nPrice: 5\n\nDialog text',
    );
  });

  it('reads details and summary as blocks: the summary on a line of its own, apart from its body', async () => {
    const doc = await parseString(
      '<details><summary>Refund policy</summary>Refunds take 5 days.</details><details open><summary>Shipping</summary><p>Ships in 2 days.</p></details>',
    );
    expect(doc.sections).toEqual([
      {
        text: 'Refund policy\n\nRefunds take 5 days.\n\nShipping\n\nShips in 2 days.',
        metadata: {},
      },
    ]);
  });

  it('builds heading paths across levels, with text before the first heading in its own section', async () => {
    const doc = await parseString(
      '<html lang="fr"><head><title> A  title </title></head><body><p>Intro.</p>' +
        '<h1>One</h1><p>a</p><h3>Deep</h3><p>b</p><h2>Two</h2><p>c</p><h1>Three</h1><h2>Empty before</h2><h2>Sibling</h2><p>d</p>' +
        '<h1>   </h1><p>e</p></body></html>',
    );
    expect(doc.metadata).toEqual({ title: 'A title', lang: 'fr' });
    expect(doc.sections).toEqual([
      { text: 'Intro.', metadata: {} },
      { text: 'One\n\na', metadata: { headings: ['One'] } },
      { text: 'Deep\n\nb', metadata: { headings: ['One', 'Deep'] } },
      { text: 'Two\n\nc', metadata: { headings: ['One', 'Two'] } },
      { text: 'Three\n\nEmpty before', metadata: { headings: ['Three', 'Empty before'] } },
      { text: 'Sibling\n\nd\n\ne', metadata: { headings: ['Three', 'Sibling'] } },
    ]);
  });

  it('reads a page nested 5,000 levels deep, and refuses one nested far deeper instead of overflowing the stack', async () => {
    const nested = (levels: number) => `${'<div>'.repeat(levels)}deep${'</div>'.repeat(levels)}`;
    // Read in the worker, whose stack is larger than the ingesting thread's (it was refused there).
    const doc = await parseString(nested(5000), 'nested.html');
    expect(doc.sections.map((s) => s.text)).toEqual(['deep']);
    const refusal = parseString(nested(DEEP_LEVELS), 'deep.html');
    await expect(refusal).rejects.toBeInstanceOf(InvalidDocument);
    await expect(refusal).rejects.toThrow(/^deep\.html: the HTML is nested too deeply/);
  });

  it('warns about a page without visible text', async () => {
    const doc = await parseString(
      '<html><head><title>t</title><script>var x = 1;</script></head><body> </body></html>',
      'blank.html',
    );
    expect(doc.sections).toEqual([]);
    expect(doc.warnings).toEqual(['blank.html: the page has no visible text.']);
  });
});

describe('parseHtml character sets', () => {
  const sample = 'Price: 5 € – “quoted” and ‘single’ café';

  it('decodes windows-1252 declared by <meta charset>', async () => {
    const bytes = iconv.encode(
      `<html><head><meta charset="windows-1252"></head><body><p>${sample}</p></body></html>`,
      'windows-1252',
    );
    expect(bytes.includes(0x80)).toBe(true);
    const doc = await parseHtml({ bytes, source: 'cp1252.html' });
    expect(allText(doc)).toBe(sample);
  });

  it('decodes a Latin-1 label in <meta http-equiv> as windows-1252, as browsers do', async () => {
    const bytes = iconv.encode(
      `<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"></head><body><p>${sample}</p></body></html>`,
      'windows-1252',
    );
    expect(allText(await parseHtml({ bytes, source: 'latin1.html' }))).toBe(sample);
  });

  it('reads UTF-8 without any declaration as UTF-8, not windows-1252', async () => {
    const doc = await parseHtml({
      bytes: Buffer.from(`<p>${sample}</p><p>Größe, naïve, 東京</p>`),
      source: 'utf8.html',
    });
    expect(allText(doc)).toBe(`${sample}\n\nGröße, naïve, 東京`);
  });

  it('reads UTF-16 with a byte-order mark', async () => {
    const html = `<html><head><meta charset="utf-16"><title>Überschrift</title></head><body><h1>Überschrift</h1><p>${sample}</p></body></html>`;
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(html, 'utf-16le')]);
    const doc = await parseHtml({ bytes, source: 'utf16.html' });
    expect(doc.metadata).toEqual({ title: 'Überschrift' });
    expect(doc.sections).toEqual([
      { text: `Überschrift\n\n${sample}`, metadata: { headings: ['Überschrift'] } },
    ]);
  });

  it('reads a short undeclared windows-1252 page as windows-1252, the HTML default, not a close guess', async () => {
    const bytes = iconv.encode(
      '<html><body><p>Café “quoted” – naïve €5 Straße</p></body></html>',
      'windows-1252',
    );
    const doc = await parseHtml({ bytes, source: 'cp1252.html' });
    expect(doc.sections).toEqual([{ text: 'Café “quoted” – naïve €5 Straße', metadata: {} }]);
  });

  it('detects the charset of an undeclared page from its text, not its markup', async () => {
    const head =
      '<!DOCTYPE html><html><head><title>Page</title><link rel="stylesheet" href="/css/site.css">' +
      '<script src="/js/app.js"></script><style>.container { margin: 0 auto; }</style></head>';
    const pages: [string, string][] = [
      ['windows-1250', 'Příliš žluťoučký kůň úpěl ďábelské ódy.'],
      ['iso-8859-2', 'Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.'],
      ['windows-1250', 'Árvíztűrő tükörfúrógép. Magyarország közép-európai ország a Kárpát-medencében.'],
      ['windows-1251', 'Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России.'],
      ['windows-1253', 'Η Ελλάδα είναι χώρα της νοτιοανατολικής Ευρώπης. Πρωτεύουσα είναι η Αθήνα.'],
      ['windows-1255', 'ישראל היא מדינה במזרח התיכון. בירתה היא ירושלים.'],
      ['windows-1257', 'Lietuva yra valstybė Baltijos jūros rytinėje pakrantėje. Sostinė – Vilnius.'],
      ['shift_jis', '日本語のテキストです。東京都は日本の首都です。'],
      ['euc-jp', '日本語のテキストです。東京都は日本の首都です。'],
      ['gb18030', '中华人民共和国是一个位于东亚的国家。我们的产品质量很好。'],
      ['big5', '中華民國是位於東亞的國家。我們的產品品質很好。'],
      ['euc-kr', '대한민국은 동아시아에 위치한 나라입니다. 서울은 수도입니다.'],
      [
        'windows-1252',
        'Le cœur a ses raisons que la raison ne connaît point. « Très bien », dit-il, naïvement.',
      ],
      ['windows-1252', 'Größe, Straße, übermäßig schöne Bücher für Käufer – „Zitat“, 5 €.'],
    ];
    for (const [charset, text] of pages) {
      const bytes = iconv.encode(
        `${head}<body><div class="container"><p>${text}</p></div></body></html>`,
        charset,
      );
      const doc = await parseHtml({ bytes, source: `${charset}.html` });
      expect(allText(doc), charset).toBe(text);
    }
  });

  it('detects the charset of a large undeclared page from the text around its non-ASCII letters', async () => {
    const filler = '<p>Plain ASCII text before the first accented letter, repeated at length.</p>\n'.repeat(
      2000,
    );
    const czech = '<p>Příliš žluťoučký kůň úpěl ďábelské ódy. Česká republika je vnitrozemský stát.</p>\n';
    const japanese = '<p>日本語のテキストです。東京都は日本の首都です。</p>\n';
    for (const [charset, body] of [
      ['windows-1250', `${filler}${czech.repeat(500)}`],
      ['shift_jis', japanese.repeat(2000)],
    ]) {
      const bytes = iconv.encode(`<html><head><title>t</title></head><body>${body}</body></html>`, charset!);
      expect(bytes.length).toBeGreaterThan(64 * 1024);
      const text = allText(await parseHtml({ bytes, source: `${charset}.html` }));
      expect(text, charset).toContain(
        charset === 'shift_jis' ? '東京都は日本の首都です。' : 'Příliš žluťoučký kůň',
      );
    }
  });

  it('follows the declaration even where the bytes would also be valid UTF-8', async () => {
    // "RÃ©sumÃ©" in windows-1252 is the byte pair C3 A9 twice: valid UTF-8 for "Résumé" if undeclared.
    const text = 'RÃ©sumÃ©';
    const meta = iconv.encode(`<meta charset="windows-1252"><p>${text}</p>`, 'windows-1252');
    const xml = iconv.encode(
      `<?xml version="1.0" encoding="windows-1252"?><html><body><p>${text}</p></body></html>`,
      'windows-1252',
    );
    const undeclared = iconv.encode(`<p>${text}</p>`, 'windows-1252');
    expect(allText(await parseHtml({ bytes: meta, source: 'meta.html' }))).toBe(text);
    expect(allText(await parseHtml({ bytes: xml, source: 'xhtml.html' }))).toBe(text);
    expect(allText(await parseHtml({ bytes: undeclared, source: 'plain.html' }))).toBe('Résumé');
  });
});

describe('parseHtml time budget', () => {
  it('refuses a page that takes far longer than its size warrants, naming the file', async () => {
    const parse = createHtmlParser({ budget: { baseMs: 1, msPerMb: 0 } });
    const html = `<html><body>${'<div><p>Some text in a paragraph.</p></div>'.repeat(20_000)}</body></html>`;
    await expect(parse({ bytes: Buffer.from(html), source: 'slow.html' })).rejects.toThrow(
      /^slow\.html: reading the HTML took too long \(over 0 s for 0\.\d MB of text\) and was stopped/,
    );
  });
});
