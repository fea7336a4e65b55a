import { createServer as createHttpServer, request, type Server } from 'node:http';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiKeyService,
  hashApiKey,
  type ApiKeyRecord,
  type ApiKeyRepository,
} from '../../src/core/keys/apiKeys';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { routeTable, type DefinedRoute } from '../../src/server/route';
import { CHROMIUM, REPO_ROOT, SCREENSHOTS, startServer, stopServer } from '../helpers/e2e';
import { FIXTURES, json, startStudio, tempDir, type TestStudio } from '../helpers/studio';
import { writeZip } from '../helpers/zip';

let studio: TestStudio;
const scratch = tempDir('kbs-access-hardening-');

beforeAll(async () => {
  studio = await startStudio();
});
afterAll(async () => {
  await studio.close();
  scratch.remove();
});

const studioFetch = (path: string, init: RequestInit = {}) =>
  fetch(studio.url + path, {
    ...init,
    headers: { 'X-Studio-Token': studio.studioToken, 'Content-Type': 'application/json', ...init.headers },
  });

describe('API keys', () => {
  it('are stored only as SHA-256 hashes: the SQLite files hold no plaintext key', async () => {
    const wallet = studio.services.wallets.defaultWallet().address;
    const res = await studioFetch('/studio/keys', {
      method: 'POST',
      body: JSON.stringify({ wallet, label: 'x' }),
    });
    expect(res.status).toBe(201);
    const { key } = (await json(res)).data as { key: string };
    expect(key).toMatch(/^kbs_[0-9A-Za-z]{32}$/);
    expect((await studio.api('/v1/listings', { key })).status).toBe(200);
    studio.services.db.pragma('wal_checkpoint(TRUNCATE)');
    const files = readdirSync(studio.services.dataDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(db|sqlite|sqlite3)(-wal|-journal)?$/.test(f))
      .map((f) => readFileSync(join(studio.services.dataDir, f)));
    expect(files.length).toBeGreaterThan(0);
    const everything = Buffer.concat(files);
    expect(everything.includes(Buffer.from(hashApiKey(key)))).toBe(true);
    expect(everything.includes(Buffer.from(key))).toBe(false);
    expect(everything.includes(Buffer.from(key.slice(4)))).toBe(false);
    expect(everything.includes(Buffer.from(key.slice(8, 28)))).toBe(false);
  });

  it('are found by hash lookup: the plaintext never reaches the store, a wrong key takes the same path', () => {
    const seen: unknown[][] = [];
    const record: ApiKeyRecord = {
      id: 'key_1',
      keyHash: '',
      prefix: 'kbs_abcd',
      label: '',
      wallet: generateKeypair().address,
      createdAt: new Date().toISOString(),
      lastUsedAt: new Date().toISOString(),
      revokedAt: null,
    };
    const stored = new Map<string, ApiKeyRecord>();
    const repo = new Proxy({} as ApiKeyRepository, {
      get:
        (_t, method: string) =>
        (...args: unknown[]) => {
          seen.push([method, ...args]);
          if (method === 'insert') stored.set((args[0] as ApiKeyRecord).keyHash, args[0] as ApiKeyRecord);
          if (method === 'findActiveByHash') return stored.get(args[0] as string);
          return undefined;
        },
    });
    const keys = new ApiKeyService(repo);
    const created = keys.create(record.wallet);
    const wrong = `kbs_${'A'.repeat(32)}`;
    seen.length = 0;
    expect(keys.authenticate(created.key)).toMatchObject({ wallet: record.wallet });
    expect(keys.authenticate(wrong)).toBeUndefined();
    // One hash lookup per attempt, right or wrong; no call ever carries the key itself.
    const lookups = seen.filter(([m]) => m === 'findActiveByHash');
    expect(lookups).toEqual([
      ['findActiveByHash', hashApiKey(created.key)],
      ['findActiveByHash', hashApiKey(wrong)],
    ]);
    expect(JSON.stringify(seen)).not.toContain(created.key);
    // Malformed keys are refused by their (public) format, before any lookup.
    seen.length = 0;
    expect(keys.authenticate('kbs_short')).toBeUndefined();
    expect(keys.refusal('kbs_short')).toMatch(/not in the form of a KB Studio key/);
    expect(seen).toEqual([]);
    // The 401's reason: a second lookup by hash, only after a refusal, never with the key itself.
    expect(keys.refusal(wrong)).toMatch(/no such key/);
    expect(seen).toEqual([['findByHash', hashApiKey(wrong)]]);
  });

  it('compares the studio token in constant time', () => {
    const guard = readFileSync(join(REPO_ROOT, 'src/server/middleware/studioGuard.ts'), 'utf8');
    expect(guard).toMatch(/given\.length !== expected\.length \|\| !timingSafeEqual\(given, expected\)/);
    expect(guard).not.toMatch(/===\s*token|token\s*===/);
  });

  it('refuses a revoked key on the very next request', async () => {
    const wallet = studio.services.wallets.defaultWallet().address;
    const created = (
      await json(await studioFetch('/studio/keys', { method: 'POST', body: JSON.stringify({ wallet }) }))
    ).data as { id: string; key: string };
    expect((await studio.api('/v1/listings', { key: created.key })).status).toBe(200);
    expect((await studioFetch(`/studio/keys/${created.id}/revoke`, { method: 'POST' })).status).toBe(200);
    const res = await studio.api('/v1/listings', { key: created.key });
    expect(res.status).toBe(401);
    expect((await json(res)).error).toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/^Invalid API key: key kbs_\w{4}… was revoked at \d{4}-\d\d-\d\dT/),
    });
  });
});

