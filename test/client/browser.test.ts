import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { REPO_ROOT, startStudio, tempDir, type TestStudio } from '../helpers/studio';

/**
 * The client bundled for the browser (no Node built-ins may be pulled in) and run in Chromium
 * against the real server: the page is served from a small origin that proxies /v1 to the studio.
 */
const CHROMIUM = '/usr/bin/chromium';
/** The bundle is imported by the page itself: a dynamic import inside page.evaluate would be rewritten by vitest. */
const PAGE = `<!doctype html><title>client</title>
<script type="module">import * as kb from '/client.js'; window.kb = kb;</script>`;
const ITEMS = [
  { text: 'Glaciers carve deep valleys as they slowly move downhill.', topic: 'geology' },
  { text: 'Violins and cellos are bowed string instruments of an orchestra.', topic: 'music' },
];

let studio: TestStudio;
let page: Server;
let pageUrl: string;
let browser: Browser;
let key: string;
let listingId: string;
let bundle: string;
const movedRequests: string[] = [];
const scratch = tempDir('kbs-client-browser-');
const buyer = generateKeypair();

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM} (Debian package chromium).`);
  await build({
    configFile: false,
    logLevel: 'silent',
    root: REPO_ROOT,
    build: {
      outDir: scratch.path,
      emptyOutDir: false,
      minify: false,
      lib: { entry: join(REPO_ROOT, 'src/client/index.ts'), formats: ['es'], fileName: () => 'client.js' },
    },
  });
  bundle = readFileSync(join(scratch.path, 'client.js'), 'utf8');

  studio = await startStudio();
  const creator = studio.services.wallets.defaultWallet().address;
  key = studio.services.apiKeys.create(creator).key;
  listingId = studio.services.listings.create(
    { title: 'Browser KB', accessModel: 'one_time', price: 1 },
    creator,
  ).id;
  const file = join(scratch.path, 'items.json');
  writeFileSync(file, JSON.stringify(ITEMS));
  await studio.services.ingestion.run({
    listingId,
    inputs: [{ path: file }],
    atomic: true,
    limits: STUDIO_LIMITS,
  });
  await studio.services.publishing.publish(listingId);
  await studio.services.credentials.grant(listingId, buyer.address);

  const upstream = new URL(studio.url);
  page = createServer((req, res) => {
    if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (req.url === '/client.js')
      return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    // An API that moved: every request is sent on to the same path without the prefix.
    if (req.url!.startsWith('/moved/')) {
      movedRequests.push(`${req.method} ${req.url}`);
      return void req.resume().on('end', () => res.writeHead(302, { location: req.url!.slice(6) }).end());
    }
    const proxied = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(proxied);
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => page?.close(resolve));
  page?.closeAllConnections();
  await studio?.close();
  scratch.remove();
});

describe('the client in a browser', () => {
  it('bundles without Node built-ins', () => {
    expect(bundle).toMatch(/KnowledgeClient = class/);
    expect(bundle).not.toMatch(/from\s*["']node:|require\(|\bBuffer\b|process\.env/);
  });

  it('retrieves, streams, paginates, uploads a Blob with progress, and throws the right classes', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => (globalThis as any).kb);
    const out = await tab.evaluate(
      async ({ key, listingId }) => {
        const { KnowledgeClient, AuthenticationError, NotFoundError } = (globalThis as any).kb;
        const client = new KnowledgeClient({ baseUrl: (globalThis as any).location.origin, apiKey: key });
        const result = await client.retrieve({ listingId, query: 'glaciers valleys', topK: 1 });
        const streamed: string[] = [];
        for await (const chunk of client.retrieveStream({ listingId, query: 'orchestra violins', topK: 2 }))
          streamed.push(chunk.text);
        const listings: string[] = [];
        for await (const listing of client.listings.list({ limit: 1 })) listings.push(listing.id);
        const progress: number[] = [];
        const upload = await client.upload(
          new File(['# Notes\n\nBrowsers upload Blobs.\n'], 'notes.md'),
          { listingId },
          { onProgress: (p: { loaded: number }) => progress.push(p.loaded) },
        );
        const missing = await client.listings.get('lst_missing').catch((e: Error) => e);
        const stranger = new KnowledgeClient({
          baseUrl: (globalThis as any).location.origin,
          apiKey: 'kbs_unknown',
        });
        const unknownKey = await stranger.retrieve({ listingId, query: 'x' }).catch((e: Error) => e);
        return {
          first: result.chunks[0].text,
          streamed,
          listings,
          upload: [upload.status, upload.listingId],
          progress,
          missing: [missing instanceof NotFoundError, missing.code],
          unknownKey: [unknownKey instanceof AuthenticationError, unknownKey.name, unknownKey.status],
        };
      },
      { key, listingId },
    );
    expect(out.first).toBe(ITEMS[0]!.text);
    expect(out.streamed[0]).toBe(ITEMS[1]!.text);
    expect(out.listings).toEqual([listingId]);
    expect(out.upload).toEqual(['queued', listingId]);
    expect(out.progress[0]).toBe(0);
    expect(out.progress.at(-1)).toBeGreaterThan(0);
    expect(out.missing).toEqual([true, 'listing_not_found']);
    expect(out.unknownKey).toEqual([true, 'AuthenticationError', 401]);
    await tab.close();
  });

  it('refuses a redirect, which the browser makes opaque, without following or retrying it', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => (globalThis as any).kb);
    const out = await tab.evaluate(
      async ({ key, listingId }) => {
        const { KnowledgeClient, ApiError } = (globalThis as any).kb;
        const client = new KnowledgeClient({
          baseUrl: `${(globalThis as any).location.origin}/moved/v1`,
          apiKey: key,
        });
        const seen = (e: any) => [e instanceof ApiError, e.code, e.status, e.message];
        return {
          retrieve: seen(await client.retrieve({ listingId, query: 'glaciers' }).catch((e: Error) => e)),
          upload: seen(
            await client.upload(new File(['# Moved\n'], 'moved.md'), { listingId }).catch((e: Error) => e),
          ),
        };
      },
      { key, listingId },
    );
    for (const [isApiError, code, status, message] of [out.retrieve, out.upload]) {
      expect([isApiError, code, status]).toEqual([true, 'unexpected_redirect', undefined]);
      expect(message).toMatch(/\/moved\/v1\/(retrieve|upload) was answered with a redirect/);
    }
    // Followed, the retrieval would have been answered by the studio: it was not, nor sent twice.
    expect(movedRequests).toEqual(['POST /moved/v1/retrieve', 'POST /moved/v1/upload']);
    await tab.close();
  });

  it('signs requests with a wallet through Web Crypto (sha256 and an Ed25519 key)', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => (globalThis as any).kb);
    // PKCS#8 wrapping of the 32-byte ed25519 seed (the first half of a Solana secret key).
    const pkcs8 = [
      ...Buffer.from('302e020100300506032b657004220420', 'hex'),
      ...buyer.secretKey.slice(0, 32),
    ];
    const verification = await tab.evaluate(
      async ({ address, pkcs8, listingId }) => {
        const { KnowledgeClient } = (globalThis as any).kb;
        const secretKey = new Uint8Array(pkcs8);
        const secret = await crypto.subtle.importKey('pkcs8', secretKey, { name: 'Ed25519' }, false, [
          'sign',
        ]);
        const sign = async (message: Uint8Array) =>
          new Uint8Array(await crypto.subtle.sign('Ed25519', secret, message as Uint8Array<ArrayBuffer>));
        const client = new KnowledgeClient({
          baseUrl: (globalThis as any).location.origin,
          signer: { address, sign },
        });
        const verified = await client.credentials.verify(listingId);
        const found = await client.retrieve({ listingId, query: 'glaciers', topK: 1 });
        return { verified, text: found.chunks[0].text };
      },
      { address: buyer.address, pkcs8, listingId },
    );
    expect(verification.verified).toMatchObject({ listingId, valid: true, status: 'active' });
    expect(verification.text).toBe(ITEMS[0]!.text);
    await tab.close();
  });
});
