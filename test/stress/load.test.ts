import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMemoryStatus } from '../../bench/rss';
import { openServices } from '../../src/db/services';
import { FIXTURES, REPO_ROOT, runCli } from '../helpers/e2e';
import { tempDir } from '../helpers/studio';
import {
  seedStudio,
  serve,
  storedUpload,
  waitFor,
  writeCorpus,
  type ServeChild,
} from '../faults/studioProcess';

/**
 * Load on a real `kbstudio serve` child over loopback: autocannon against /v1/retrieve and /v1/listings
 * while bulk uploads ingest in the background. `npm test` runs 5 s; `npm run test:stress` 60 s.
 * Figures go to the console and test-results/load.json (see docs/reliability.md, Load).
 */
const STRESS = process.env.KBSTUDIO_STRESS === '1';
const SOAK_SECONDS = STRESS ? 60 : 5;
const CONNECTIONS = 16;
/** The key limit of a served studio (spec §8): 100 requests a minute per key. */
const KEY_LIMIT = 100;
/** Keys enough that the soak measures serving, not refusing: ~KEY_LIMIT requests each at most. */
const SOAK_KEYS = STRESS ? 800 : 120;
const EXACT_KEYS = 8;

const dir = tempDir('kbs-load-');
const dataDir = join(dir.path, 'data');
let server: ServeChild;
let listingId: string;
let uploadKey: string;
let soakKeys: string[];
let exactKeys: string[];

beforeAll(async () => {
  const seeded = await seedStudio(dataDir, 'Load KB');
  listingId = seeded.listingId;
  uploadKey = seeded.apiKey;
  const base = await writeCorpus(dir.path, 'base', 30, 8);
  await runCli(
    dataDir,
    ['ingest', '--listing', listingId, base.folder, join(FIXTURES, 'simple.json')],
    120_000,
  );
  // Keys are made in-process before the server starts: a CLI run per key would take minutes.
  const services = openServices(dataDir);
  const wallet = services.wallets.defaultWallet().address;
  soakKeys = Array.from({ length: SOAK_KEYS }, (_, i) => services.apiKeys.create(wallet, `soak ${i}`).key);
  exactKeys = Array.from({ length: EXACT_KEYS }, (_, i) => services.apiKeys.create(wallet, `exact ${i}`).key);
  services.close();
  server = await serve(dataDir, uploadKey);
}, 300_000);

afterAll(async () => {
  await server?.stop();
  dir.remove();
});

/** Resident set size of the server process, in MB. */
function rssMb(pid: number): number {
  return Math.round((readMemoryStatus(pid)?.rss ?? 0) / 2 ** 20);
}

const QUERIES = [
  'archive ledger orbit',
  'falcon glacier',
  'summit velvet ember',
  'harbor lantern quartz',
  'prism beacon',
];

/** Requests alternating /v1/retrieve and /v1/listings, each with the next key round-robin. */
function requests(
  keys: string[],
  onStatus: (status: number, headers: Record<string, string>) => void,
): autocannon.Request[] {
  let next = 0;
  const withKey = (req: autocannon.Request): autocannon.Request => ({
    ...req,
    headers: { ...req.headers, authorization: `Bearer ${keys[next++ % keys.length]}` },
  });
  const record = (status: number, _body: string, _context: object, headers?: IncomingHttpHeaders) =>
    onStatus(status, (headers ?? {}) as Record<string, string>);
  return [
    {
      method: 'POST',
      path: '/v1/retrieve',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req) =>
        withKey({
          ...req,
          body: JSON.stringify({ listingId, query: QUERIES[next % QUERIES.length], topK: 5 }),
        }),
      onResponse: record,
    },
    { method: 'GET', path: '/v1/listings?limit=20', setupRequest: withKey, onResponse: record },
  ];
}