describe("wallet B's key cannot see wallet A's drafts, uploads, credentials or queries (every /v1 route)", () => {
  const a = { key: '', wallet: '' };
  const b = { key: '', wallet: '' };
  /** Strings only A may ever see. */
  const secrets: Record<string, string> = {};
  let published = '';

  beforeAll(async () => {
    const s = studio.services;
    a.wallet = s.wallets.defaultWallet().address;
    a.key = s.apiKeys.create(a.wallet).key;
    b.wallet = generateKeypair().address;
    b.key = s.apiKeys.create(b.wallet).key;

    const draft = s.listings.create(
      { title: 'Zebra draft of A', description: 'unpublished work', accessModel: 'one_time', price: 1 },
      a.wallet,
    );
    secrets.draftId = draft.id;
    secrets.draftTitle = 'Zebra draft of A';

    const zip = await writeZip(join(scratch.path, 'a.zip'), {
      'notes.md': '# Okapi notes\n\nPrivate text of A.',
    });
    const form = new FormData();
    form.append('files', new Blob([readFileSync(zip)]), 'a.zip');
    form.append('config', JSON.stringify({ chunking: 'recursive' }));
    const upload = await studio.api('/v1/upload', { key: a.key, method: 'POST', body: form });
    expect(upload.status).toBe(202);
    const accepted = (await json(upload)).data as { uploadId: string; listingId: string };
    secrets.uploadId = accepted.uploadId;
    secrets.uploadListing = accepted.listingId;
    await s.uploads.idle();

    // A holds a credential on C's published listing and queries it.
    const c = s.wallets.create('C').address;
    const listing = s.listings.create({ title: 'Public listing of C', accessModel: 'one_time', price: 1 }, c);
    await s.ingestion.run({
      listingId: listing.id,
      inputs: [{ path: join(FIXTURES, 'stanley-cups.csv') }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    published = (await s.publishing.publish(listing.id)).id;
    await s.credentials.grant(published, a.wallet);
    const retrieved = await studio.api('/v1/retrieve', {
      key: a.key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ listingId: published, query: 'quokka secret question of A' }),
    });
    expect(retrieved.status).toBe(200);
    secrets.queryId = (await json(retrieved)).queryId as string;
    secrets.query = 'quokka secret question of A';
  });

  const v1Routes = () =>
    routeTable(studio.server.app).defined.filter(
      (r) => r.path.startsWith('/v1/') && r.path !== '/v1/openapi.json',
    );

  /** Requests aimed at A's things: every id of A in every path parameter, and in a body's listing id. */
  function probes(route: DefinedRoute): { path: string; body?: string }[] {
    const ids = [secrets.draftId!, secrets.uploadId!, secrets.uploadListing!, published, secrets.queryId!];
    const params = [...route.path.matchAll(/:([A-Za-z_]+)/g)];
    const paths = params.length
      ? ids.map((id) => route.path.replace(/:([A-Za-z_]+)/g, encodeURIComponent(id)))
      : [route.path];
    if (route.method === 'get') return paths.map((path) => ({ path }));
    if (route.definition.formBody) return [];
    return paths.flatMap((path) =>
      ids.map((listingId) => ({ path, body: JSON.stringify({ listingId, query: 'okapi', topK: 5 }) })),
    );
  }

  const call = (key: string, method: string, probe: { path: string; body?: string }) =>
    studio.api(probe.path, {
      key,
      method: method.toUpperCase(),
      ...(probe.body ? { body: probe.body, headers: { 'Content-Type': 'application/json' } } : {}),
    });

  it("shows A's things to A (so the probes can tell)", async () => {
    const seen = [
      await (await call(a.key, 'get', { path: `/v1/listings/${secrets.draftId}` })).text(),
      await (await call(a.key, 'get', { path: `/v1/upload/${secrets.uploadId}` })).text(),
      await (await call(a.key, 'get', { path: '/v1/credentials' })).text(),
      await (await call(a.key, 'get', { path: '/v1/listings' })).text(),
    ].join('\n');
    expect(seen).toContain(secrets.draftTitle);
    expect(seen).toContain(secrets.uploadId);
    expect(seen).toContain(published);
  });

  it("answers B on every /v1 route without any of A's private data", async () => {
    const routes = v1Routes();
    expect(routes.length).toBeGreaterThanOrEqual(7);
    const privateMarks = [
      secrets.draftId!,
      secrets.draftTitle!,
      secrets.uploadId!,
      secrets.uploadListing!,
      secrets.query!,
      secrets.queryId!,
    ];
    let probed = 0;
    for (const route of routes) {
      for (const probe of probes(route)) {
        probed++;
        const res = await call(b.key, route.method, probe);
        const text = await res.text();
        const where = `${route.method.toUpperCase()} ${probe.path} ${probe.body ?? ''} → ${res.status}`;
        expect(res.status, where).toBeLessThan(500);
        // An error may repeat the id the caller sent ("Listing 'lst_…' was not found"), nothing else.
        const sent = probe.path + (probe.body ?? '');
        for (const mark of privateMarks.filter((m) => res.ok || !sent.includes(m))) {
          expect(text, `${where} leaks ${mark}`).not.toContain(mark);
        }
        // Credential routes answer about B's own credentials: none.
        if (route.path.startsWith('/v1/credentials') && res.status === 200) {
          expect(text, where).not.toContain(a.wallet);
        }
      }
    }
    expect(probed).toBeGreaterThan(20);
  });

  it("refuses B's upload into A's draft or A's upload listing, leaking nothing", async () => {
    const zip = await writeZip(join(scratch.path, 'b.zip'), { 'b.md': '# B was here' });
    for (const listingId of [secrets.draftId!, secrets.uploadListing!]) {
      const form = new FormData();
      form.append('files', new Blob([readFileSync(zip)]), 'b.zip');
      form.append('config', JSON.stringify({ listing_id: listingId }));
      const res = await studio.api('/v1/upload', { key: b.key, method: 'POST', body: form });
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(text).not.toContain(secrets.draftTitle);
      expect(text).not.toContain(secrets.uploadId);
    }
    const chunks = studio.services.db
      .prepare("SELECT count(*) FROM chunks WHERE text LIKE '%B was here%'")
      .pluck()
      .get();
    expect(chunks).toBe(0);
  });

  it("refuses B's reads of A's draft and upload with 404, not 403 (no existence oracle)", async () => {
    const draft = await call(b.key, 'get', { path: `/v1/listings/${secrets.draftId}` });
    expect(draft.status).toBe(404);
    const upload = await call(b.key, 'get', { path: `/v1/upload/${secrets.uploadId}` });
    expect(upload.status).toBe(404);
    const retrieve = await call(b.key, 'post', {
      path: '/v1/retrieve',
      body: JSON.stringify({ listingId: secrets.draftId, query: 'okapi' }),
    });
    expect(retrieve.status).toBe(404);
  });
});

describe('the /studio API from a page of another origin (real Chromium)', () => {
  const data = tempDir('kbs-origin-');
  let child: Awaited<ReturnType<typeof startServer>>['child'] | undefined;
  let studioUrl = '';
  let studioLink = '';
  let token = '';
  let evil: Server;
  let evilUrl = '';
  let browser: Browser;

  beforeAll(async () => {
    const started = await startServer(data.path);
    child = started.child;
    studioUrl = started.url;
    studioLink = started.studioUrl;
    token = started.token;
    expect(token.length).toBeGreaterThanOrEqual(32);
    evil = createHttpServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<!doctype html><title>other site</title><p>hello');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://localhost:${(evil.address() as { port: number }).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => evil?.close(resolve));
    await stopServer(child);
    data.remove();
  });

  const keyCount = async () =>
    (
      (await (await fetch(`${studioUrl}/studio/keys`, { headers: { 'X-Studio-Token': token } })).json()) as {
        data: unknown[];
      }
    ).data.length;

  it('binds `kbstudio serve` to 127.0.0.1 only', () => {
    const port = Number(new URL(studioUrl).port);
    expect(new URL(studioUrl).hostname).toBe('127.0.0.1');
    const listening = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols[3] === '0A' && parseInt(cols[1]!.split(':')[1]!, 16) === port)
      .map((cols) => cols[1]!.split(':')[0]);
    expect(listening).toEqual(['0100007F']); // 127.0.0.1, not 00000000 (every interface)
    const v6 = readFileSync('/proc/net/tcp6', 'utf8');
    expect(v6).not.toMatch(new RegExp(`:${port.toString(16).toUpperCase().padStart(4, '0')} [0-9A-F:]+ 0A`));
  });

  it('refuses fetch() from another localhost port, with or without credentials or the token, and nothing changes', async () => {
    const page = await browser.newPage();
    await page.goto(evilUrl);
    const before = await keyCount();
    const outcomes = await page.evaluate(
      async ({ base, token }) => {
        const attempt = async (path: string, init: RequestInit) => {
          try {
            const res = await fetch(base + path, init);
            return res.type === 'opaque'
              ? 'opaque'
              : `read ${res.status}: ${(await res.text()).slice(0, 80)}`;
          } catch (err) {
            return `blocked (${(err as Error).name})`;
          }
        };
        return {
          plain: await attempt('/studio/info', {}),
          credentials: await attempt('/studio/info', { credentials: 'include' }),
          token: await attempt('/studio/info', { headers: { 'X-Studio-Token': token } }),
          page: await attempt('/', {}),
          csrf: await attempt('/studio/keys', {
            method: 'POST',
            mode: 'no-cors',
            credentials: 'include',
            headers: { 'Content-Type': 'text/plain' },
            body: JSON.stringify({ label: 'csrf' }),
          }),
          csrfForm: await attempt('/studio/wallets', {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: 'name=csrf',
          }),
        };
      },
      { base: studioUrl, token },
    );
    expect(outcomes).toEqual({
      plain: 'blocked (TypeError)',
      credentials: 'blocked (TypeError)',
      token: 'blocked (TypeError)',
      page: 'blocked (TypeError)',
      csrf: 'opaque',
      csrfForm: 'opaque',
    });
    // The "simple" no-cors requests did reach the server: it refused them, so nothing was created.
    expect(await keyCount()).toBe(before);
    const wallets = (await (
      await fetch(`${studioUrl}/studio/wallets`, { headers: { 'X-Studio-Token': token } })
    ).json()) as {
      data: { name?: string }[];
    };
    expect(wallets.data.map((w) => w.name)).not.toContain('csrf');
    await page.close();
  });

  it('gives the studio token only to a browser that opened the printed link, not to any local process', async () => {
    // What any process on this machine (or, bound past loopback, the network) gets by asking for the page.
    for (const path of ['/', '/#/wallet', '/listings/x', `/?token=${token.slice(1)}`]) {
      const page = await (await fetch(`${studioUrl}${path}`)).text();
      expect(page).not.toContain(token);
      expect(page).not.toContain('kbstudio-token');
    }

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    // Without the link: the studio says how to open it, and calls nothing.
    const studioCalls: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/studio/')) studioCalls.push(r.url());
    });
    await page.goto(`${studioUrl}/#/wallet`);
    await page.getByRole('heading', { name: 'Open the studio from its link' }).waitFor();
    // The line to look for names this server's address (it named 7410 whatever the port).
    expect(await page.getByText(/^Studio: /).innerText()).toBe(`Studio: ${studioUrl}/?token=…`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'studio-sign-in-1280x800-light.png') });
    // A link of an earlier launch says so.
    await page.goto(`${studioUrl}/?token=${token.slice(1)}#/wallet`);
    await page.getByRole('heading', { name: 'This studio link is out of date' }).waitFor();
    expect(studioCalls).toEqual([]);

    // The printed link: the token leaves the address bar at once, the view asked for opens.
    await page.goto(`${studioLink}#/wallet`);
    await page.getByRole('heading', { name: 'Wallet', exact: true }).waitFor();
    expect(page.url()).toBe(`${studioUrl}/#/wallet`);
    // The session cookie is out of the page's reach, and the plain address now opens the studio.
    expect(await page.evaluate('document.cookie')).toBe('');
    const [cookie] = await context.cookies(studioUrl);
    expect(cookie).toMatchObject({
      name: `kbstudio_session_${new URL(studioUrl).port}`,
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
    });
    expect(cookie!.value).not.toContain(token);
    const fresh = await context.newPage();
    await fresh.goto(`${studioUrl}/#/listings`);
    await fresh.getByRole('heading', { name: 'Listings' }).waitFor();
    await context.close();
  });

  it('refuses another Origin even with the token (403), no token (401), and a foreign Host (403)', async () => {
    const info = (headers: Record<string, string>) => fetch(`${studioUrl}/studio/info`, { headers });
    const foreign = await info({ 'X-Studio-Token': token, Origin: evilUrl });
    expect(foreign.status).toBe(403);
    expect((await json(foreign)).error.message).toBe(`Origin ${evilUrl} may not use the studio API.`);
    const missing = await info({});
    expect(missing.status).toBe(401);
    expect((await json(missing)).error.code).toBe('unauthorized');
    const wrong = await info({ 'X-Studio-Token': token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) });
    expect(wrong.status).toBe(401);
    expect((await info({ 'X-Studio-Token': token, Origin: studioUrl })).status).toBe(200);
    const rebound = await new Promise<number>((resolve, reject) => {
      const url = new URL(studioUrl);
      request(
        {
          host: url.hostname,
          port: url.port,
          path: '/studio/info',
          headers: { Host: 'evil.example:80', 'X-Studio-Token': token },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(rebound).toBe(403);
  });
});
