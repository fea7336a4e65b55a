import fc from 'fast-check';
import type { FuzzTargetName } from './protocol';
import { storedZip, type ArchiveEntry } from './seeds';

/** Positions are fractions of the current length (in millionths), so one op fits inputs of any size. */
const at = fc.integer({ min: 0, max: 999_999 });
const times = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1) },
  { weight: 3, arbitrary: fc.integer({ min: 2, max: 64 }) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 20_000 }) },
);

export type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'truncate'; at: number }
  | { op: 'delete'; at: number; length: number }
  | { op: 'insert'; at: number; token: number; times: number }
  | { op: 'splice'; at: number; other: number; from: number; length: number }
  | { op: 'repeat'; at: number; length: number; times: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    op: fc.constant('set' as const),
    at,
    value: fc.constantFrom(0x00, 0xff, 0x7f, 0x80, 0x0a, 0x0d, 0x22, 0x3c, 0x5c, 0x2c),
  }),
  fc.record({ op: fc.constant('truncate' as const), at }),
  fc.record({ op: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 4096 }) }),
  fc.record({ op: fc.constant('insert' as const), at, token: fc.nat(), times }),
  fc.record({
    op: fc.constant('splice' as const),
    at,
    other: fc.nat(),
    from: at,
    length: fc.integer({ min: 1, max: 8192 }),
  }),
  fc.record({ op: fc.constant('repeat' as const), at, length: fc.integer({ min: 1, max: 256 }), times }),
);

export interface FuzzCase {
  seed: number;
  source: number;
  mutations: Mutation[];
  /** Archives only: mutate one entry's content (and maybe its name) and zip again, instead of the bytes. */
  inside: { entry: number; rename: number | null } | null;
}

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.record({
  seed: fc.nat(),
  source: fc.nat(),
  mutations: fc.array(mutation, { minLength: 1, maxLength: 6 }),
  inside: fc.option(fc.record({ entry: fc.nat(), rename: fc.option(fc.nat(), { freq: 4 }) }), { freq: 3 }),
});

export interface Corpus {
  /** The seeds, then each input that reached new code (in the order found). */
  seeds: Uint8Array[];
  /** How many of `seeds` are the initial seeds. */
  initial: number;
  tokens: Uint8Array[];
  /** Archive targets: each seed's entries. */
  entries?: ArchiveEntry[][];
}

/** Builds a case's input: byte mutations of a seed, or for archives also mutations of an entry inside. */
export async function buildInput(c: FuzzCase, corpus: Corpus): Promise<Uint8Array> {
  if (!c.inside || !corpus.entries) return mutate(c, corpus.seeds[baseIndex(c.seed, corpus)]!, corpus);
  const entries = corpus.entries[c.seed % corpus.entries.length]!;
  const index = c.inside.entry % entries.length;
  const target = entries[index]!;
  const data = mutate(c, new Uint8Array(target.data), {
    seeds: [new Uint8Array(target.data)],
    tokens: corpus.tokens,
  });
  const name =
    c.inside.rename === null ? target.name : renameEntry(target.name, corpus.tokens, c.inside.rename);
  const changed = entries.map((e, i) => (i === index ? { name, data: Buffer.from(data) } : e));
  return storedZip(changed);
}

function renameEntry(name: string, tokens: Uint8Array[], choice: number): string {
  const token = Buffer.from(tokens[choice % tokens.length]!).toString('latin1');
  const at = choice % (name.length + 1);
  return name.slice(0, at) + token + name.slice(at);
}

/** Inputs are capped so a run of repeats cannot ask a parser for more than the per-file limit. */
const MAX_INPUT_BYTES = 8 * 1024 * 1024;

const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
const pos = (fraction: number, length: number) => Math.floor((fraction / 1_000_000) * (length + 1));

/** Inputs found to reach new code get more turns than the rest: the newest ones most. */
const NEWEST = 8;

/** The corpus entry a case mutates: half the time one of the newest finds (if any), else any entry. */
export function baseIndex(seed: number, corpus: Pick<Corpus, 'seeds' | 'initial'>): number {
  const found = corpus.seeds.length - corpus.initial;
  if (found > 0 && seed % 2 === 0) return corpus.seeds.length - 1 - ((seed >>> 1) % Math.min(found, NEWEST));
  return (seed >>> 1) % corpus.seeds.length;
}

/** Applies a case's mutations to a base input; splices take pieces of the other corpus entries. */
export function mutate(
  c: FuzzCase,
  base: Uint8Array,
  { seeds, tokens }: Pick<Corpus, 'seeds' | 'tokens'>,
): Uint8Array {
  let bytes = base;
  for (const m of c.mutations) {
    const i = Math.min(pos(m.at, bytes.length), bytes.length);
    switch (m.op) {
      case 'flip':
      case 'set':
        if (bytes.length === 0) break;
        bytes = new Uint8Array(bytes);
        bytes[Math.min(i, bytes.length - 1)] =
          m.op === 'flip' ? bytes[Math.min(i, bytes.length - 1)]! ^ (1 << m.bit) : m.value;
        break;
      case 'truncate':
        bytes = bytes.subarray(0, i);
        break;
      case 'delete':
        bytes = concat(bytes.subarray(0, i), bytes.subarray(i + m.length));
        break;
      case 'insert': {
        const token = tokens[m.token % tokens.length]!;
        const run = Buffer.alloc(Math.min(token.length * m.times, MAX_INPUT_BYTES), token);
        bytes = concat(bytes.subarray(0, i), run, bytes.subarray(i));
        break;
      }
      case 'splice': {
        const other = seeds[m.other % seeds.length]!;
        const from = pos(m.from, other.length);
        bytes = concat(bytes.subarray(0, i), other.subarray(from, from + m.length), bytes.subarray(i));
        break;
      }
      case 'repeat': {
        const piece = bytes.subarray(i, i + m.length);
        if (piece.length === 0) break;
        const run = Buffer.alloc(Math.min(piece.length * m.times, MAX_INPUT_BYTES), piece);
        bytes = concat(bytes.subarray(0, i), run, bytes.subarray(i));
        break;
      }
    }
    if (bytes.length > MAX_INPUT_BYTES) bytes = bytes.subarray(0, MAX_INPUT_BYTES);
  }
  return bytes;
}

