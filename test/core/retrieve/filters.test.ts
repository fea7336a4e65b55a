import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFilters } from '../../../src/core/retrieve/filters';
import { FiltersSchema } from '../../../src/shared/retrieval';
import { buildKnowledgeBase, type TestKnowledgeBase } from './knowledgeBase';

let kb: TestKnowledgeBase;
let odd: string;
beforeAll(async () => {
  kb = await buildKnowledgeBase();
  // Keys with dots, quotes and brackets as JSON or CSV files can hold them.
  odd = await kb.addListing(
    [
      { text: 'first odd item', 'a"b': 'quoted', 'x]y[0]': 1 },
      { text: 'second odd item', 'a"b': 'other', 'x]y[0]': 2 },
    ],
    'odd.json',
  );
});
afterAll(() => kb.close());

/** Topics of every chunk passing the filter (dense mode reaches every chunk), sorted. */
async function matching(filters: unknown, listingId = kb.listingId, field = 'topic'): Promise<unknown[]> {
  const result = await kb.services.retrieval.retrieve(
    { listingId, query: 'news about the world', mode: 'dense', topK: 20, filters },
    'studio',
  );
  return result.chunks.map((c) => c.sourceMetadata[field]).sort();
}

describe('metadata filters', () => {
  it('matches exact strings, numbers, booleans, dotted keys and array elements', async () => {
    expect(await matching({ topic: 'space' })).toEqual(['space']);
    expect(await matching({ year: 2021 })).toEqual(['medicine', 'politics']);
    expect(await matching({ draft: true })).toEqual(['animals', 'medicine']);
    expect(await matching({ 'author.name': 'Ada' })).toEqual(['animals', 'cooking']);
    expect(await matching({ tags: 'animals' })).toEqual(['animals', 'animals']);
    expect(await matching({ topic: 'animals', draft: true })).toEqual(['animals']);
    expect(await matching({ format: 'json', source: 'items.json' })).toHaveLength(8);
  });

  it('matches a number against numeric strings (CSV cells), never a string against a number', async () => {
    expect(await matching({ rating: 4.5 })).toEqual(['animals']);
    expect(await matching({ rating: { $gte: 3.5 } })).toEqual(['animals', 'animals', 'space', 'weather']);
    expect(await matching({ year: '2021' })).toEqual([]);
    expect(await matching({ draft: 'true' })).toEqual([]);
  });

  it('supports $eq and $ne ($ne also matches chunks without the key)', async () => {
    expect(await matching({ topic: { $eq: 'finance' } })).toEqual(['finance']);
    expect(await matching({ topic: { $ne: 'animals' } })).toEqual([
      'cooking',
      'finance',
      'medicine',
      'politics',
      'space',
      'weather',
    ]);
    expect(await matching({ 'author.name': { $ne: 'Ada' } })).toEqual([
      'animals',
      'finance',
      'medicine',
      'politics',
      'space',
      'weather',
    ]);
    expect(await matching({ tags: { $ne: 'animals' } })).not.toContain('animals');
  });

  it('supports $gt $gte $lt $lte on numbers and on strings (ISO dates), combined within a key', async () => {
    expect(await matching({ year: { $gt: 2021 } })).toEqual(['finance', 'space', 'weather']);
    expect(await matching({ year: { $gte: 2022 } })).toEqual(['finance', 'space', 'weather']);
    expect(await matching({ year: { $lt: 2019 } })).toEqual(['animals']);
    expect(await matching({ year: { $lte: 2019 } })).toEqual(['animals', 'animals']);
    expect(await matching({ year: { $gte: 2020, $lt: 2022 } })).toEqual(['cooking', 'medicine', 'politics']);
    expect(await matching({ published: { $gte: '2022-01-01' } })).toEqual(['finance', 'space', 'weather']);
    expect(await matching({ published: { $lt: '2019-01-01' } })).toEqual(['animals']);
  });

  it('supports $in and $nin over scalars and array elements', async () => {
    expect(await matching({ topic: { $in: ['space', 'cooking', 'nothing'] } })).toEqual(['cooking', 'space']);
    expect(await matching({ year: { $in: [2018, 2023] } })).toEqual(['animals', 'finance']);
    expect(await matching({ tags: { $in: ['food', 'science'] } })).toEqual(['cooking', 'space']);
    expect(await matching({ topic: { $in: [] } })).toEqual([]);
    expect(await matching({ topic: { $nin: ['animals', 'weather', 'space', 'finance'] } })).toEqual([
      'cooking',
      'medicine',
      'politics',
    ]);
    expect(await matching({ draft: { $in: [true] } })).toEqual(['animals', 'medicine']);
  });

  it('supports $exists', async () => {
    expect(await matching({ 'author.name': { $exists: true } })).toEqual([
      'animals',
      'animals',
      'cooking',
      'medicine',
    ]);
    expect(await matching({ 'author.name': { $exists: false } })).toEqual([
      'finance',
      'politics',
      'space',
      'weather',
    ]);
    expect(await matching({ tags: { $exists: true } })).toHaveLength(8);
    expect(await matching({ missing: { $exists: true } })).toEqual([]);
  });

  it('reaches keys holding quotes and brackets, which never become SQL', async () => {
    expect(await matching({ 'a"b': 'quoted' }, odd, 'a"b')).toEqual(['quoted']);
    expect(await matching({ 'x]y[0]': { $gt: 1 } }, odd, 'a"b')).toEqual(['other']);
    expect(await matching({ "topic' OR 1=1 --": 'x' })).toEqual([]);
  });
});

