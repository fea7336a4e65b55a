import { readFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { InvalidDocument } from '../../../../src/core/ingest/errors';
import { createMarkdownParser, parseMarkdown } from '../../../../src/core/ingest/parsers/markdown';

const repoRoot = new URL('../../../../', import.meta.url);
const fixtures = new URL('../shared/fixtures/docs/', repoRoot);

function fixture(name: string) {
  return parseMarkdown({ bytes: readFileSync(new URL(name, fixtures)), source: name });
}

function markdown(text: string, source = 'notes.md') {
  return parseMarkdown({ bytes: new TextEncoder().encode(text), source });
}

describe('parseMarkdown on the shared fixtures', () => {
  it('keeps code blocks verbatim, one section per heading (codeblock.md)', async () => {
    const doc = await fixture('codeblock.md');

    expect(doc.format).toBe('markdown');
    expect(doc.sections.map((s) => s.metadata)).toEqual([
      { headings: ['HTML Example'] },
      { headings: ['XML Example'] },
    ]);
    const [html, xml] = doc.sections;
    expect(html?.text).toMatch(/^HTML Example\n\n```html\n<!DOCTYPE html>\n/);
    expect(html?.text).toContain(
      '    <meta name="viewport" content="width=device-width, initial-scale=1.0">\n    <title>Sample HTML</title>\n</head>',
    );
    expect(html?.text).toMatch(/<\/html>\n```$/);
    const note =
      "<note>\n    <to>Tove</to>\n    <from>Jani</from>\n    <heading>Reminder</heading>\n    <body>Don't forget me this weekend!</body>\n</note>";
    expect(xml?.text).toBe(`XML Example\n\n\`\`\`xml\n${note}\n\`\`\`\n\n\`\`\`xml\n${note}\n\`\`\``);
  });

  it('serializes a GitHub table one row per line with separated cells (simple-table.md)', async () => {
    const doc = await fixture('simple-table.md');

    expect(doc.sections).toEqual([
      { text: 'Item | Price | # In stock\nJuicy Apples | 1.99 | 739\nBananas | 1.89 | 6', metadata: {} },
    ]);
  });

  it('keeps umlauts intact (umlauts-utf8.md)', async () => {
    const doc = await fixture('umlauts-utf8.md');

    expect(doc.sections).toEqual([{ text: 'können\n\nkönnen\n\näöüß', metadata: { headings: ['können'] } }]);
  });
});

describe('parseMarkdown text', () => {
  it('reads like the document: paragraphs, list markers, links, images, quotes, HTML and tables', async () => {
    const doc = await markdown(
      [
        'Intro with a [link](https://example.com/a) and ![a diagram](d.png).',
        '',
        '# Guide',
        '## Install',
        '',
        'Run the installer',
        'on *two* lines.',
        '',
        '- first',
        '- second',
        '  1. nested one',
        '  2. nested two',
        '- [x] done task',
        '',
        '3. three',
        '4. four',
        '',
        '> quoted text',
        '',
        '<div align="center"><b>Bold</b> html</div>',
        '',
        '| Name | Role |',
        '|---|---|',
        '| Ada | `Engineer` |',
        '| Bo | Value with \\| pipe |',
        '',
        '## Usage',
        'Use it.',
        '# Appendix',
      ].join('\n'),
    );

    expect(doc.sections).toEqual([
      { text: 'Intro with a link and a diagram.', metadata: {} },
      {
        text: [
          'Guide',
          'Install',
          'Run the installer on two lines.',
          '- first\n- second\n  1. nested one\n  2. nested two\n- [x] done task',
          '3. three\n4. four',
          '> quoted text',
          'Bold html',
          // A '|' in a cell stays escaped: "Value with | pipe" would read as two cells.
          'Name | Role\nAda | Engineer\nBo | Value with \\| pipe',
        ].join('\n\n'),
        metadata: { headings: ['Guide', 'Install'] },
      },
      { text: 'Usage\n\nUse it.', metadata: { headings: ['Guide', 'Usage'] } },
      { text: 'Appendix', metadata: { headings: ['Appendix'] } },
    ]);
    expect(doc.warnings).toBeUndefined();
  });

  it('reads a code span over two lines as rendered, on one line, whichever parser reads it', async () => {
    // The second document has a tilde that closes a strikethrough, so micromark reads it (markdownWorker.mjs).
    for (const [text, expected] of [
      ['Run `npm run\nbench` now.\n', 'Run npm run bench now.'],
      ['Run `npm run\nbench` ~now~.\n', 'Run npm run bench now.'],
    ]) {
      expect((await markdown(text!)).sections).toEqual([{ text: expected, metadata: {} }]);
    }
  });

  it('decodes a windows-1252 file', async () => {
    const bytes = iconv.encode(
      '# Café\n\nDer Preis beträgt 5 € – „günstig“ für Straße und Öl.\n',
      'windows-1252',
    );

    const doc = await parseMarkdown({ bytes, source: 'preise.md' });

    expect(doc.sections).toEqual([
      {
        text: 'Café\n\nDer Preis beträgt 5 € – „günstig“ für Straße und Öl.',
        metadata: { headings: ['Café'] },
      },
    ]);
  });

  it('warns when a document has no text', async () => {
    const doc = await markdown('---\ntitle: Only metadata\n---\n\n<!-- nothing -->\n');

    expect(doc.sections).toEqual([]);
    expect(doc.metadata).toEqual({ title: 'Only metadata' });
    expect(doc.warnings).toEqual(['The document has no text.']);
  });
});

describe('parseMarkdown on a large document', () => {
  // Past 64 KB a document is parsed in pieces; where a piece may end is unknown here, so each document
  // is made almost entirely of the construct a wrong cut would break.
  const blankSeparated = (make: (k: number) => string) =>
    Array.from({ length: 30 }, (_, k) => make(k)).join('\n\n');
  const code = `\`\`\`sh\n${blankSeparated((k) => `# not a heading ${k}`)}\n\`\`\``;
  const filler = 'words that make the line long enough to fill the document quickly '.repeat(3).trim();
  const list = blankSeparated((k) => `- item ${k} ${filler}`);
  // Four spaces and backticks inside a block are code, not its end (CommonMark allows 3 before a fence).
  const indentedTicks = `\`\`\`text\n    \`\`\`\n${blankSeparated((k) => `# still code ${k}`)}\n\`\`\``;
  const cases: [string, string, (i: number) => string][] = [
    ['fenced code', code, (i) => `Unit ${i}\n\n${code}`],
    [
      'fenced code holding an indented fence line',
      indentedTicks,
      // Written back with a longer fence, as a whole parse writes it: the code holds three backticks.
      (i) => `Unit ${i}\n\n\`${indentedTicks}\``,
    ],
    ['HTML comments', `<!--\n\n${blankSeparated((k) => `# hidden ${k}`)}\n\n-->`, (i) => `Unit ${i}`],
    ['loose lists', list, (i) => `Unit ${i}\n\n${list.replaceAll('\n\n', '\n')}`],
    [
      'references',
      `See [the reference][shared], ${filler}.`,
      (i) => `Unit ${i}\n\nSee the reference, ${filler}.`,
    ],
  ];

  it.each(cases)('gives the same sections as a whole parse, %s intact', async (_name, body, expected) => {
    const units = Array.from({ length: 3000 }, (_, i) => `## Unit ${i}\n\n${body}\n\n`);
    let source = '';
    for (let i = 0; source.length < 70_000; i++) source += units[i];
    source += '[shared]: https://example.com/shared\n';

    const doc = await markdown(source, 'big.md');

    expect(doc.sections.length).toBeGreaterThan(10);
    doc.sections.forEach((section, i) => {
      expect(section).toEqual({ text: expected(i), metadata: { headings: [`Unit ${i}`] } });
    });
  });

  it('reads footnote references as a whole parse does, the note kept once where it is defined', async () => {
    let source = '';
    for (let i = 0; source.length < 70_000; i++)
      source += `## Unit ${i}\n\nSee the note[^shared], ${filler}.\n\n`;
    source += '[^shared]: The shared note.\n';

    const doc = await markdown(source, 'big.md');

    expect(doc.sections.length).toBeGreaterThan(100);
    const last = doc.sections.length - 1;
    doc.sections.forEach((section, i) => {
      // Not `[^shared]`, as pieces without the definition read it.
      const note = i === last ? '\n\n[shared]: The shared note.' : '';
      expect(section.text, `section ${i}`).toBe(`Unit ${i}\n\nSee the note[shared], ${filler}.${note}`);
    });
  });
});

describe('parseMarkdown front matter', () => {
  it('turns fields into document metadata: scalars as they are, nested ones dotted, lists kept', async () => {
    const doc = await markdown(
      [
        '---',
        'title: Field guide',
        'author:',
        '  name: Ada',
        '  contact:',
        '    email: ada@example.com',
        'tags: [birds, "field notes"]',
        'date: 2024-01-05',
        'count: 3',
        'draft: false',
        'row: 9',
        '---',
        '# Birds',
        'Sparrows.',
      ].join('\n'),
    );

    expect(doc.metadata).toEqual({
      title: 'Field guide',
      'author.name': 'Ada',
      'author.contact.email': 'ada@example.com',
      tags: ['birds', 'field notes'],
      date: '2024-01-05',
      count: 3,
      draft: false,
      row_2: 9,
    });
    expect(doc.sections).toEqual([{ text: 'Birds\n\nSparrows.', metadata: { headings: ['Birds'] } }]);
  });

  it('refuses invalid YAML naming the file and the line', async () => {
    const parsing = markdown('---\ntitle: ok\ntitle: again\n---\nBody\n', 'guide.md');

    await expect(parsing).rejects.toBeInstanceOf(InvalidDocument);
    await expect(parsing).rejects.toThrow(
      'guide.md: invalid YAML front matter at line 3: Map keys must be unique.',
    );
  });

  it('refuses front matter that is not a mapping', async () => {
    await expect(markdown('---\n- a\n- b\n---\nBody\n', 'list.md')).rejects.toThrow(
      'list.md: front matter starting at line 1 must be a mapping of fields (key: value).',
    );
  });

  it('refuses a YAML alias bomb quickly', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level < 9; level++) {
      const name = String.fromCharCode(97 + level);
      const previous = `*${String.fromCharCode(96 + level)}`;
      levels.push(`${name}: &${name} [${Array(9).fill(previous).join(', ')}]`);
    }
    const started = performance.now();

    const parsing = markdown(`---\n${levels.join('\n')}\n---\nBody\n`, 'bomb.md');

    await expect(parsing).rejects.toThrow(/^bomb\.md: front matter starting at line 1 was refused: .*alias/i);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses front matter nested deeper than 64 levels before the YAML parser recurses into it', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;

    await expect(markdown(`---\nlevels: ${deep}\n---\nBody\n`, 'deep.md')).rejects.toThrow(
      'deep.md: front matter starting at line 1 nests more than 64 levels deep.',
    );
  });

  it('never runs ---js front matter: it is refused', async () => {
    const globals = globalThis as { frontMatterRan?: boolean };
    const source =
      '---js\n{ title: (function () { globalThis.frontMatterRan = true; return "x"; })() }\n---\n# Body\n';

    await expect(markdown(source, 'code.md')).rejects.toThrow(
      "code.md: front matter at line 1 is written in 'js'; only YAML front matter ('---' ... '---') is supported.",
    );
    expect(globals.frontMatterRan).toBeUndefined();
  });

  it('reads ---yaml front matter as YAML', async () => {
    const doc = await markdown('---yaml\ntitle: Tagged\n---\nBody text.\n');

    expect(doc.metadata).toEqual({ title: 'Tagged' });
    expect(doc.sections).toEqual([{ text: 'Body text.', metadata: {} }]);
  });
});

