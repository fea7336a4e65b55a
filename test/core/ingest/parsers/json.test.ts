import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidDocument } from '../../../../src/core/ingest/errors';
import { PARSE_WHOLE_BELOW_CHARS, parseJson } from '../../../../src/core/ingest/parsers/json';

const repoRoot = new URL('../../../../', import.meta.url);
const fixtures = new URL('../shared/fixtures/docs/', repoRoot);

function fixture(name: string) {
  return parseJson({ bytes: readFileSync(new URL(name, fixtures)), source: name });
}

function json(text: string, source = 'items.json') {
  return parseJson({ bytes: new TextEncoder().encode(text), source });
}

describe('parseJson on the shared fixtures', () => {
  it('takes each element text from its "text" field and flattens the nested metadata (simple.json)', async () => {
    const doc = await fixture('simple.json');

    expect(doc.format).toBe('json');
    expect(doc.sections.map((s) => s.text)).toEqual([
      'These are a few of my favorite things:',
      'Parrots',
      'Hockey',
      'Analysis',
      'This is my first thought. This is my second thought.',
      'This is my third thought.',
      '2023',
      'DOYLESTOWN, PA 18901',
    ]);
    expect(doc.sections[1]?.metadata).toEqual({
      item: 1,
      element_id: 'b334c93e9b1cbca3b6f6d78ce8bc2484',
      'metadata.category_depth': 0,
      'metadata.file_directory': 'unstructured/example-docs',
      'metadata.filename': 'simple.docx',
      'metadata.filetype': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'metadata.languages': ['eng'],
      'metadata.last_modified': '2024-07-06T16:44:51',
      'metadata.parent_id': 'a06d2d9e65212d4aa955c3ab32950ffa',
      type: 'ListItem',
    });
    expect(doc.warnings).toBeUndefined();
  });

  it('writes records without a text field as "key: value" lines, other fields as metadata (arbitrary-records.json)', async () => {
    const doc = await fixture('arbitrary-records.json');

    expect(doc.sections).toEqual([
      { text: 'sku: GRD-8842\nname: Garden Trowel', metadata: { item: 0, price: 12.5, in_stock: true } },
      { text: 'sku: GRD-1290\nname: Watering Can', metadata: { item: 1, price: 18, in_stock: false } },
      { text: 'sku: GRD-3317\nname: Pruning Shears', metadata: { item: 2, price: 24.99, in_stock: true } },
    ]);
  });

  it('reads a single object as one document (single-line-object.json)', async () => {
    const doc = await fixture('single-line-object.json');

    expect(doc.sections).toEqual([
      { text: 'sku: GRD-8842\nname: Garden Trowel', metadata: { item: 0, price: 12.5, in_stock: true } },
    ]);
  });
});

describe('parseJson fields', () => {
  it('chooses the first non-empty of text, content, body and flattens nested fields with dotted keys', async () => {
    const doc = await json(
      JSON.stringify([
        {
          title: 'Birds',
          content: 'Sparrows are small.',
          body: 'not used',
          author: { name: 'Ada', address: { city: 'London' } },
          tags: ['field', 'notes'],
          meta: {},
        },
        { text: '', content: '   ', body: 'From the body.' },
        { title: 'No text field', author: { name: 'Bo' }, views: 3, reviewed: null },
        { text: 'Reserved names are kept too.', item: 'widget', source: 'web' },
      ]),
    );

    expect(doc.sections).toEqual([
      {
        text: 'Sparrows are small.',
        metadata: {
          item: 0,
          title: 'Birds',
          body: 'not used',
          'author.name': 'Ada',
          'author.address.city': 'London',
          tags: ['field', 'notes'],
          meta: {},
        },
      },
      { text: 'From the body.', metadata: { item: 1, text: '', content: '   ' } },
      { text: 'title: No text field\nauthor.name: Bo', metadata: { item: 2, views: 3, reviewed: null } },
      { text: 'Reserved names are kept too.', metadata: { item: 3, item_2: 'widget', source_2: 'web' } },
    ]);
  });

  it('skips items without any text and says which in the warnings', async () => {
    const doc = await json(
      '[{"n": 1}, {"text": "kept"}, {"flag": true, "sizes": [1, 2], "points": [{"x": 1}], "blank": " "}]',
    );

    expect(doc.sections).toEqual([{ text: 'kept', metadata: { item: 1 } }]);
    expect(doc.warnings).toEqual([
      '2 item(s) had no text (no non-empty "text", "content" or "body" field and no other string field) and were skipped: items 0, 2 (0-based).',
    ]);
  });

  it('warns on an empty array', async () => {
    const doc = await json('[]');

    expect(doc.sections).toEqual([]);
    expect(doc.warnings).toEqual(['The JSON array is empty: no documents.']);
  });
});

