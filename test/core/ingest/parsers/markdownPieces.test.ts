import { describe, expect, it } from 'vitest';
import { markdownPieces, splitLines } from '../../../../src/core/ingest/parsers/markdownPieces';
import { seededRandom } from '../../../helpers/seeded';

describe('splitLines', () => {
  it('gives what split(/(?<=\\n)/) gives: each line with its line feed, none empty after the last', () => {
    const texts = ['', 'x', '\n', '\n\n', 'a\nb', 'a\nb\n', 'a\r\nb\r\n\r\n', '\nabc', 'abc\n\n', ' \n \n '];
    const rng = seededRandom(7);
    for (let i = 0; i < 200; i++) {
      texts.push(
        Array.from({ length: rng.int(30) }, () => rng.pick(['\n', '\r', 'a', ' ', 'é', '🦊'])).join(''),
      );
    }
    for (const text of texts) expect(splitLines(text), JSON.stringify(text)).toEqual(text.split(/(?<=\n)/));
  });
});

describe('markdownPieces', () => {
  const filler = `${'A paragraph of words long enough to fill the document. '.repeat(20)}\n\n`;

  it('ends a fence only at a closing fence its container allows, and cuts after it', () => {
    // A list item's fence is indented with the item's content: it closes there, and cuts follow it.
    const listFence = `- item\n\n    \`\`\`js\n    let a;\n\n    let b;\n    \`\`\`\n\n`;
    const listed = markdownPieces(listFence + filler.repeat(120));
    expect(listed.length).toBeGreaterThan(1);
    expect(listed.join('')).toBe(listFence + filler.repeat(120));
    // At the top level, four spaces before the backticks keep the block open: no cut inside it.
    const open = `\`\`\`text\n    \`\`\`\n\n${filler.repeat(120)}`;
    expect(markdownPieces(open)).toEqual([open]);
  });
});
