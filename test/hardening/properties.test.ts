import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { routeTable, type DefinedRoute } from '../../src/server/route';
import { ERROR_STATUS } from '../../src/shared/errors';
import { FIXTURES, json, startStudio } from '../helpers/studio';
import { STRESS, bodyFor, fieldsFor, hostileString, type BodyCase } from './hostile';

/**
 * Every /v1 and /studio endpoint, enumerated from the server's own route table, gets random, oversized,
 * wrongly typed and unicode-hostile path parameters, query strings and bodies. Each answer must be a
 * 2xx, or a 4xx with the DESIGN §2 error body — never a 5xx, a hang or a crash.
 */
const RUNS = Number(process.env.KBSTUDIO_PROPERTY_RUNS) || (STRESS ? 1_000 : 50);
const REQUEST_TIMEOUT_MS = 10_000;
const TEST_TIMEOUT_MS = STRESS ? 1_800_000 : 60_000;

const studio = await startStudio({ rateLimits: { perKey: 1_000_000_000 } });
const wallet = studio.services.wallets.defaultWallet().address;
const apiKey = studio.services.apiKeys.create(wallet, 'properties').key;
const draft = studio.services.listings.create(
  { title: 'Fuzz target', accessModel: 'one_time', price: 1 },
  wallet,
);
await studio.services.ingestion.run({
  listingId: draft.id,
  inputs: [{ path: join(FIXTURES, 'stanley-cups.csv') }],
  atomic: true,
  limits: STUDIO_LIMITS,
});
const documentId = String(
  studio.services.db.prepare('SELECT id FROM documents WHERE listing_id = ?').pluck().get(draft.id),
);
const table = routeTable(studio.server.app);
const routes = table.defined.filter((r) => r.path.startsWith('/v1/') || r.path.startsWith('/studio/'));
const tried = new Map<string, number>();
const routeName = (r: DefinedRoute) => `${r.method.toUpperCase()} ${r.path}`;

afterAll(async () => {
  await studio.close();
});

/** Real ids, so that some requests reach the handler's logic past the lookup. */
function knownValues(route: DefinedRoute, param: string): string[] {
  if (param === 'address') return [wallet];
  if (route.method === 'delete') return ['lst_missing000000'];
  if (route.path.includes('/documents/')) return [documentId];
  if (param === 'id' || param === 'listing_id') return [draft.id];
  return [];
}

/** Percent-encodes UTF-8 bytes (encodeURIComponent throws on lone surrogates); printable `%` runs go raw. */
function pathSegment(value: string): string {
  if (/^[\x21-\x7e]*%[\x21-\x7e]*$/.test(value)) return value;
  return [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('');
}

function queryString(fields: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values)
      params.append(key, typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

interface Attempt {
  path: string;
  body?: BodyCase | FormData;
}

function attempts(route: DefinedRoute): fc.Arbitrary<Attempt> {
  const def = route.definition;
  const params = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
  const paramArbs = params.map((p) => {
    const known = knownValues(route, p);
    return known.length
      ? fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...known) }, { weight: 2, arbitrary: hostileString })
      : hostileString;
  });
  const path = fc.tuple(...paramArbs, fc.oneof(fieldsFor(def.query), fc.constant({}))).map((values) => {
    const query = values.pop() as Record<string, unknown>;
    let i = 0;
    const filled = route.path.replace(/:([A-Za-z_]+)/g, () => pathSegment(values[i++] as string));
    const qs = queryString(query);
    // Node's HTTP parser refuses a request line over 16 KB (431) before Express sees it;
    // that limit has its own test, so generated URLs stay under it.
    return (filled + (qs.length > 6_000 ? '' : qs)).slice(0, 12_000);
  });
  const hasBody = route.method !== 'get';
  if (!hasBody) return path.map((p) => ({ path: p }));
  const body: fc.Arbitrary<BodyCase | FormData> = def.formBody
    ? fc.oneof(
        { weight: 3, arbitrary: formBodies(def.formBody) },
        { weight: 1, arbitrary: bodyFor(def.body) },
      )
    : bodyFor(def.body);
  return fc.tuple(path, body).map(([p, b]) => ({ path: p, body: b }));
}

