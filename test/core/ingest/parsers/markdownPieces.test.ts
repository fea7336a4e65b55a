import { describe, expect, it } from 'vitest';
import { splitLines } from '../../../../src/core/ingest/parsers/markdownPieces';

describe('splitLines', () => {
  it('gives what split(/(?<=\\n)/) gives: each line with its line feed, none empty after the last', () => {
    const texts = ['', 'x', '\n', '\n\n', 'a\nb', 'a\nb\n', 'a\r\nb\r\n\r\n', '\nabc', 'abc\n\n', ' \n \n '];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 200; i++) {
      texts.push(
        Array.from(
          { length: Math.floor(random() * 30) },
          () => ['\n', '\r', 'a', ' ', 'é', '🦊'][Math.floor(random() * 6)],
        ).join(''),
      );
    }
    for (const text of texts) expect(splitLines(text), JSON.stringify(text)).toEqual(text.split(/(?<=\n)/));
  });
});
