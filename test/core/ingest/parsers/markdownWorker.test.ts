import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../../../bench/corpus';
import { loadTextPool } from '../../../../bench/fixtures';
import { parseMarkdown } from '../../../../src/core/ingest/parsers/markdown';
import { markdownSections } from '../../../../src/core/ingest/parsers/markdownSections';
import { markdownPieces } from '../../../../src/core/ingest/parsers/markdownPieces';
import {
  autolinksMatter,
  markdownItTree,
  micromarkTree,
  parseMarkdownTree,
} from '../../../../src/core/ingest/parsers/markdownWorker.mjs';
import { mutatedMarkdown, seededMarkdownDocuments } from '../../../helpers/markdownDocs';
import { seededRandom } from '../../../helpers/seeded';

/** What the worker did before: every piece with all of GFM, autolink literals included. */
const fullGfm = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);
const withFullGfm = (text: string) => markdownSections(fullGfm.parse(text));

const parse = (text: string) => parseMarkdown({ bytes: new TextEncoder().encode(text), source: 'doc.md' });

describe('autolinksMatter', () => {
  it('is false without addresses, or with addresses free of markup', () => {
    for (const text of [
      'news at https://t.me/zoda_gov_ua/15427 and mail to first_last@example.org',
      'code: `https://x.org/_a_*b*` and `@scope/pkg_name`',
      // No local part right before the `@`: no address.
      'jane*doe*@example.org and `x`@example.org_',
      // Autolinks, HTML tags and link destinations take the address whole.
      'see <https://semver.org/_x_> or <jane_*x*@example.org>.',
      '<a href="https://x.org/*a*" title=\'b\'>t</a> <img src=https://x.org/_b_/>',
      '[![npm](https://img.shields.io/npm/v/@scope/pkg_x)](https://www.npmjs.com/package/x) and [w](https://en.wikipedia.org/wiki/A_(b)_c)',
      'plain *emphasis* and _more_ and ~~gone~~ text',
      'see https://example.org/a/b?x=1&y=2 or www.example.org/path.',
      'mail me at jane.doe@example.org, *soon*',
      '[a link](https://example.org/docs) in a sentence',
    ]) {
      expect(autolinksMatter(text), text).toBe(false);
    }
  });

  it('is true where an address holds markup that a link would keep', () => {
    for (const text of [
      'https://example.org/*a*/b',
      'www.example.org/~u~v',
      'http://foo.org/(bar)_baz_',
      'https://x.org/_a_ and https://x.org/a_ b',
      '`a`https://x.org/*b*',
      '`a \\` https://x.org/*b*`',
      '| `a | https://x.org/*b* `|',
      '<http://a.org/`> https://x.org/*b* `',
      '\\<https://x.org/*a*>',
      '<www.x.org/*a*>',
      '[^1](https://x.org/*a*)',
      'x](https://x.org/*a*)',
      '[t](https://x.org/*a* "title")',
      '\\[t](https://x.org/*a*)',
      'https://x.org/a\\_b',
      'https://x.org/a&amp;b',
      'https://x.org/[a](b)',
      'https://x.org/`code`',
      'jane*d_oe@example.org',
      '[jane@example.org](mailto:jane@example.org)',
      'x'.repeat(5000) + '@example.org',
      'https://example.org/' + 'y'.repeat(5000),
    ]) {
      expect(autolinksMatter(text), text.slice(0, 60)).toBe(true);
    }
  });
});

