import fc from 'fast-check';
import { z } from 'zod';

/** Whether the long runs of `npm run test:stress` were asked for. */
export const STRESS = process.env.KBSTUDIO_STRESS === '1';

/** Values that have broken servers before: unicode oddities, numbers as text, paths, injection. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83dy',
  '\u202eevil\u202c',
  '\u200f\u200e\u061c',
  '\ufeff',
  '\uffff\ufffe',
  '𝕳𝖊𝖑𝖑𝖔 👩‍👩‍👧‍👦',
  'e\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301',
  '%',
  '%00',
  '%E0%A4%A',
  '%ZZ',
  '..',
  '../../etc/passwd',
  '..\\..\\windows',
  '/',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '-0',
  '0x1F',
  '9007199254740993',
  '1.7976931348623157e309',
  '-1',
  '0',
  '1',
  '20',
  '21',
  '100',
  '101',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '*',
  '"',
  "'",
  "' OR 1=1 --",
  '"); DROP TABLE listings; --',
  'title:x OR y NEAR(a b) "unterminated',
  'a AND OR NOT',
  '^$.*+?()[]{}|\\',
  '<script>alert(1)</script>',
  '${7*7}{{7*7}}',
  'lst_0000000000000000',
  'kbs_00000000000000000000000000000000',
  '11111111111111111111111111111111',
  'x'.repeat(101),
  'é'.repeat(5_000),
];

/** Own `__proto__` / `constructor` keys, as JSON.parse creates them from a request body. */
export const PROTO_POLLUTION = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}';

/** Any UTF-16 code unit, lone surrogates included. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** A string that may hold anything: nasty constants, any code units, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: anyCodeUnit, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((s) => s.repeat(1_000)) },
);

/** Numbers at and past every edge, as JSON numbers (NaN and Infinity become null in JSON). */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 0.5, 20, 21, 100, 101, 1e21, -1e21, 1e308, -1e308, 2 ** 53 + 2, 5e-324),
  fc.integer(),
  fc.double({ noNaN: false }),
);

/** A JSON value of the wrong kind for almost any field. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constant(JSON.parse(PROTO_POLLUTION) as unknown) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
};

/** The JSON Schema of a route's zod input schema (what a client may send). */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** A plausible valid value for a JSON Schema node, so that some generated requests pass validation. */
function plausible(node: JsonSchema | undefined): fc.Arbitrary<unknown> {
  if (!node) return fc.string({ maxLength: 10 });
  if (node.const !== undefined) return fc.constant(node.const);
  if (node.enum) return fc.constantFrom(...node.enum);
  const alternatives = node.anyOf ?? node.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map(plausible));
  const type = Array.isArray(node.type) ? node.type[0] : node.type;
  switch (type) {
    case 'integer':
    case 'number': {
      const min = node.minimum ?? (node.exclusiveMinimum !== undefined ? node.exclusiveMinimum + 1 : 0);
      const max = node.maximum ?? (node.exclusiveMaximum !== undefined ? node.exclusiveMaximum - 1 : 1000);
      return type === 'integer'
        ? fc.integer({ min: Math.ceil(min), max: Math.max(Math.ceil(min), Math.floor(max)) })
        : fc.double({ min, max: Math.max(min, max), noNaN: true, noDefaultInfinity: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(plausible(node.items), { maxLength: 3 });
    case 'object':
      return fc.record(
        Object.fromEntries(Object.entries(node.properties ?? {}).map(([k, v]) => [k, plausible(v)])),
        { requiredKeys: [] },
      );
    default:
      return fc.string({
        unit: 'grapheme-ascii',
        minLength: Math.max(1, node.minLength ?? 1),
        maxLength: Math.max(1, Math.min(node.maxLength ?? 12, 12)),
      });
  }
}

/** An object with the schema's own field names (and their snake_case forms), each plausible or hostile. */
export function fieldsFor(schema: z.ZodType | undefined): fc.Arbitrary<Record<string, unknown>> {
  const json = schema ? inputJsonSchema(schema) : {};
  const props = Object.entries(json.properties ?? {});
  const value = (node: JsonSchema) =>
    fc.oneof({ weight: 2, arbitrary: plausible(node) }, { weight: 3, arbitrary: hostileValue });
  const known = fc.record(Object.fromEntries(props.map(([k, node]) => [k, value(node)])), {
    requiredKeys: [],
  });
  const extra = fc.dictionary(
    fc.oneof(
      hostileString,
      fc.constantFrom('__proto__', 'constructor', 'prototype', ...props.map(([k]) => snake(k))),
    ),
    hostileValue,
    { maxKeys: 3 },
  );
  return fc.tuple(known, extra).map(([a, b]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of [...Object.entries(b), ...Object.entries(a)]) {
      Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
    }
    return out;
  });
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `depth` nested arrays or objects as JSON text (built as text: a JS object that deep would overflow). */
export const deepJson = (depth: number, kind: 'array' | 'object'): string =>
  kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** A request body: JSON text or raw bytes, with the Content-Type it is sent with. */
export interface BodyCase {
  text: string | Uint8Array;
  contentType?: string;
  label: string;
}

/** Bodies for a route with a JSON body (or none): field-shaped, wrongly shaped, deep, huge, not JSON. */
export function bodyFor(schema: z.ZodType | undefined): fc.Arbitrary<BodyCase> {
  const json = (label: string) => (value: unknown) => ({
    text: JSON.stringify(value) ?? 'null',
    contentType: 'application/json',
    label,
  });
  const keys = Object.keys((schema && inputJsonSchema(schema).properties) ?? {});
  const firstKey = keys[0] ?? 'query';
  return fc.oneof(
    { weight: 8, arbitrary: fieldsFor(schema).map(json('fields')) },
    { weight: 2, arbitrary: hostileValue.map(json('wrong shape')) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(64, 5_000, 100_000), fc.constantFrom<'array' | 'object'>('array', 'object'))
        .map(([depth, kind]) => ({
          text: `{"${firstKey}":${deepJson(depth, kind)}}`,
          contentType: 'application/json',
          label: `nested ${depth} deep`,
        })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(900_000, 1_100_000).map((n) => ({
        text: `{"${firstKey}":"${'\u05d0'.repeat(n / 2)}"}`,
        contentType: 'application/json',
        label: `${n}-byte string`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          fc.constantFrom('{', '{"a":}', 'nul', '\u0000', '{"a":1}{"b":2}', '"\\ud800"', "{'a':1}"),
          fc.uint8Array({ maxLength: 64 }),
        )
        .map((text) => ({ text, contentType: 'application/json', label: 'not JSON' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fieldsFor(schema),
          fc.constantFrom(
            undefined,
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=utf-16',
            'application/json; charset=latin1',
            'multipart/form-data; boundary=x',
          ),
        )
        .map(([fields, contentType]) => ({
          text: JSON.stringify(fields),
          contentType,
          label: 'content type',
        })),
    },
  );
}