describe('parseJson without a text field: every string of the item, nested ones included', () => {
  it('reads a record list wrapped in an object as one document, each line naming its record', async () => {
    const doc = await json(
      '{"version":3,"articles":[{"title":"First article","body":"The body of the first article talks about rockets."},{"title":"Second","body":"Second body about submarines."}]}',
    );

    expect(doc.sections).toEqual([
      {
        text: [
          'articles[0].title: First article',
          'articles[0].body: The body of the first article talks about rockets.',
          'articles[1].title: Second',
          'articles[1].body: Second body about submarines.',
        ].join('\n'),
        metadata: { item: 0, version: 3 },
      },
    ]);
    expect(doc.warnings).toBeUndefined();
  });

  it('writes the strings of arrays: a list of strings on one line, records field by field', async () => {
    const doc = await json(
      '{"name":"Widget","features":["waterproof","shockproof"],"reviews":[{"user":"bob","comment":"Great product, very durable"}]}',
    );

    expect(doc.sections).toEqual([
      {
        text: [
          'name: Widget',
          'features: waterproof, shockproof',
          'reviews[0].user: bob',
          'reviews[0].comment: Great product, very durable',
        ].join('\n'),
        // A list of scalars stays in the metadata too, where a filter can match its elements.
        metadata: { item: 0, features: ['waterproof', 'shockproof'] },
      },
    ]);
  });

  it('writes every value of an array holding objects or arrays, in order, and keeps the other fields as metadata', async () => {
    const doc = await json(
      JSON.stringify([
        {
          title: 'Route',
          stops: [{ name: 'Quay', at: { x: 1, y: 2 }, open: true, note: null, tags: ['ferry', 7] }, {}],
          grid: [['a', 'b'], [1], [null, ' ']],
          mixed: ['one', { two: 'deux' }, 3, null, ''],
          sizes: ['S', 42],
          counts: [1, 2],
          empty: [{}, []],
          author: { name: 'Ada', age: 36, blank: '' },
        },
      ]),
    );

    expect(doc.sections).toEqual([
      {
        text: [
          'title: Route',
          'stops[0].name: Quay',
          'stops[0].at.x: 1',
          'stops[0].at.y: 2',
          'stops[0].open: true',
          'stops[0].tags: ferry, 7',
          'grid[0]: a, b',
          'grid[1]: 1',
          'mixed: one, 3',
          'mixed[1].two: deux',
          'sizes: S, 42',
          'author.name: Ada',
        ].join('\n'),
        metadata: {
          item: 0,
          sizes: ['S', 42],
          counts: [1, 2],
          empty: [{}, []],
          'author.age': 36,
          'author.blank': '',
        },
      },
    ]);
  });

  it('refuses an item whose lines would repeat a long key above many values', async () => {
    const values = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, 'v']));
    const item = { [`a${'x'.repeat(10_000)}`]: { values } };

    await expect(json(JSON.stringify([{ text: 'ok' }, item]), 'keys.json')).rejects.toThrow(
      'keys.json: item 1 (0-based) has no "text", "content" or "body" field, and its fields written as "key: value" lines would be more than 8 times its size (long keys above many values); give it a "text" field.',
    );
  });

  it('reads a large wrapped export whole, its lines within bounds', async () => {
    const data = Array.from({ length: 50_000 }, (_, i) => ({
      id: i,
      title: `Buoy ${i}`,
      body: `Buoy ${i} marks the channel.`,
      tags: ['sea', 'light'],
    }));
    const text = JSON.stringify({ data });
    expect(text.length).toBeGreaterThan(PARSE_WHOLE_BELOW_CHARS);

    const doc = await json(text, 'export.json');

    expect(doc.sections).toHaveLength(1);
    const lines = doc.sections[0]!.text.split('\n');
    expect(lines).toHaveLength(50_000 * 4);
    expect(lines.slice(-4)).toEqual([
      'data[49999].id: 49999',
      'data[49999].title: Buoy 49999',
      'data[49999].body: Buoy 49999 marks the channel.',
      'data[49999].tags: sea, light',
    ]);
    expect(doc.sections[0]!.metadata).toEqual({ item: 0 });
  });
});