describe('parseMarkdown without autolink literals where they change nothing', () => {
  it('reads the markup-laden addresses as full GFM does', async () => {
    const text = [
      '# Links',
      'see https://example.org/*a*/b and www.x.org/~u~v and http://foo.org/(bar)_baz_ too.',
      'mail jane*doe*@example.org or https://x.org/a\\_b or https://x.org/a&amp;b.',
    ].join('\n\n');
    const doc = await parse(text);
    expect(doc.sections).toEqual(withFullGfm(text));
    expect(doc.sections.map((s) => s.text).join('\n')).toContain('https://example.org/*a*/b');
  });

  it('gives the same sections as full GFM on seeded documents mixing addresses and markup', async () => {
    const { between, pick } = seededRandom(7);
    const parts = [
      'word',
      'other',
      '*em*',
      '_em_',
      '~~del~~',
      '~del~',
      '`code`',
      '\\*',
      '&amp;',
      '[link](https://example.org/x)',
      'https://example.org/a',
      'https://example.org/a_b_c',
      'https://example.org/*a*',
      'www.example.org/~u~v',
      'http://example.org/(x)_y_',
      'jane@example.org',
      'ja_ne@example.org',
      'ja*ne*@example.org',
      'a.~b~@example.org',
      '(www.example.org)',
      'https://example.org.',
      '<https://example.org/z>',
      '<https://example.org/*z*>',
      '<ja_ne*x*@example.org>',
      '<a href="https://example.org/*a*">',
      '</a>',
      '[t](https://example.org/*a*)',
      '![i](https://example.org/_a_)',
      '[t](https://example.org/*a* "x")',
      '](https://example.org/*a*)',
      '\\[t](https://example.org/*a*)',
      '[^1](https://example.org/_a_)',
    ];
    const blocks = [
      () => Array.from({ length: between(1, 12) }, () => pick(parts)).join(pick([' ', '', ' '])),
      () => `- [ ] ${pick(parts)} ${pick(parts)}\n- [x] ${pick(parts)}`,
      () => `| a | b |\n| - | - |\n| ${pick(parts)} | ${pick(parts)} |`,
      () => `## ${pick(parts)} ${pick(parts)}`,
      () => `Note[^1] ${pick(parts)}\n\n[^1]: ${pick(parts)} ${pick(parts)}`,
      () => `> ${pick(parts)} ${pick(parts)}`,
    ];
    let fast = 0;
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: between(1, 5) }, () => pick(blocks)()).join('\n\n');
      if (!autolinksMatter(text)) fast++;
      expect((await parse(text)).sections, text).toEqual(withFullGfm(text));
    }
    // Both paths were taken often enough to mean something.
    expect(fast).toBeGreaterThan(25);
    expect(fast).toBeLessThan(275);
  });
});

const FIXTURES = new URL('../../../../../shared/fixtures/docs/', import.meta.url);
const DOCS = new URL('../../../../docs/', import.meta.url);

/** The pieces of every Markdown file in a folder, as the parser cuts them. */
function piecesIn(folder: URL): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.md'))
    .flatMap((name) => markdownPieces(readFileSync(new URL(name, folder), 'utf8')));
}

const sections = (tree: Parameters<typeof markdownSections>[0]) => markdownSections(tree);

/** Compares both parsers on each piece markdown-it takes; returns how many it took. */
function expectSameSections(pieces: string[]): number {
  let taken = 0;
  for (const piece of pieces) {
    const fast = markdownItTree(piece);
    if (!fast) continue;
    taken++;
    expect(sections(fast), piece).toEqual(sections(micromarkTree(piece)));
  }
  return taken;
}

