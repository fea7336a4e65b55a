import { z } from 'zod';
import { ListingIdSchema } from './listings';
import { unknownFieldsError } from './unknownFields';

/** DESIGN §2 bounds of a retrieval request. */
export const TOP_K_DEFAULT = 5;
export const TOP_K_MAX = 20;
export const QUERY_MAX_CHARS = 8_000;
export const FILTER_KEYS_MAX = 32;
export const FILTER_VALUES_MAX = 1_000;

export const RETRIEVAL_MODES = ['hybrid', 'dense', 'lexical'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];

export const FILTER_OPERATORS = [
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const scalar = z.union([z.string(), z.number(), z.boolean()], {
  error: 'expected a string, number or boolean',
});
const bound = z.union([z.number(), z.string()], {
  error: 'expected a number or a string (strings compare by code point, e.g. ISO dates)',
});
const scalarList = z
  .array(scalar, { error: 'expected an array of strings, numbers or booleans' })
  .max(FILTER_VALUES_MAX, { error: `at most ${FILTER_VALUES_MAX} values` });

export const FilterOperatorsSchema = z
  .strictObject(
    {
      $eq: scalar
        .optional()
        .meta({ description: 'Equal (an array value matches when any element is equal).' }),
      $ne: scalar.optional().meta({ description: 'Not equal; also matches chunks without the key.' }),
      $gt: bound.optional(),
      $gte: bound.optional(),
      $lt: bound.optional(),
      $lte: bound.optional(),
      $in: scalarList.optional().meta({ description: 'Equal to one of the values.' }),
      $nin: scalarList
        .optional()
        .meta({ description: 'Equal to none of the values (or the key is absent).' }),
      $exists: z
        .boolean({ error: 'expected true or false' })
        .optional()
        .meta({ description: 'The key is present (true) or absent (false).' }),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown operator ${issue.keys.map((k) => `'${k}'`).join(', ')}; supported: ${FILTER_OPERATORS.join(' ')}`
          : undefined,
    },
  )
  .refine((ops) => Object.values(ops).some((v) => v !== undefined), {
    error: `an operator object needs at least one operator (${FILTER_OPERATORS.join(' ')})`,
    // Only for an object that is otherwise right: `{"$foo": 1}` is an unknown operator, said once.
    when: (payload) => payload.issues.length === 0,
  })
  .meta({ id: 'FilterOperators', description: 'Conditions on one metadata key, ANDed.' });

/** Why a filter value was refused, said in terms of what the caller wrote. */
function filterValueError(issue: { input?: unknown; errors?: { path: PropertyKey[]; message: string }[][] }) {
  const { input } = issue;
  if (input === null) return 'null cannot be matched; use {"$exists": false} for chunks without this key';
  if (Array.isArray(input))
    return 'an array cannot be matched exactly; use {"$in": [...]} to match any of several values';
  if (isPlainObject(input)) {
    const inner = issue.errors?.at(-1)?.[0];
    if (inner)
      return inner.path.length > 0 ? `${inner.path.map(String).join('.')}: ${inner.message}` : inner.message;
  }
  return 'expected a string, number or boolean (exact match) or an operator object such as {"$gte": 2}';
}

export const FilterValueSchema = z.union([z.string(), z.number(), z.boolean(), FilterOperatorsSchema], {
  error: filterValueError,
});

const filterKey = z.string().refine((key) => !key.startsWith('$'), {
  error: (issue) =>
    `'${String(issue.input)}' is not a metadata key; logical operators are not supported (the keys of filters are ANDed)`,
});

const filterRecord = z
  .record(filterKey, FilterValueSchema, {
    error: (issue) => (issue.code === 'invalid_key' ? issue.issues?.[0]?.message : undefined),
  })
  .refine((filters) => Object.keys(filters).length <= FILTER_KEYS_MAX, {
    error: `at most ${FILTER_KEYS_MAX} keys`,
  });

export const FiltersSchema = z
  // JSON.parse keeps a `"__proto__"` key as an ordinary one, and zod's record skips it without a word
  // (assigning it would replace the result's prototype): the filter was dropped and the query answered
  // unfiltered. It is refused instead; a metadata key of that name (a CSV header, a JSON field) is kept
  // but cannot be filtered on.
  .preprocess((value, ctx) => {
    if (isPlainObject(value) && Object.prototype.hasOwnProperty.call(value, '__proto__')) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        path: ['__proto__'],
        message: "a key named '__proto__' cannot be filtered on",
      });
    }
    return value;
  }, filterRecord)
  .meta({
    id: 'Filters',
    description:
      'Metadata filters: keys are `sourceMetadata` keys as stored (dotted keys such as `author.name` included), ANDed. A value is an exact match (string, number or boolean) or an operator object with `$eq $ne $gt $gte $lt $lte $in $nin $exists`. A number also matches a numeric string (CSV cells are strings); an array in the metadata matches when any element does. See docs/retrieval.md.',
    example: { format: 'markdown', page: { $gte: 2, $lte: 5 }, tags: { $in: ['faq', 'howto'] } },
  });
export type Filters = z.output<typeof FiltersSchema>;

const retrieveFields = {
  listingId: ListingIdSchema.meta({ description: 'Listing to query.' }),
  query: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(QUERY_MAX_CHARS, { error: `at most ${QUERY_MAX_CHARS.toLocaleString('en-US')} characters` })
    // Control characters (a NUL) count as white space: a query of them asks nothing.
    .refine((q) => q.replace(/[\s\p{Cc}]/gu, '').length > 0, {
      error: 'must not be empty or only white space',
      // An empty query is said once, by min(1).
      when: (payload) => payload.issues.length === 0,
    })
    .meta({ description: `Natural-language search query, 1..${QUERY_MAX_CHARS} characters.` }),
  topK: z
    .number()
    .int()
    .min(1)
    .max(TOP_K_MAX)
    .default(TOP_K_DEFAULT)
    .meta({ description: `Number of chunks to return, 1..${TOP_K_MAX} (default ${TOP_K_DEFAULT}).` }),
  minScore: z
    .number()
    .min(0)
    .max(1)
    .default(0)
    .meta({ description: 'Minimum relevance score, 0..1 (scores are comparable across queries).' }),
  filters: FiltersSchema.optional(),
  mode: z.enum(RETRIEVAL_MODES).default('hybrid').meta({
    description:
      'KB Studio extension: `hybrid` (default; full-text BM25 fused with the embedding model), `dense` (embeddings only) or `lexical` (full-text only).',
  }),
};
const RETRIEVE_FIELDS = Object.keys(retrieveFields);

export const RetrieveRequestSchema = z
  .strictObject(retrieveFields, {
    // A misspelt field (`topk`, `minscore`) would otherwise be dropped and its default used without a word.
    error: unknownFieldsError(RETRIEVE_FIELDS, ' (snake_case also accepted, e.g. top_k)'),
  })
  .meta({ id: 'RetrieveRequest' });
export type RetrieveRequest = z.input<typeof RetrieveRequestSchema>;
export type ValidRetrieveRequest = z.output<typeof RetrieveRequestSchema>;

export const ChunkSchema = z
  .object({
    text: z.string(),
    score: z.number().min(0).max(1).meta({ description: 'Relevance, 0..1; see docs/retrieval.md.' }),
    sourceMetadata: z.record(z.string(), z.unknown()).meta({
      description:
        'Metadata of the chunk: `source`, `format`, `documentId`, `chunkIndex`, plus `page`, `row`, `headings`, front-matter fields or CSV columns where they exist.',
    }),
  })
  .meta({ id: 'Chunk' });
export type Chunk = z.infer<typeof ChunkSchema>;

export const RetrievalResultSchema = z
  .object({
    chunks: z.array(ChunkSchema).meta({ description: 'Best first.' }),
    listingId: z.string(),
    queryId: z.string().meta({ example: 'qry_8ZkQ2vNw4TxPb1Lc' }),
    latencyMs: z.number(),
  })
  .meta({ id: 'RetrievalResult' });
export type RetrievalResult = z.infer<typeof RetrievalResultSchema>;

/** The `data` of the SSE `done` event that ends a successful stream. */
export const RetrievalDoneSchema = z
  .object({
    listingId: z.string(),
    queryId: z.string(),
    latencyMs: z.number(),
    count: z.number().int().meta({ description: 'Number of `chunk` events sent.' }),
  })
  .meta({ id: 'RetrievalDone' });
export type RetrievalDone = z.infer<typeof RetrievalDoneSchema>;
