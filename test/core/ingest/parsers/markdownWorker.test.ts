import remarkFrontmatter from 'remark-frontmatter';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import { parseMarkdown } from '../../../../src/core/ingest/parsers/markdown';
import { markdownSections } from '../../../../src/core/ingest/parsers/markdownSections';
import { autolinksMatter } from '../../../../src/core/ingest/parsers/markdownWorker.mjs';
import { seededRandom } from '../../../helpers/seeded';

/** What the worker did before: every piece with all of GFM, autolink literals included. */
const fullGfm = unified().use(remarkParse).use(remarkFrontmatter, ['yaml']).use(remarkGfm);
const withFullGfm = (text: string) => markdownSections(fullGfm.parse(text));

const parse = (text: string) => parseMarkdown({ bytes: new TextEncoder().encode(text), source: 'doc.md' });

describe('autolinksMatter', () => {
  it('is false without addresses, or with addresses free of markup', () => {
    for (const text of [
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
      'https://x.org/a\\_b',
      'https://x.org/a&amp;b',
      'https://x.org/[a](b)',
      'https://x.org/`code`',
      'jane*doe*@example.org',
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
