import { describe, expect, it } from 'vitest';
import { JsonMemberStream, JsonSyntaxError } from '../../../src/core/embed/jsonMembers';

type Member = [parent: string | undefined, key: string, value: unknown];

function members(text: string, chunkSize: number, expand = ['vectors']): Member[] {
  const out: Member[] = [];
  const stream = new JsonMemberStream(
    (parent, key, raw) => out.push([parent, key, JSON.parse(raw)]),
    new Set(expand),
  );
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += chunkSize) stream.push(bytes.subarray(i, i + chunkSize));
  stream.end();
  return out;
}

const doc = {
  size: 3,
  ratio: -1.5e-3,
  flag: true,
  nothing: null,
  label: 'a "quoted" {brace} [bracket] \\ back',
  words: ['the', 'café', '"', '}'],
  vectors: { the: [0.1, -2, 3e-5, 0], 'say "hi"': [1, 2], '}{': [[1], { a: '[' }] },
  nested: { vectors: { notExpanded: 1 } },
  empty: {},
};

describe('JsonMemberStream', () => {
  it.each([1, 2, 3, 7, 1 << 16])(
    'yields every member and the expanded object entries (chunks of %i bytes)',
    (size) => {
      for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
        expect(members(text, size)).toEqual([
          [undefined, 'size', 3],
          [undefined, 'ratio', -1.5e-3],
          [undefined, 'flag', true],
          [undefined, 'nothing', null],
          [undefined, 'label', doc.label],
          [undefined, 'words', doc.words],
          ['vectors', 'the', [0.1, -2, 3e-5, 0]],
          ['vectors', 'say "hi"', [1, 2]],
          ['vectors', '}{', [[1], { a: '[' }]],
          [undefined, 'nested', { vectors: { notExpanded: 1 } }],
          [undefined, 'empty', {}],
        ]);
      }
    },
  );

  it('keeps multi-byte characters split across chunks intact', () => {
    expect(members('{"vectors":{"naïve café":[1]}}', 1)).toEqual([['vectors', 'naïve café', [1]]]);
  });

  it('handles an empty object and an expanded empty object', () => {
    expect(members(' { } ', 1)).toEqual([]);
    expect(members('{"vectors":{},"n":1}', 2)).toEqual([[undefined, 'n', 1]]);
  });

  it.each([
    ['[1,2]', /expected "\{"/],
    ['{"a" 1}', /expected ":"/],
    ['{"a":1 "b":2}', /expected "," or "\}"/],
    ['{"a":1,}', /expected a member name/],
    ['{"a":[1,2', /ends before its closing/],
    ['{"a":1} x', /unexpected text after the end/],
  ])('rejects malformed JSON %s with the byte offset', (text, message) => {
    expect(() => members(text, 3)).toThrow(JsonSyntaxError);
    expect(() => members(text, 3)).toThrow(message);
  });
});
