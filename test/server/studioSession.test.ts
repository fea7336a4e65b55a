import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices, type StudioServices } from '../../src/db/services';
import { createServer, type KbServer } from '../../src/server/createServer';
import { SESSION_MAX_AGE_S } from '../../src/server/studioSession';
import { tempDir } from '../helpers/studio';

/**
 * The studio page's sign-in (src/server/studioSession.ts) over real HTTP on loopback: the page carries
 * the token only for a browser holding the session cookie, which only the printed link gives.
 */
const TOKEN_META = /<meta name="kbstudio-token" content="([^"]*)">/;

let rendererDir: string;
const dirs: Array<{ remove(): void }> = [];
const running: Array<{ server: KbServer; services: StudioServices }> = [];

beforeAll(() => {
  rendererDir = mkdtempSync(join(tmpdir(), 'kbs-session-ui-'));
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><html><head></head><body></body></html>');
});
afterAll(async () => {
  for (const { server, services } of running) {
    await server.close();
    services.close();
  }
  for (const dir of dirs) dir.remove();
  rmSync(rendererDir, { recursive: true, force: true });
});

/** A studio server on `dataDir` (new when omitted) with `token`, on `port` (0: any). */
async function serve(token: string, { dataDir, port = 0 }: { dataDir?: string; port?: number } = {}) {
  if (!dataDir) {
    const dir = tempDir('kbs-session-');
    dirs.push(dir);
    dataDir = dir.path;
  }
  const services = openServices(dataDir);
  const server = createServer({
    services,
    studioToken: token,
    version: '0.0.0-test',
    rendererDir,
    log: () => {},
  });
  const { url, port: actual } = await server.listen(port, '127.0.0.1');
  const entry = { server, services };
  running.push(entry);
  return {
    url,
    port: actual,
    dataDir,
    get: (path: string, cookie?: string) => get(url + path, cookie),
    async stop() {
      await server.close();
      services.close();
      running.splice(running.indexOf(entry), 1);
    },
  };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  setCookies: string[];
  text(): Promise<string>;
}

/** A GET on a connection of its own: a server stopped and started again on its port kills kept-alive ones. */
function get(url: string, cookie?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false, headers: cookie ? { Cookie: cookie } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          setCookies: res.headers['set-cookie'] ?? [],
          text: () => Promise.resolve(Buffer.concat(chunks).toString('utf8')),
        }),
      );
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** The `name=value` of the response's session cookie, and the cookie's attributes. */
function sessionCookie(res: Answer): { pair: string; attributes: string[] } {
  const [header] = res.setCookies;
  expect(header).toBeDefined();
  const [pair, ...attributes] = header!.split(';').map((p) => p.trim());
  return { pair: pair!, attributes };
}

const signIn = async (studio: Awaited<ReturnType<typeof serve>>, token: string) =>
  sessionCookie(await studio.get(`/?token=${token}`)).pair;

describe('the studio page', () => {
  const token = 'launch-token-0123456789abcdefghij';

  it('carries no token for a request without the session cookie', async () => {
    const studio = await serve(token);
    for (const path of ['/', '/listings/lst_x/documents', '/?other=1']) {
      const res = await studio.get(path);
      expect(res.status).toBe(200);
      expect(res.setCookies).toEqual([]);
      const page = await res.text();
      expect(page).not.toContain(token);
      expect(page).not.toMatch(TOKEN_META);
      expect(page).not.toContain('kbstudio-link');
    }
  });

  it('signs a browser in with the link: a private cookie, and a redirect that drops the token from the address', async () => {
    const studio = await serve(token);
    const res = await studio.get(`/?token=${token}`);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const { pair, attributes } = sessionCookie(res);
    expect(pair).toMatch(new RegExp(`^kbstudio_session_${studio.port}=[A-Za-z0-9_-]{43}$`));
    expect(pair).not.toContain(token);
    expect(attributes.map((a) => a.toLowerCase()).sort()).toEqual(
      ['httponly', 'path=/', 'samesite=strict', `max-age=${SESSION_MAX_AGE_S}`].sort(),
    );
    // A client route and other parameters are kept.
    const deep = await studio.get(`/listings/lst_x?a=1&token=${token}&b=2`);
    expect(deep.status).toBe(303);
    expect(deep.headers.location).toBe('/listings/lst_x?a=1&b=2');
    // Never to another host: a path that resolves to `//host` keeps one slash.
    for (const path of ['//evil.example/x', '///evil.example/x']) {
      const away = await studio.get(`${path}?token=${token}`);
      expect(away.headers.location, path).toBe('/evil.example/x');
    }

    // With the cookie, the page carries this launch's token, and the cookie is renewed.
    const page = await studio.get('/', pair);
    expect(page.status).toBe(200);
    expect(TOKEN_META.exec(await page.text())?.[1]).toBe(token);
    expect(sessionCookie(page).pair).toBe(pair);
    expect(TOKEN_META.exec(await (await studio.get('/listings/lst_x', pair)).text())?.[1]).toBe(token);
  });

  it('refuses a wrong, repeated or empty token, and says when a link is out of date', async () => {
    const studio = await serve(token);
    for (const query of [`token=${token.slice(0, -1)}x`, `token=${token}&token=${token}`, 'token=']) {
      const res = await studio.get(`/?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.setCookies, query).toEqual([]);
      const page = await res.text();
      expect(page, query).not.toMatch(TOKEN_META);
      expect(page, query).toContain('<meta name="kbstudio-link" content="stale">');
    }
  });

  it('accepts only its own cookie: not a changed value, not the cookie of a studio on another port', async () => {
    const studio = await serve(token);
    const pair = await signIn(studio, token);
    const [name, value] = pair.split('=') as [string, string];
    const changed = `${name}=${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`;
    const otherPort = `kbstudio_session_${studio.port + 1}=${value}`;
    for (const cookie of [changed, otherPort, `${name}=`, `${name}=${token}`]) {
      expect(await (await studio.get('/', cookie)).text(), cookie).not.toMatch(TOKEN_META);
    }
    // Another cookie next to it does not matter.
    expect(TOKEN_META.test(await (await studio.get('/', `theme=dark; ${pair}`)).text())).toBe(true);
  });

  it('lets a signed-in browser open an old link: it is taken to the page, not told to sign in', async () => {
    const studio = await serve(token);
    const pair = await signIn(studio, token);
    const res = await studio.get('/?token=from-an-earlier-launch', pair);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
  });

  it('keeps a browser signed in when the server is started again on the data directory, with a new token', async () => {
    const first = await serve(token);
    const pair = await signIn(first, token);
    await first.stop();
    const again = await serve('another-launch-token-0123456789abc', {
      dataDir: first.dataDir,
      port: first.port,
    });
    expect(TOKEN_META.exec(await (await again.get('/', pair)).text())?.[1]).toBe(
      'another-launch-token-0123456789abc',
    );
    // The first launch's link no longer signs anyone in.
    const stale = await again.get(`/?token=${token}`);
    expect(stale.status).toBe(200);
    expect(stale.setCookies).toEqual([]);
    // Another data directory (another studio) does not know the cookie.
    await again.stop();
    const other = await serve(token, { port: first.port });
    expect(await (await other.get('/', pair)).text()).not.toMatch(TOKEN_META);
  });
});
