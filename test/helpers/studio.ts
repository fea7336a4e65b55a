import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openServices, type StudioServices } from '../../src/db/services';
import { createServer, type KbServer } from '../../src/server/createServer';
import type { RateLimitOptions } from '../../src/server/middleware/rateLimit';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname;
export const SHARED = join(REPO_ROOT, '..', 'shared');
export const FIXTURES = join(SHARED, 'fixtures', 'docs');

export function tempDir(prefix = 'kbs-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface TestStudio {
  services: StudioServices;
  server: KbServer;
  url: string;
  studioToken: string;
  /** fetch against the running server with an optional API key. */
  api(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
  /** fetch against the running server as the studio's renderer does (with this launch's token). */
  studioFetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** A real studio: a fresh data directory, a real SQLite file, real HTTP on loopback. */
export async function startStudio(
  options: { rateLimits?: Partial<RateLimitOptions>; rendererDir?: string } = {},
): Promise<TestStudio> {
  const dir = tempDir();
  const services = openServices(dir.path);
  const studioToken = 'test-token-0123456789';
  const server = createServer({
    services,
    studioToken,
    version: '0.0.0-test',
    rateLimits: options.rateLimits,
    rendererDir: options.rendererDir,
    log: () => {},
  });
  const { url } = await server.listen(0, '127.0.0.1');
  return {
    services,
    server,
    url,
    studioToken,
    api(path, init = {}) {
      const { key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key) headers.set('Authorization', `Bearer ${key}`);
      return fetch(url + path, { ...rest, headers });
    },
    studioFetch(path, init = {}) {
      const headers = new Headers(init.headers);
      headers.set('X-Studio-Token', studioToken);
      return fetch(url + path, { ...init, headers });
    },
    async close() {
      await server.close();
      services.close();
      dir.remove();
    },
  };
}

/** A response's JSON body, loosely typed for assertions. */
export const json = (res: Response): Promise<any> => res.json() as Promise<any>;

/** A studio with one draft listing whose knowledge base holds `fixtures` (files of FIXTURES), ingested. */
export async function studioWithDocuments(
  fixtures: string[],
): Promise<{ studio: TestStudio; listingId: string }> {
  const studio = await startStudio();
  const wallet = studio.services.wallets.defaultWallet().address;
  const listingId = studio.services.listings.create(
    { title: 'Docs', accessModel: 'one_time', price: 1 },
    wallet,
  ).id;
  await studio.services.ingestion.run({
    listingId,
    inputs: fixtures.map((name) => ({ path: join(FIXTURES, name) })),
    atomic: true,
    limits: STUDIO_LIMITS,
  });
  return { studio, listingId };
}