describe('parseFilters', () => {
  it('normalizes exact values and operator objects, keys in order', () => {
    expect(parseFilters({ year: { $gte: 2020, $lt: 2022 }, author: 'Ada' })).toEqual([
      { key: 'author', conditions: [{ op: 'eq', value: 'Ada' }] },
      {
        key: 'year',
        conditions: [
          { op: 'gte', value: 2020 },
          { op: 'lt', value: 2022 },
        ],
      },
    ]);
    expect(parseFilters(undefined)).toEqual([]);
  });

  it.each([
    [
      { author: { $regex: 'A.*' } },
      "filters.author: unknown operator '$regex'; supported: $eq $ne $gt $gte $lt $lte $in $nin $exists",
    ],
    [{ author: null }, 'filters.author: null cannot be matched; use {"$exists": false}'],
    [{ tags: ['a', 'b'] }, 'filters.tags: an array cannot be matched exactly; use {"$in": [...]}'],
    [{ year: { $in: 2020 } }, 'filters.year: $in: expected an array of strings, numbers or booleans'],
    [{ year: { $in: [null] } }, 'filters.year: $in.0: expected a string, number or boolean'],
    [{ year: { $gt: true } }, 'filters.year: $gt: expected a number or a string'],
    [{ year: { $exists: 'yes' } }, 'filters.year: $exists: expected true or false'],
    [{ year: {} }, 'filters.year: an operator object needs at least one operator'],
    [{ $or: [{ a: 1 }] }, "filters.$or: '$or' is not a metadata key; logical operators are not supported"],
    ['topic = space', 'filters: Invalid input: expected record, received string'],
    // As JSON.parse gives it: zod's record skipped the key, and the query ran unfiltered.
    [
      JSON.parse('{"format": "pdf", "__proto__": "x"}'),
      "filters.__proto__: a key named '__proto__' cannot be",
    ],
  ])('refuses %j naming the key and operator', (filters, message) => {
    expect(() => parseFilters(filters)).toThrow(
      expect.objectContaining({ code: 'invalid_request', message: expect.stringContaining(message) }),
    );
  });

  it('says an unknown operator once, not also that the object has no operator', () => {
    const issues = FiltersSchema.safeParse({ a: { $foo: 1 } }).error?.issues.map((issue) => issue.message);
    expect(issues).toEqual([
      "unknown operator '$foo'; supported: $eq $ne $gt $gte $lt $lte $in $nin $exists",
    ]);
  });
});