describe('load on /v1/retrieve and /v1/listings', () => {
  it(`the key limit is exact under concurrency: ${EXACT_KEYS} keys at ${KEY_LIMIT} each give exactly ${EXACT_KEYS * KEY_LIMIT} successes, the rest 429 with Retry-After`, async () => {
    const statuses = new Map<number, number>();
    let missingRetryAfter = 0;
    const result = await autocannon({
      url: server.url,
      connections: 24,
      amount: EXACT_KEYS * KEY_LIMIT * 2,
      requests: requests(exactKeys, (status, headers) => {
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        const retryAfter = Object.entries(headers).find(
          ([name]) => name.toLowerCase() === 'retry-after',
        )?.[1];
        if (status === 429 && !(Number(retryAfter) >= 1)) missingRetryAfter++;
      }),
    });
    console.info(`rate limit: ${JSON.stringify(Object.fromEntries(statuses))} in ${result.duration} s`);
    expect(statuses.get(200)).toBe(EXACT_KEYS * KEY_LIMIT);
    expect(statuses.get(429)).toBe(EXACT_KEYS * KEY_LIMIT);
    expect(missingRetryAfter).toBe(0);
    expect(result.errors + result.timeouts).toBe(0);
  }, 120_000);

  it(`serves ${SOAK_SECONDS} s at full concurrency while uploads ingest: no 5xx, no errors, memory flat`, async () => {
    // Warm-up, so the start figure is the steady state rather than the empty process.
    await autocannon({
      url: server.url,
      connections: 4,
      amount: 200,
      requests: requests(soakKeys.slice(-10), () => {}),
    });
    const rssStart = rssMb(server.child.pid!);

    let soaking = true;
    const uploads: string[] = [];
    const ingesting = (async () => {
      for (let round = 0; soaking; round++) {
        const corpus = await writeCorpus(dir.path, `load${round}`, 40, 10);
        const form = new FormData();
        form.append('files', new Blob([readFileSync(corpus.zip)]), `load${round}.zip`);
        form.append('config', JSON.stringify({ listing_id: listingId }));
        const res = await server.v1('/v1/upload', { method: 'POST', body: form });
        const id = ((await res.json()) as any).data.uploadId as string;
        await waitFor(
          async () => (['completed', 'failed'].includes(storedUpload(dataDir, id).status) ? true : undefined),
          600_000,
          `upload ${id}`,
        );
        uploads.push(storedUpload(dataDir, id).status);
      }
    })();

    const statuses = new Map<number, number>();
    const result = await autocannon({
      url: server.url,
      connections: CONNECTIONS,
      duration: SOAK_SECONDS,
      requests: requests(soakKeys, (status) => statuses.set(status, (statuses.get(status) ?? 0) + 1)),
    });
    soaking = false;
    await ingesting;
    await new Promise((r) => setTimeout(r, 1000));
    const rssEnd = rssMb(server.child.pid!);

    const figures = {
      seconds: SOAK_SECONDS,
      connections: CONNECTIONS,
      requests: result.requests.total,
      perSecond: result.requests.average,
      statuses: Object.fromEntries(statuses),
      errors: result.errors,
      timeouts: result.timeouts,
      latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      rssMb: { start: rssStart, end: rssEnd },
      uploads,
    };
    console.info(`soak: ${JSON.stringify(figures)}`);
    mkdirSync(join(REPO_ROOT, 'test-results'), { recursive: true });
    writeFileSync(
      join(REPO_ROOT, 'test-results', `load-${STRESS ? 'stress' : 'short'}.json`),
      JSON.stringify(figures, null, 2),
    );

    expect(result['5xx']).toBe(0);
    expect(result.errors + result.timeouts).toBe(0);
    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(uploads.length).toBeGreaterThan(0);
    expect(uploads.every((s) => s === 'completed')).toBe(true);
    // Flat: the soak adds no more than a bounded working set (caches, the ingested chunks' pages).
    expect(rssEnd).toBeLessThan(rssStart + 200);
  }, 600_000);
});