/** Multipart forms with the documented parts, unknown parts, hostile values and random file bytes. */
function formBodies(schema: NonNullable<DefinedRoute['definition']['formBody']>): fc.Arbitrary<FormData> {
  const names = Object.keys(schema.shape);
  const fileParts: string[] = names.filter((n) => n === 'file' || n === 'files');
  const textParts = names.filter((n) => !fileParts.includes(n));
  const fileName = fc.oneof(
    fc.constantFrom('a.md', 'doc.csv', 'x.zip', '../../evil.md', '/etc/passwd', 'a\u0000b.md', '', '.'),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
  const fileBytes = fc.oneof(
    fc.uint8Array({ maxLength: 256 }),
    fc.constantFrom('# Title\n\nSome text about hockey.', 'a,b\n1,2\n', 'PK\u0003\u0004broken'),
  );
  const part = fc.oneof(
    fc.tuple(fc.constantFrom(...fileParts, 'other'), fileBytes, fileName).map(([n, bytes, name]) => ({
      n,
      file: { bytes, name },
    })),
    fc
      .tuple(
        fc.constantFrom(...textParts, 'other', '__proto__'),
        fc.oneof(
          hostileString,
          fieldsFor(undefined).map((o) => JSON.stringify(o)),
        ),
      )
      .map(([n, value]) => ({ n, value })),
  );
  return fc.array(part, { maxLength: 4 }).map((parts) => {
    const form = new FormData();
    for (const p of parts) {
      if ('file' in p && p.file) form.append(p.n, new Blob([p.file.bytes]), p.file.name);
      else form.append(p.n, (p as { value: string }).value);
    }
    return form;
  });
}

async function send(route: DefinedRoute, attempt: Attempt): Promise<Response> {
  const headers = new Headers();
  if (route.path.startsWith('/v1/')) headers.set('Authorization', `Bearer ${apiKey}`);
  else headers.set('X-Studio-Token', studio.studioToken);
  let body: RequestInit['body'];
  if (attempt.body instanceof FormData) body = attempt.body;
  else if (attempt.body) {
    body = typeof attempt.body.text === 'string' ? attempt.body.text : Buffer.from(attempt.body.text);
    if (attempt.body.contentType) headers.set('Content-Type', attempt.body.contentType);
  }
  return fetch(studio.url + attempt.path, {
    method: route.method.toUpperCase(),
    headers,
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}

const describeAttempt = (a: Attempt) =>
  `${a.path.length > 300 ? `${a.path.slice(0, 300)}… (${a.path.length} chars)` : a.path} ${
    a.body instanceof FormData
      ? `multipart [${[...a.body.keys()].join(', ')}]`
      : a.body
        ? `${a.body.label}: ${String(typeof a.body.text === 'string' ? a.body.text.slice(0, 200) : `${a.body.text.length} bytes`)}`
        : ''
  }`;

/** The top-level string values of a JSON body (a file name the message may name). */
function bodyStrings(attempt: Attempt): string[] {
  if (!attempt.body || attempt.body instanceof FormData || typeof attempt.body.text !== 'string') return [];
  try {
    const value: unknown = JSON.parse(attempt.body.text);
    return value && typeof value === 'object'
      ? Object.values(value).filter((v) => typeof v === 'string')
      : [];
  } catch {
    return [];
  }
}

/** A 2xx, or a 4xx with the §2 error body whose message names what was wrong. */
async function checkAnswer(res: Response, attempt: Attempt, fields: string[]): Promise<void> {
  const what = describeAttempt(attempt);
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel(); // an SSE stream stays open: the headers are the answer.
    return;
  }
  expect(res.status, what).toBeGreaterThanOrEqual(400);
  const text = await res.text();
  expect(res.status, `${what} → ${text.slice(0, 500)}`).toBeLessThan(500);
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${res.status} without a JSON error body: ${text.slice(0, 200)}`);
  }
  expect(Object.keys(ERROR_STATUS), what).toContain(body.error?.code);
  expect(body.error.status, what).toBe(res.status);
  expect(body.error.requestId, what).toBe(res.headers.get('x-request-id'));
  expect(typeof body.error.message, what).toBe('string');
  if (body.error.code === 'invalid_request') {
    // "topK: Too big…", "body: not valid JSON", "config.chunking: …": the field first, or at least named.
    const message = body.error.message as string;
    // Per-file refusals name the file instead (DESIGN §2), e.g. "id.json is not JSON: …".
    const named =
      /^[^\s:]+: \S/.test(message) ||
      fields.some((f) => message.includes(f)) ||
      /^\S+\.(json|jsonl|zip|md|csv|pdf|docx|html?) /i.test(message) ||
      bodyStrings(attempt).some((v) => v.trim().length > 0 && message.startsWith(`${v.trim()} `));
    expect(named, `${what}: "${message}" names no field`).toBe(true);
  }
}

/** What an invalid_request message may name: the route's parameters and fields, or the part of the request. */
function fieldNames(route: DefinedRoute): string[] {
  const def = route.definition;
  const keysOf = (schema: unknown) =>
    schema instanceof Object && 'shape' in schema ? Object.keys((schema as { shape: object }).shape) : [];
  return [
    ...[...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!),
    ...[def.params, def.query, def.body, def.formBody].flatMap(keysOf),
    'body',
    'query',
    'path',
  ];
}

describe('route table', () => {
  it('declares every /v1 and /studio route through defineRoutes (schemas, docs, coverage)', () => {
    expect(table.undeclared).toEqual([]);
    expect(routes.filter((r) => r.path.startsWith('/v1/')).length).toBeGreaterThanOrEqual(8);
    expect(routes.filter((r) => r.path.startsWith('/studio/')).length).toBeGreaterThanOrEqual(30);
  });

  it('documents exactly the /v1 routes of the table in GET /v1/openapi.json', async () => {
    const doc = await json(await studio.api('/v1/openapi.json'));
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    const inTable = routes
      .filter((r) => r.path.startsWith('/v1/'))
      .map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`)
      .sort();
    expect(documented).toEqual(inTable);
  });
});