describe('markdownItTree (markdown-it where it reads as micromark)', () => {
  it('reads the Markdown fixtures and docs as micromark does, and takes most of them', () => {
    const pieces = [...piecesIn(FIXTURES), ...piecesIn(DOCS)];
    expect(pieces.length).toBeGreaterThan(15);
    expect(expectSameSections(pieces)).toBeGreaterThan(pieces.length / 2);
  });

  it("reads the benchmark's seeded Markdown corpus as micromark does, and takes nine pieces in ten", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbs-md-corpus-'));
    try {
      await buildCorpus(dir, { markdown: 1024 * 1024 }, seededRandom(5), await loadTextPool());
      const pieces = piecesIn(pathToFileURL(`${join(dir, 'markdown')}/`));
      expect(expectSameSections(pieces)).toBeGreaterThan(pieces.length * 0.85);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads seeded documents of every construct, side by side in odd places, as micromark does', () => {
    const documents = seededMarkdownDocuments(seededRandom(31), 1500);
    // Most of these mix constructs on purpose: markdown-it still takes a good share.
    expect(expectSameSections(documents)).toBeGreaterThan(150);
  });

  it('reads real Markdown with a few edits each (markup inserted, characters deleted, lines repeated) as micromark does', () => {
    const sources = [...piecesIn(FIXTURES), ...piecesIn(DOCS)];
    const documents = mutatedMarkdown(seededRandom(47), sources, 1500);
    expect(expectSameSections(documents)).toBeGreaterThan(1000);
  });

  it('leaves to micromark each case where the two were found to read differently', () => {
    // Minimal documents from the comparisons above; each differed before its rule was added.
    const differing = [
      'a ~b~ c', // GFM strikethrough with one tilde
      'Note[^1]\n\n[^1]: text', // footnotes
      '- [ ] task', // task list items
      '- - [X] x', // ... nested on one line
      'a\r\nb', // carriage returns
      '\uFEFF# Title', // a byte order mark
      'https://x.org/*a*', // an address with markup
      '<http://a.org/%20x>', // an autolink with a percent escape
      'a | b\n--|--\n1 | 2\n4 | 5 | 6', // a ragged table
      '|a\n|-\n<b>', // a row without a pipe
      '| a |\n|---|\n|', // a row of one pipe (no cell, as markdown-it splits it)
      '* |3\n-|-', // a table header that starts like a list item
      '>|ü\n-|-', // ... or a quote
      '# |a\n-|-', // ... or a heading
      '|*\n--', // a delimiter row without a pipe
      'a\n|-', // a delimiter row under a line without a pipe
      't\n-:', // ... or without a pipe itself
      '| a |\n|---|\n| 1 |\nlazy line', // a table followed by a line
      '- a\n\n  | x |\n  |---|\n  | 1 |', // a table in a list item
      '    a\n-', // an empty list item
      '-\n  s  \nü', // an item that starts on the next line
      '5) >', // an item that starts with a quote
      '```\n```\n    e\n0. <?', // a list right after indented code
      '    T\n\n4) T', // an ordered list not starting at 1 after indented code
      '\tT\n\n3. T\n\n\tT', // a tab-indented line where there are list items
      '>\n    m\n    a', // indented code right after a quote
      '>```\n>\n>\n', // an open fence
      '***b****3', // three or more emphasis delimiters
      '[g `\n`\n`', // a bracket left open with code spans
      '[r]:h ""\n6) T', // a definition with an odd destination
      '[r]: http://x.org/3 "title"\n6) x', // a definition followed by text
      '- D\n<n>\n]', // a tag line in a list item's paragraph
      '(~a~)', // a tilde that closes a strikethrough
      '**a*!*, b', // CommonMark's rule of three (runs of one and two, one flanked on both sides)
      'x __a_!_, b', // ... with underscores
      '[`a](u) b `c`', // a code span from inside brackets to after them
      '[a`](u) `c`', // ... opened before the `]`
      '- x`\n ! e `y', // a code span across a line break (the lazy line's indentation)
      '    a\n      \n\nb', // indented code followed by a line of spaces
      '- a\n\n  | x\ny | z |\n  | --- | --- |', // a table header on a lazy line of a list item
    ];
    for (const text of differing) expect(markdownItTree(text), JSON.stringify(text)).toBeUndefined();
    // The empty front matter itself is read alike (its closing line is the first `---`).
    expect(sections(markdownItTree('---\n---\nt\n---')!)).toEqual(
      sections(micromarkTree('---\n---\nt\n---')),
    );
  });

  it('keeps the front matter as the yaml node the section builder reads', () => {
    const tree = parseMarkdownTree('---\ntitle: A\n---\n# H\n\ntext\n');
    expect(tree.children[0]).toEqual({ type: 'yaml', value: 'title: A', position: { start: { line: 1 } } });
    expect(tree).toEqual(markdownItTree('---\ntitle: A\n---\n# H\n\ntext\n'));
    expect(micromarkTree('---\ntitle: A\n---\n# H\n\ntext\n').children[0]).toMatchObject({
      type: 'yaml',
      value: 'title: A',
    });
  });

  it('reads MDX with micromark only', () => {
    const mdx = '# Hi {props.name}\n\n<Note>text</Note>\n';
    expect(parseMarkdownTree(mdx, true)).toEqual(micromarkTree(mdx, true));
    expect(sections(parseMarkdownTree(mdx, true))).toEqual([
      { text: 'Hi\n\ntext', metadata: { headings: ['Hi'] } },
    ]);
  });
});