const GENERIC = [
  '\u0000',
  '\uFFFD',
  '\uFEFF',
  '\u202E',
  '\u200B',
  '\uD83D\uDE80',
  'é',
  '\r\n',
  '\r',
  '\n\n',
  '\\',
  '"',
  "'",
  '<',
  '>',
  '&',
  '{',
  '[',
  '%',
];
const BYTES = [
  [0xed, 0xa0, 0x80],
  [0xc0, 0xaf],
  [0xff, 0xfe],
  [0xfe, 0xff],
  [0x80],
  [0xf4, 0x90, 0x80, 0x80],
];

/** Tokens that mean something to each format's reader: the fuzzer inserts them, often many times over. */
const TOKENS: Record<FuzzTargetName, string[]> = {
  pdf: [
    'obj',
    'endobj',
    ' 0 R',
    'stream\n',
    'endstream',
    'xref\n0 1\n',
    'trailer',
    '<<',
    '>>',
    '/Length 999999999',
    '/Encrypt',
    '/Type /Page',
    '/Kids [',
    '/Parent 1 0 R',
    '/Filter /FlateDecode',
    '%%EOF',
    'startxref\n',
    '(',
    ')',
    'BT /F1 12 Tf (x) Tj ET',
    '1e999999',
    '-2147483649',
  ],
  docx: [
    'PK\u0003\u0004',
    'PK\u0001\u0002',
    'PK\u0005\u0006',
    '<w:p>',
    '</w:p>',
    '<w:t>',
    '<w:tbl><w:tr><w:tc>',
    '<w:pStyle w:val="Heading1"/>',
    '<!DOCTYPE d [<!ENTITY e "eeeeeeeeee">]>',
    '&e;',
    '<![CDATA[',
    'r:id="rId999"',
    'xmlns:w="x"',
    '<w:numPr><w:ilvl w:val="99999"/>',
  ],
  html: [
    '<div>',
    '</div>',
    '<h1>',
    '<h2>',
    '<table><tr><td>',
    '<script>',
    '</script>',
    '<style>',
    '<!--',
    '-->',
    '<![CDATA[',
    '<meta charset="utf-16">',
    '<meta http-equiv="Content-Type" content="text/html; charset=x-unknown">',
    '&#x0;',
    '&#xD800;',
    '&#99999999;',
    '<svg><foreignObject>',
    '<template>',
    '<title>',
    '<li>',
  ],
  markdown: [
    '---\n',
    '---\ntitle: [\n---\n',
    '---\na: &x [*x]\n---\n',
    '```',
    '~~~',
    '# ',
    '\n###### ',
    '> ',
    '- ',
    '1. ',
    '|',
    '| --- |',
    '[^1]',
    '[x]: ',
    '*',
    '_',
    '<div>',
    '{',
    '}',
    'import x from "y"\n',
    'export const a = {\n',
    '<Comp prop={',
    '    ',
    '\t',
  ],
  json: [
    '{',
    '}',
    '[',
    ']',
    '"',
    ',',
    ':',
    '\\u0000',
    '\\uD800',
    '1e999999',
    '-0',
    'null',
    'true',
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{}}}',
    '// c\n',
    '/*',
    '9007199254740993',
  ],
  csv: ['"', '""', ',', ';', '\t', '|', '\r\n', '\n', '=cmd|', '"a\nb"', ',,,,,,,,', '\uFEFF', 'sep=;\n'],
  zip: [
    'PK\u0003\u0004',
    'PK\u0001\u0002',
    'PK\u0005\u0006',
    'PK\u0006\u0006',
    'PK\u0006\u0007',
    '../',
    '/etc/',
    'C:\\',
    '\u0000',
    '__MACOSX/',
    '.jsonl',
    '.exe',
    '\u00ff\u00ff\u00ff\u00ff',
  ],
  jsonl: [
    '\n',
    '{"text":',
    '"embedding":[',
    '0.1,',
    'NaN',
    '1e400',
    '"metadata":',
    '{"text":"x","embedding":[1]}\n',
    '\uFEFF',
    '\r',
    '[',
    ']',
    '}',
  ],
};

/** What lies inside archives: DOCX holds XML, a bulk ZIP holds every other format. */
const INNER: Partial<Record<FuzzTargetName, FuzzTargetName[]>> = {
  zip: ['html', 'csv', 'markdown', 'json', 'jsonl'],
};

export function tokensFor(target: FuzzTargetName): Uint8Array[] {
  const inner = (INNER[target] ?? []).flatMap((t) => TOKENS[t]);
  return [
    ...[...TOKENS[target], ...inner, ...GENERIC].map((t) => new Uint8Array(Buffer.from(t, 'utf8'))),
    ...BYTES.map((b) => new Uint8Array(b)),
  ];
}