describe('parseMarkdown limits', () => {
  it('refuses a document that takes far longer than its size warrants, naming the file', async () => {
    const parse = createMarkdownParser({ budget: { baseMs: 1, msPerMb: 0 } });
    const text = Array.from({ length: 4000 }, (_, i) => `## Part ${i}\n\n- item ${i}\n- another item\n`).join(
      '\n',
    );
    await expect(parse({ bytes: new TextEncoder().encode(text), source: 'slow.md' })).rejects.toThrow(
      /^slow\.md: reading the Markdown took too long \(over 0 s for 0\.\d MB of text\) and was stopped/,
    );
  });

  it('stops a piece still parsing at the deadline (its worker terminated), then reads the next file', async () => {
    // Two pieces of 36 KB of setext headings (quadratic in micromark: tens of seconds each), both in flight.
    // The tildes keep them on micromark (markdownWorker.mjs), which is what can run past a deadline.
    const run = 'a~\n---\n'.repeat(6_000);
    const parse = createMarkdownParser({ budget: { baseMs: 1_000, msPerMb: 0 } });
    const started = performance.now();
    await expect(
      parse({ bytes: new TextEncoder().encode(`${run}\nCut here.\n\n${run}`), source: 'setext.md' }),
    ).rejects.toThrow(/^setext\.md: reading the Markdown took too long \(over 1 s/);
    expect(performance.now() - started).toBeLessThan(4_000);
    // The next file goes to a fresh worker of the same pool, whose start counts in that file's time: on
    // a busy machine more than the 1 s above (CI failed so once), so it gets the default budget.
    const next = await createMarkdownParser()({
      bytes: new TextEncoder().encode('# Next\n\nRead.\n'),
      source: 'next.md',
    });
    expect(next.sections).toEqual([{ text: 'Next\n\nRead.', metadata: { headings: ['Next'] } }]);
  });

  it('reads a large document in pieces within the default time budget, keeping every heading path', async () => {
    const text = Array.from({ length: 4000 }, (_, i) => `## Part ${i}\n\n- item ${i}\n- another item\n`).join(
      '\n',
    );
    const doc = await markdown(text, 'big.md');
    expect(doc.sections).toHaveLength(4000);
    expect(doc.sections[3999]).toEqual({
      text: 'Part 3999\n\n- item 3999\n- another item',
      metadata: { headings: ['Part 3999'] },
    });
  });

  it('refuses a document nested too deeply for the stack instead of crashing', async () => {
    await expect(markdown(`${'<div>'.repeat(50_000)}text\n`, 'nested.md')).rejects.toThrow(
      'nested.md: the document nests too deeply to be read (block quotes, lists, emphasis or HTML thousands of levels deep).',
    );
  });
});

describe('parseMarkdown on MDX', () => {
  const mdx = [
    '---',
    'title: Components',
    '---',
    "import { Callout } from './callout'",
    "export const meta = { secret: 'export-leak' }",
    '',
    '# Hello {props.name}',
    '',
    '<Callout type="warning">',
    'Be **careful** with {danger} this.',
    '</Callout>',
    '',
    'Inline <Badge color="red">new</Badge> feature.',
    '',
    '{/* a comment */}',
  ].join('\n');

  it('drops import/export statements, JSX tags and expressions, keeping the text inside elements', async () => {
    const doc = await markdown(mdx, 'docs/page.mdx');

    expect(doc.metadata).toEqual({ title: 'Components' });
    expect(doc.sections).toEqual([
      { text: 'Hello\n\nBe careful with this.\n\nInline new feature.', metadata: { headings: ['Hello'] } },
    ]);
  });

  it('refuses broken MDX with its position', async () => {
    await expect(markdown('# Title\n\n<Callout>\nunclosed\n', 'broken.mdx')).rejects.toThrow(
      'broken.mdx: invalid MDX at line 3, column 1: Expected a closing tag for `<Callout>`.',
    );
    await expect(markdown('Costs {price\n', 'expr.mdx')).rejects.toThrow(
      /^expr\.mdx: invalid MDX at line 1, column 13: .*closing brace/,
    );
  });

  it('reads a .md file as CommonMark, without the MDX syntax rules', async () => {
    const doc = await markdown('Costs < 5 {dollars} today.\n', 'plain.md');

    expect(doc.sections).toEqual([{ text: 'Costs < 5 {dollars} today.', metadata: {} }]);
  });
});
