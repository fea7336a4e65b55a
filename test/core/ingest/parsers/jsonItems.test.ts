import { describe, expect, it } from 'vitest';
import { EventLoopTurns } from '../../../../src/core/ingest/eventLoopTurns';
import { arrayItemTexts, objectMemberTexts } from '../../../../src/core/ingest/parsers/jsonItems';
import type { Rng } from '../../../../bench/prng';
import { seededRandom } from '../../../helpers/seeded';

const split = (text: string) => arrayItemTexts(text, new EventLoopTurns());
const members = (text: string) => objectMemberTexts(text, new EventLoopTurns());

// Strings made of what a scan can stumble on: brackets, braces, commas, quotes, backslashes, controls.
const PIECES = [
  '[',
  ']',
  '{',
  '}',
  ',',
  '"',
  '\\',
  '\\"',
  '\n',
  '\t',
  'é',
  '🦊',
  'a b',
  ':',
  '\u2028',
  '\u0000',
];

function randomValue(rng: Rng, depth: number): unknown {
  switch (rng.int(depth > 3 ? 4 : 6)) {
    case 0:
      return Array.from({ length: rng.int(5) }, () => rng.pick(PIECES)).join('');
    case 1:
      return Math.round((rng.next() - 0.5) * 1e6) / 100;
    case 2:
      return rng.chance(0.5) ? null : rng.chance(0.5);
    case 3:
      return '';
    case 4:
      return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: rng.int(4) }, (_, i) => [
          `${rng.pick(PIECES)}${i}`,
          randomValue(rng, depth + 1),
        ]),
      );
  }
}

describe('arrayItemTexts', () => {
  it('splits a top-level array into the texts of its items, whatever their strings hold', async () => {
    const rng = seededRandom(9);
    for (let round = 0; round < 300; round++) {
      const items = Array.from({ length: rng.int(6) }, () => randomValue(rng, 0));
      const indent = [undefined, 2, '\t'][round % 3];
      const text = ` \n${JSON.stringify(items, null, indent)}\r\n `;
      const texts = await split(text);
      expect(texts, text).toBeDefined();
      expect(texts!.map((t) => JSON.parse(t) as unknown)).toEqual(items);
    }
  });

  it('gives nothing for a text that is not one array, and an empty item where the array has one', async () => {
    for (const text of [
      '{"a": [1, 2]}',
      '"[1]"',
      '42',
      '',
      '  ',
      '[1, 2] x',
      '[1, 2] [3]',
      '[1, [2, 3]',
      '["]',
    ]) {
      expect(await split(text), text).toBeUndefined();
    }
    expect(await split('[]')).toEqual([]);
    expect(await split(' [ \n ] ')).toEqual([]);
    // Not valid JSON: each is left for the item's parse to refuse.
    expect(await split('[1,]')).toEqual(['1', '']);
    expect(await split('[,1]')).toEqual(['', '1']);
    expect(await split('[{"a": 1]]')).toEqual(['{"a": 1]']);
  });

  it("gives the thread's event loop turns while it scans", async () => {
    const text = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ text: `Buoy ${i}` })));
    let turned = false;
    setImmediate(() => (turned = true));
    // Its clock at 0 ms: every look at it is a turn, so the first one (after 64 K characters) lets the
    // callback run. Without turns the scan never leaves the thread.
    const texts = await arrayItemTexts(text, new EventLoopTurns(0));
    expect(turned).toBe(true);
    expect(texts).toHaveLength(20_000);
  });
});

describe('objectMemberTexts', () => {
  /** The object the member texts stand for, parsed as the JSON parser does. */
  const parseMembers = (texts: NonNullable<Awaited<ReturnType<typeof members>>>) =>
    Object.fromEntries(
      texts.map(({ key, value, items }) => [
        JSON.parse(key) as string,
        items ? items.map((t) => JSON.parse(t) as unknown) : (JSON.parse(value) as unknown),
      ]),
    );

  it('splits a top-level object into its members, an array value into its items, whatever their strings hold', async () => {
    const rng = seededRandom(11);
    for (let round = 0; round < 300; round++) {
      const object = Object.fromEntries(
        Array.from({ length: rng.int(5) }, (_, i) => [
          `${rng.pick(PIECES)}${i}`,
          rng.chance(0.5)
            ? Array.from({ length: rng.int(5) }, () => randomValue(rng, 0))
            : randomValue(rng, 0),
        ]),
      );
      const indent = [undefined, 2, '\t'][round % 3];
      const text = ` \n${JSON.stringify(object, null, indent)}\r\n `;
      const texts = await members(text);
      expect(texts, text).toBeDefined();
      for (const member of texts!)
        expect(member.items !== undefined, text).toBe(
          Array.isArray(object[JSON.parse(member.key) as string]),
        );
      expect(parseMembers(texts!)).toEqual(object);
    }
  });

  it('gives the members as JSON.parse reads them: a repeated key keeps its place and its last value, __proto__ its own', async () => {
    const text = '{"a": [1], "__proto__": {"x": 1}, "b": "2", "a": [3, 4]}';
    expect(parseMembers((await members(text))!)).toEqual(JSON.parse(text));
    expect(Object.keys(parseMembers((await members(text))!))).toEqual(['a', '__proto__', 'b']);
  });

  it('gives nothing for a text that is not one object', async () => {
    for (const text of [
      '[{"a": 1}]',
      '"{}"',
      '',
      '{"a": 1} x',
      '{"a": 1',
      '{"a": [1, 2}',
      '{"a" 1}',
      '{a: 1}',
      '{"a',
    ]) {
      expect(await members(text), text).toBeUndefined();
    }
    expect(await members(' { } ')).toEqual([]);
    // Not valid JSON: left for the member's parse to refuse.
    expect(await members('{"a": }')).toEqual([{ key: '"a"', value: '' }]);
    expect(await members('{"a": 1;}')).toEqual([{ key: '"a"', value: '1;' }]);
    expect(await members('{"a": [1,]}')).toEqual([{ key: '"a"', value: '', items: ['1', ''] }]);
  });

  it("gives the thread's event loop turns while it scans", async () => {
    const data = Array.from({ length: 20_000 }, (_, i) => ({ text: `Buoy ${i}` }));
    let turned = false;
    setImmediate(() => (turned = true));
    const texts = await objectMemberTexts(JSON.stringify({ version: 3, data }), new EventLoopTurns(0));
    expect(turned).toBe(true);
    expect(texts![1]!.items).toHaveLength(20_000);
  });
});
