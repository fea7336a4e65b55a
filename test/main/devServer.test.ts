import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigFromFile } from 'electron-vite';
import { createServer as createViteServer, type InlineConfig } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';
import { openServices } from '../../src/db/services';
import { DEV_PORT_ENV, DEV_TOKEN_ENV, devServerLink } from '../../src/main/devServer';
import { createServer } from '../../src/server/createServer';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('devServerLink', () => {
  const env = {
    ELECTRON_RENDERER_URL: 'http://localhost:5173',
    [DEV_PORT_ENV]: '41234',
    [DEV_TOKEN_ENV]: 'dev-token',
  };

  it('links to the renderer dev server under `electron-vite dev`', () => {
    expect(devServerLink(env, false)).toEqual({
      rendererUrl: 'http://localhost:5173',
      port: 41234,
      token: 'dev-token',
    });
  });

  it('is off in a packaged app and when any part is missing or malformed', () => {
    expect(devServerLink(env, true)).toBeUndefined();
    expect(devServerLink({ ...env, ELECTRON_RENDERER_URL: undefined }, false)).toBeUndefined();
    expect(devServerLink({ ...env, [DEV_TOKEN_ENV]: '' }, false)).toBeUndefined();
    expect(devServerLink({ ...env, [DEV_PORT_ENV]: 'abc' }, false)).toBeUndefined();
  });
});

describe('`npm run dev`: the renderer dev server stands in for the studio page', () => {
  const dirs: string[] = [];
  const closers: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('injects the dev token into index.html and proxies /studio to the server, which accepts it', async () => {
    const { config } = await loadConfigFromFile(
      { command: 'serve', mode: 'development' },
      join(repoRoot, 'electron.vite.config.ts'),
      repoRoot,
      'silent',
    );
    const token = process.env[DEV_TOKEN_ENV]!;
    const port = Number(process.env[DEV_PORT_ENV]);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(port).toBeGreaterThan(0);

    // What the main process does with the link: the studio server on that port, with that token.
    const dataDir = mkdtempSync(join(tmpdir(), 'kbstudio-dev-'));
    dirs.push(dataDir);
    const services = openServices(dataDir);
    closers.push(() => services.close());
    const studio = createServer({ services, studioToken: token, version: '9.9.9-dev' });
    await studio.listen(port, '127.0.0.1');
    closers.push(() => studio.close());

    const renderer = config.renderer!;
    const vite = await createViteServer({
      ...renderer,
      configFile: false,
      logLevel: 'silent',
      server: { ...renderer.server, host: '127.0.0.1', port: 0 },
    } as InlineConfig);
    await vite.listen();
    closers.push(() => vite.close());
    const devUrl = vite.resolvedUrls!.local[0]!.replace(/\/$/, '');

    const html = await (await fetch(`${devUrl}/`)).text();
    expect(html).toContain(`<meta name="kbstudio-token" content="${token}"></head>`);

    // The browser sends the dev server's Origin; the proxy presents the call as the server's own.
    const info = await fetch(`${devUrl}/studio/info`, {
      headers: { 'X-Studio-Token': token, Origin: devUrl },
    });
    expect(info.status).toBe(200);
    expect(((await info.json()) as { data: { version: string } }).data.version).toBe('9.9.9-dev');
    const refused = await fetch(`${devUrl}/studio/info`, { headers: { Origin: devUrl } });
    expect(refused.status).toBe(401);
  });
});
