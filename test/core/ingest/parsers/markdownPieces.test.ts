import { describe, expect, it } from 'vitest';
import { splitLines } from '../../../../src/core/ingest/parsers/markdownPieces';
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
