import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, resolve } from 'node:path';
import { defineConfig, mergeConfig, type RendererViteConfig, type UserConfig } from 'electron-vite';
import type { Plugin, ProxyOptions } from 'vite';
import { DEV_PORT_ENV, DEV_TOKEN_ENV } from './src/main/devServer';
import { rendererConfig } from './vite.renderer.config';

export default defineConfig(async ({ command }): Promise<UserConfig> => ({
  // Runtime dependencies (package.json "dependencies") stay external: electron-vite's default.
  main: { plugins: [copyWorkerFiles()] },
  preload: {
    build: {
      // A sandboxed preload runs as a classic script: one CommonJS file, everything bundled.
      externalizeDeps: false,
      rolldownOptions: { output: { format: 'cjs', entryFileNames: '[name].cjs' } },
    },
  },
  renderer: command === 'serve' ? await withStudioDevLink(rendererConfig) : rendererConfig,
}));

/**
 * `electron-vite dev` only: the renderer dev server stands in for the studio server's page, so it
 * proxies /studio and /v1 to the server the main process starts on a port chosen here, and puts
 * the same per-launch token in index.html. Electron inherits both through the environment.
 */
async function withStudioDevLink(config: RendererViteConfig): Promise<RendererViteConfig> {
  const port = await freePort();
  const token = randomBytes(32).toString('base64url');
  process.env[DEV_PORT_ENV] = String(port);
  process.env[DEV_TOKEN_ENV] = token;
  const proxy: ProxyOptions = {
    target: `http://127.0.0.1:${port}`,
    changeOrigin: true,
    // The server accepts studio calls only from its own origin; here the proxy is that origin.
    configure: (proxyServer) => proxyServer.on('proxyReq', (proxyReq) => proxyReq.removeHeader('origin')),
  };
  const injectToken: Plugin = {
    name: 'kbstudio-dev-token',
    transformIndexHtml: (html) =>
      html.replace('</head>', `<meta name="kbstudio-token" content="${token}"></head>`),
  };
  return mergeConfig(config, {
    plugins: [injectToken],
    server: { proxy: { '/studio': proxy, '/v1': proxy } },
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Worker scripts are referenced as `new URL('./pdfWorker.mjs', import.meta.url)`. Vite leaves such URLs
 * alone in a Node build, so the file must end up beside the bundle that now holds the reference: out/main/.
 * A plain JavaScript worker (.mjs, .js: runs as it is under Node, tsx and vitest) is copied there, with
 * the plain modules beside it that it imports (`from './docxNumbering.mjs'`). One
 * written in TypeScript (.ts, started through tsx from the sources: src/core/workers/workerScript.ts) is
 * bundled there as an entry of its own, `<name>.mjs`, and the reference rewritten to it.
 */
export function copyWorkerFiles(): Plugin {
  const reference = /new URL\(\s*['"](\.\/[\w.-]+\.m?[jt]s)['"]\s*,\s*import\.meta\.url\s*\)/g;
  const siblingImport = /(?:^|\n)\s*(?:import|export)\b[^;]*?['"](\.\/[\w.-]+\.m?js)['"]/g;
  const emitted = new Map<string, string>();
  return {
    name: 'kbstudio-copy-worker-files',
    apply: 'build',
    transform(code, id) {
      let rewritten = code;
      /** Reserves out/main/<name> for `file`: false when it already has it, an error when another has. */
      const claim = (name: string, file: string): boolean => {
        const earlier = emitted.get(name);
        if (earlier === file) return false;
        if (earlier)
          this.error(`Two worker files would both become out/main/${name}: ${earlier} and ${file}.`);
        emitted.set(name, file);
        return true;
      };
      for (const [whole, relative] of code.matchAll(reference)) {
        const file = resolve(dirname(id), relative!);
        const typeScript = /\.m?ts$/.test(file);
        const name = typeScript ? basename(file).replace(/\.m?ts$/, '.mjs') : basename(file);
        if (typeScript) rewritten = rewritten.replace(whole, `new URL('./${name}', import.meta.url)`);
        if (!claim(name, file)) continue;
        if (typeScript) {
          this.emitFile({ type: 'chunk', id: file, fileName: name });
          continue;
        }
        // A plain worker is copied with the plain modules beside it that it imports ('./x.mjs'), in turn.
        const pending = [file];
        while (pending.length > 0) {
          const next = pending.pop()!;
          const source = readFileSync(next, 'utf8');
          this.emitFile({ type: 'asset', fileName: basename(next), source });
          for (const [, imported] of source.matchAll(siblingImport)) {
            const importedFile = resolve(dirname(next), imported!);
            if (claim(basename(importedFile), importedFile)) pending.push(importedFile);
          }
        }
      }
      return rewritten === code ? null : { code: rewritten, map: null };
    },
  };
}