describe('parseJson refusals', () => {
  it('gives the line and column of a syntax error', async () => {
    const parsing = json('[\n  {"a": "x"},\n  {"b" 2}\n]\n', 'broken.json');

    await expect(parsing).rejects.toBeInstanceOf(InvalidDocument);
    await expect(parsing).rejects.toThrow(
      "broken.json: invalid JSON at line 3, column 8: Expected ':' after property name.",
    );
  });

  it('locates errors V8 reports without a position', async () => {
    await expect(json('{\n  "a": tru\n}', 'typo.json')).rejects.toThrow(
      /^typo\.json: invalid JSON at line 2, column 8: Unexpected token/,
    );
    await expect(json('[{"a": 1}', 'cut.json')).rejects.toThrow(
      /^cut\.json: invalid JSON at line 1, column 10: /,
    );
  });

  it('refuses an array holding a non-object, naming its index', async () => {
    await expect(json('[{"text": "ok"}, 42]', 'mixed.json')).rejects.toThrow(
      'mixed.json: item 1 (0-based) is a number; expected an array of objects or a single object.',
    );
  });

  it('refuses an item nested deeper than 64 levels, which could not be stored as JSON metadata', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;

    await expect(json(`[{"text": "ok"}, {"text": "x", "nested": ${deep}}]`, 'deep.json')).rejects.toThrow(
      'deep.json: item 1 (0-based) nests more than 64 levels deep.',
    );
  });

  it('refuses a top-level scalar and an empty file', async () => {
    await expect(json('"just text"', 'scalar.json')).rejects.toThrow(
      'scalar.json: expected an array of objects or a single object, found a string.',
    );
    await expect(json(' \n', 'empty.json')).rejects.toThrow('empty.json: the file is empty.');
  });
});

describe('parseJson on the server thread', () => {
  // Large enough to be parsed an item at a time: its refusals must read as a whole parse's do.
  const lines = Array.from({ length: 40_000 }, (_, i) => `  {"text": "Buoy ${i} marks the channel."}`);
  const large = (at: number, line: string) =>
    `[\n${lines.map((l, i) => (i === at ? line : l)).join(',\n')}\n]\n`;

  it('refuses a large array as it refuses a small one: the syntax error placed, a non-object named', async () => {
    expect(large(0, lines[0]!).length).toBeGreaterThan(PARSE_WHOLE_BELOW_CHARS);
    await expect(json(large(30_000, '  {"text" "no colon"}'), 'big.json')).rejects.toThrow(
      "big.json: invalid JSON at line 30002, column 11: Expected ':' after property name.",
    );
    await expect(
      json(large(30_000, '  {"text": "a ] and a , and a \\" in a string"}')),
    ).resolves.toMatchObject({
      sections: expect.arrayContaining([
        expect.objectContaining({ text: 'a ] and a , and a " in a string' }),
      ]),
    });
    await expect(json(large(39_999, '  42'), 'big.json')).rejects.toThrow(
      'big.json: item 39999 (0-based) is a number; expected an array of objects or a single object.',
    );
    await expect(json(`${large(0, lines[0]!)}]`, 'big.json')).rejects.toThrow(
      /^big\.json: invalid JSON at line 40003, column 1: /,
    );
  });

  it('reads a large object holding a record list as a whole parse does, and refuses it as one', async () => {
    const wrapped = (line: string) =>
      `{"version": 3, "__proto__": 7, "data": [\n${lines.map((l, i) => (i === 20_000 ? line : l)).join(',\n')}\n], "version": 4}\n`;
    const text = wrapped(lines[20_000]!);
    expect(text.length).toBeGreaterThan(PARSE_WHOLE_BELOW_CHARS);

    const doc = await json(text, 'wrapped.json');

    expect(doc.sections).toHaveLength(1);
    expect(doc.sections[0]!.metadata).toEqual({ item: 0, version: 4, ['__proto__']: 7 });
    expect(doc.sections[0]!.text.split('\n').slice(0, 3)).toEqual([
      'data[0].text: Buoy 0 marks the channel.',
      'data[1].text: Buoy 1 marks the channel.',
      'data[2].text: Buoy 2 marks the channel.',
    ]);
    await expect(json(wrapped('  {"text" "no colon"}'), 'wrapped.json')).rejects.toThrow(
      "wrapped.json: invalid JSON at line 20002, column 11: Expected ':' after property name.",
    );
    await expect(json(`${text}}`, 'wrapped.json')).rejects.toThrow(
      /^wrapped\.json: invalid JSON at line 40003, column 1: /,
    );
  });

  it("gives the thread's event loop turns while it reads a large file's items", async () => {
    // 100,000 items take well over EventLoopTurns' 20 ms to read (about 250 ms here): a callback queued
    // before must run before they are all read. Without the turns the parse never left the thread.
    const items = Array.from({ length: 100_000 }, (_, i) => ({
      text: `Buoy ${i} marks the channel.`,
      id: i,
    }));
    const bytes = new TextEncoder().encode(JSON.stringify(items));
    let turned = false;
    setImmediate(() => (turned = true));
    const document = await parseJson({ bytes, source: 'buoys.json' });
    expect(turned).toBe(true);
    expect(document.sections).toHaveLength(100_000);
    expect(document.sections[99_999]).toEqual({
      text: 'Buoy 99999 marks the channel.',
      metadata: { item: 99_999, id: 99_999 },
    });
  });
});