describe.each(routes.map((r) => [routeName(r), r] as const))('%s', (name, route) => {
  it(
    `answers ${RUNS} hostile requests with a 2xx or a 4xx error body, never a 5xx or a hang`,
    async () => {
      let count = 0;
      const fields = fieldNames(route);
      const outcome = await fc.check(
        fc.asyncProperty(attempts(route), async (attempt) => {
          count++;
          await checkAnswer(await send(route, attempt), attempt, fields);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      if (outcome.failed) {
        const [attempt] = outcome.counterexample ?? [];
        const cause =
          outcome.errorInstance instanceof Error ? outcome.errorInstance.message : outcome.errorInstance;
        throw new Error(
          `${name} failed (seed ${outcome.seed}, path ${outcome.counterexamplePath}) on ${attempt ? describeAttempt(attempt) : '?'}: ${String(cause).slice(0, 1_000)}`,
        );
      }
      tried.set(name, count);
      // Nothing leaked onto Object.prototype from the `__proto__` / `constructor` keys.
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );
});

/** Header values a fetch can carry: printable ASCII and Latin-1, up to a few KB. */
const headerValue = fc.oneof(
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 200,
  }),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 50 }),
  fc.constantFrom(
    '',
    ' ',
    'x'.repeat(8_000),
    `kbs_${'A'.repeat(32)}`,
    '1:2:3',
    'a:b:c:d',
    '::',
    `${'1'.repeat(44)}:${'1'.repeat(88)}:0`,
  ),
);

describe('Authorization headers', () => {
  it(
    `answers ${RUNS * 4} hostile Bearer / Wallet / other credentials with a 401 error body`,
    async () => {
      const scheme = fc.constantFrom(
        'Bearer',
        'bearer',
        'Wallet',
        'WALLET',
        'Basic',
        '',
        'Bearer  ',
        'Wallet\t',
      );
      await fc.assert(
        fc.asyncProperty(scheme, headerValue, fc.constantFrom('GET', 'POST'), async (s, value, method) => {
          const res = await fetch(`${studio.url}/v1/${method === 'GET' ? 'listings' : 'retrieve'}`, {
            method,
            headers: { Authorization: `${s} ${value}`.trim(), 'Content-Type': 'application/json' },
            body: method === 'POST' ? '{"listingId":"lst_x","query":"q"}' : undefined,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          const body = await json(res);
          expect(res.status, `${s} ${value.slice(0, 100)}`).toBe(401);
          expect(body.error).toMatchObject({ code: 'unauthorized', status: 401 });
          expect(body.error.message).toMatch(/Authorization|API key|signature|Wallet|timestamp|address/i);
        }),
        { numRuns: RUNS * 4, endOnFailure: true },
      );
    },
    TEST_TIMEOUT_MS,
  );
});

describe('coverage', () => {
  it('tried every route of the table with the full number of inputs, and the server still answers', async () => {
    const missing = routes.map(routeName).filter((n) => (tried.get(n) ?? 0) < RUNS);
    expect(missing).toEqual([]);
    const total = [...tried.values()].reduce((a, b) => a + b, 0);
    console.info(`properties: ${tried.size} routes, ${total} inputs (${RUNS} per route)`);
    expect((await studio.api('/v1/listings', { key: apiKey })).status).toBe(200);
    // Refused and finished uploads leave no received files behind (a refused one used to keep its archive).
    await studio.services.uploads.idle();
    const tmp = join(studio.services.dataDir, 'tmp');
    const left = existsSync(tmp) ? readdirSync(tmp).filter((d) => d.startsWith('upl_')) : [];
    expect(left).toEqual([]);
  });
});
