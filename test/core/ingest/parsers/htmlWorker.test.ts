import { readdirSync, readFileSync } from 'node:fs';
import type { Nodes, Root } from 'hast';
import rehypeParse from 'rehype-parse';
import { unified } from 'unified';
import { describe, expect, it } from 'vitest';
import { parseHtmlTree } from '../../../../src/core/ingest/parsers/htmlWorker';
import { seededRandom } from '../../../helpers/seeded';

const FIXTURES = new URL('../../../../../shared/fixtures/docs/', import.meta.url);

/** What the worker sent before: rehype-parse's tree with its positions removed. */
function rehypeTree(html: string): Root {
  const root = unified().use(rehypeParse).parse(html);
  const stack: Nodes[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    delete node.position;
    if ('children' in node) stack.push(...node.children);
    if (node.type === 'element' && node.content) stack.push(node.content);
  }
  return root;
}

describe('parseHtmlTree', () => {
  it('makes the tree rehype-parse makes, without positions, of every HTML fixture', () => {
    const pages = readdirSync(FIXTURES).filter((name) => name.endsWith('.html'));
    expect(pages.length).toBeGreaterThan(3);
    for (const name of pages) {
      const html = readFileSync(new URL(name, FIXTURES), 'utf8');
      expect(parseHtmlTree(html), name).toEqual(rehypeTree(html));
    }
  });

  it('makes the same tree of seeded tag soup (unclosed tags, tables, templates, SVG, noscript, entities)', () => {
    const { between, pick } = seededRandom(11);
    const parts = [
      '<p>',
      '</p>',
      '<div class="a  b" data-x=1>',
      '</div>',
      '<table><tr><td>cell',
      '</td><td>',
      '</table>',
      '<template><p>in template</p></template>',
      '<noscript><b>no</b>script</noscript>',
      '<script>if (a < b) {}</script>',
      '<style>p { color: red }</style>',
      '<svg viewBox="0 0 1 1"><title>t</title><path d="M0"/></svg>',
      '<math><mi>x</mi></math>',
      '<!-- comment -->',
      '&amp; &lt; &nbsp; &copy; &#x41; &bogus;',
      'text',
      '  spaced   words  ',
      '<br>',
      '<img alt="pic" src=x>',
      '<ul><li>one<li>two</ul>',
      '<h2 id=h>Heading</h2>',
      '<pre>\n  code\n</pre>',
      '<textarea>\nraw <b>x</b></textarea>',
      '<select><option>o<option>p</select>',
      '<a href="/x">link</a>',
      '</span>',
    ];
    for (let i = 0; i < 200; i++) {
      const body = Array.from({ length: between(1, 30) }, () => pick(parts)).join('');
      const html = pick([
        body,
        `<!doctype html><html lang="en"><head><title>T</title></head><body>${body}</body></html>`,
        `<html><body>${body}`,
      ]);
      expect(parseHtmlTree(html), html).toEqual(rehypeTree(html));
    }
  });
});
