import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MessageChannel, Worker } from 'node:worker_threads';
import { _electron as electron, type ElectronApplication } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyWorkerFiles } from '../../electron.vite.config';
import { syntheticModel } from '../core/embed/syntheticGlove';
import { postingsData } from '../core/retrieve/postingsData';
import { LexicalPostings } from '../../src/core/retrieve/lexicalPostings';
import { CONTROL, type LexicalThreadMessage } from '../../src/core/retrieve/lexicalThreadProtocol';
import { electronNativeBindingPath } from '../../src/main/nativeBinding';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const execFileAsync = promisify(execFile);
const electronVite = join(repoRoot, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

/** The packages the bundle leaves external, found as the app finds them beside its out/ folder. */
function linkNodeModules(outDir: string): void {
  if (!existsSync(join(outDir, 'node_modules')))
    symlinkSync(join(repoRoot, 'node_modules'), join(outDir, 'node_modules'), 'dir');
}

/** Starts a built worker script under plain Node (no tsx), sends it one message and returns its answer. */
async function askWorker(script: string, message: unknown): Promise<unknown> {
  const worker = new Worker(script, { execArgv: [] });
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage(message);
    });
  } finally {
    await worker.terminate();
  }
}

/**
 * The Electron binary is downloaded by electron's postinstall, which cannot reach its server on
 * some machines (this repository's CI among them). Look for it on disk: require('electron') from
 * plain Node would try to download it.
 */
function electronBinary(): { path?: string; missing?: string } {
  const pkg = join(repoRoot, 'node_modules', 'electron');
  const pathTxt = join(pkg, 'path.txt');
  if (!existsSync(pathTxt))
    return { missing: `${pathTxt} is absent (electron's postinstall did not download the binary)` };
  const path = join(pkg, 'dist', readFileSync(pathTxt, 'utf8').trim());
  return existsSync(path) ? { path } : { missing: `${path} is absent` };
}

function electronVersion(): string {
  return (JSON.parse(read('node_modules/electron/package.json')) as { version: string }).version;
}

describe('Electron main process: security settings in the source', () => {
  const windowSource = read('src/main/window.ts');

  it('creates the window isolated and sandboxed, without Node in the page', () => {
    for (const flag of [
      'contextIsolation: true',
      'sandbox: true',
      'nodeIntegration: false',
      'webSecurity: true',
    ]) {
      expect(windowSource).toContain(flag);
    }
    expect(windowSource).not.toMatch(
      /nodeIntegration(InWorker|InSubFrames)?: true|webviewTag: true|allowRunningInsecureContent/,
    );
    expect(windowSource).toMatch(/title: WINDOW_TITLE/);
    expect(windowSource).toContain("export const WINDOW_TITLE = 'KB Studio'");
  });

  it('keeps the window on the studio origin and denies new windows', () => {
    expect(windowSource).toMatch(
      /on\('will-navigate',[\s\S]*?isSameOrigin\(target, origin\)[\s\S]*?event\.preventDefault\(\)/,
    );
    expect(windowSource).toMatch(/on\('will-redirect'/);
    expect(windowSource).toMatch(/setWindowOpenHandler\([\s\S]*?return \{ action: 'deny' \}/);
    expect(windowSource).toMatch(/shell\.openExternal/);
    expect(windowSource).toMatch(/setPermissionRequestHandler/);
  });

  it('exposes named values through contextBridge, never ipcRenderer', () => {
    const preload = read('src/preload/index.ts');
    expect(preload).toContain("contextBridge.exposeInMainWorld('kbstudio', bridge)");
    expect(preload).toMatch(/\} satisfies KbStudioBridge;/);
    const code = preload.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    expect(code).not.toMatch(/ipcRenderer|require\(|process\.env/);
  });

  it('binds the server to loopback and closes server and database on quit', () => {
    const main = read('src/main/index.ts');
    expect(main).toMatch(/listen\([^)]*'127\.0\.0\.1'\)/);
    expect(main).toMatch(/randomBytes\(32\)\.toString\('base64url'\)/);
    // The window opens the studio's link: the page carries the token only for a session it signed in.
    expect(main).toMatch(/pageUrl: dev\?\.rendererUrl \?\? studioLink\(url, studioToken\)/);
    expect(main).toMatch(/will-quit[\s\S]*stopStudio/);
    expect(main).toMatch(/server\.close\(\)[\s\S]*services\.close\(\)/);
  });
});

describe('electron-vite build (needs no Electron binary)', () => {
  let outDir: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'kbstudio-electron-build-'));
    await execFileAsync(process.execPath, [electronVite, 'build', '--outDir', outDir, '--logLevel', 'warn'], {
      cwd: repoRoot,
      timeout: 120_000,
    });
  }, 150_000);

  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('bundles main as ESM with the runtime dependencies left external', () => {
    const main = readFileSync(join(outDir, 'main', 'index.js'), 'utf8');
    expect(main).toMatch(/^import .* from "electron";$/m);
    for (const dependency of ['better-sqlite3', 'sqlite-vec', 'express', 'zod']) {
      expect(main).toMatch(new RegExp(`^import .* from "${dependency}";$`, 'm'));
    }
    expect(main).toContain('"../preload/index.cjs"');
    expect(main).toContain('"../renderer"');
  });

  it('ships every file a main chunk loads by new URL(..., import.meta.url) beside that chunk', () => {
    const mainDir = join(outDir, 'main');
    const chunks = readdirSync(mainDir, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.js'),
    );
    for (const chunk of chunks) {
      const code = readFileSync(join(mainDir, chunk), 'utf8');
      for (const [, relative] of code.matchAll(/new URL\("(\.\/[^"]+)", import\.meta\.url\)/g)) {
        expect(existsSync(join(mainDir, chunk, '..', relative!)), `${relative} next to ${chunk}`).toBe(true);
      }
    }
  });

  it('bundles the workers written in TypeScript into .mjs files that run under plain Node', async () => {
    const page = '<html lang="de"><head><title>T</title></head><body><h1>A</h1><p>hello</p></body></html>';
    linkNodeModules(outDir);
    const reply = await askWorker(join(outDir, 'main', 'htmlWorker.mjs'), {
      id: 7,
      data: new TextEncoder().encode(page),
    });
    expect(reply).toEqual({
      id: 7,
      ok: true,
      sections: [{ text: 'A\n\nhello', metadata: { headings: ['A'] } }],
      metadata: { title: 'T', lang: 'de' },
    });
    const html = readdirSync(join(outDir, 'main')).find((f) => /^html-.*\.js$/.test(f))!;
    expect(readFileSync(join(outDir, 'main', html), 'utf8')).toContain(
      'new URL("./htmlWorker.mjs", import.meta.url)',
    );
  });

  it('copies the DOCX worker with the module it imports, and the copy writes Word list labels under plain Node', async () => {
    linkNodeModules(outDir);
    expect(existsSync(join(outDir, 'main', 'docxNumbering.mjs'))).toBe(true);
    const docx = readFileSync(
      join(repoRoot, '..', 'shared', 'fixtures', 'docs', 'example-list-items-multiple.docx'),
    );
    const reply = (await askWorker(join(outDir, 'main', 'docxWorker.mjs'), { id: 3, data: docx })) as {
      ok: boolean;
      html: string;
    };
    expect(reply.ok).toBe(true);
    expect(reply.html).toContain('<li>a) The quick brown fox jumps over the lazy dog.</li>');
  });

  it('bundles the embedding worker, which embeds over the shared table of the thread that started it', async () => {
    linkNodeModules(outDir);
    const model = syntheticModel();
    const texts = ['The cat sat on the mat.', 'A well-known stock market crash'];
    const worker = new Worker(join(outDir, 'main', 'embeddingWorker.mjs'), { execArgv: [] });
    try {
      const replies: unknown[] = [];
      const reply = () =>
        new Promise((resolve, reject) => {
          worker.once('message', (m) => resolve(replies.push(m)));
          worker.once('error', reject);
        });
      worker.postMessage({ model: model.share(), area: 1 });
      await reply();
      worker.postMessage({ id: 3, text: texts.join(''), lengths: Int32Array.from(texts, (t) => t.length) });
      await reply();
      expect(replies[0]).toEqual({ ready: true });
      const { id, vectors } = replies[1] as { id: number; vectors: Float32Array };
      expect(id).toBe(3);
      expect(Array.from(vectors)).toEqual(texts.flatMap((t) => Array.from(model.embed(t))));
    } finally {
      await worker.terminate();
    }
    const glove = readdirSync(join(outDir, 'main')).find((f) => /^offlineGlove-.*\.js$/.test(f))!;
    expect(readFileSync(join(outDir, 'main', glove), 'utf8')).toContain(
      'new URL("./embeddingWorker.mjs", import.meta.url)',
    );
  });

  it("bundles the lexical thread's worker, which searches postings shared with it", async () => {
    linkNodeModules(outDir);
    const rows = Array.from({ length: 50 }, (_, i) => ({
      id: i + 1,
      listing: 'A',
      length: 4 + (i % 5),
      terms: { river: 1 + (i % 3), ...(i % 4 === 0 ? { delta: 2 } : {}) },
    }));
    const postings = new LexicalPostings(postingsData(rows, true));
    const control = new Int32Array(new SharedArrayBuffer(CONTROL.SLOTS * 4));
    const results = new Float64Array(new SharedArrayBuffer(2 * 100 * 8));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(join(outDir, 'main', 'lexicalThreadWorker.mjs'), {
      execArgv: [],
      workerData: { control: control.buffer, results: results.buffer, port: port2 },
      transferList: [port2],
    });
    try {
      const weights = postings.weights(['delta', 'river']);
      const messages: LexicalThreadMessage[] = [
        { kind: 'install', id: 1, data: postings.data },
        { kind: 'search', id: 1, weights, listing: postings.listingNumber('A')!, limit: 10 },
      ];
      for (const message of messages) port1.postMessage(message);
      Atomics.store(control, CONTROL.REQUEST, 1);
      Atomics.notify(control, CONTROL.REQUEST);
      const until = Date.now() + 30_000;
      while (Atomics.load(control, CONTROL.DONE) !== 1 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const count = control[CONTROL.COUNT]!;
      const hits = Array.from({ length: count }, (_, i) => ({
        id: results[2 * i]!,
        bm25: results[2 * i + 1]!,
      }));
      expect(hits).toEqual(postings.search(['delta', 'river'], 'A', 10));
      expect(count).toBe(10);
    } finally {
      port1.close();
      await worker.terminate();
    }
    expect(readFileSync(join(outDir, 'main', 'index.js'), 'utf8')).toContain(
      'new URL("./lexicalThreadWorker.mjs", import.meta.url)',
    );
  });

  it('bundles the sandboxed preload into one CommonJS file that only requires electron', () => {
    const preload = readFileSync(join(outDir, 'preload', 'index.cjs'), 'utf8');
    expect([...preload.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1])).toEqual(['electron']);
    expect(preload).not.toMatch(/^import /m);
    expect(preload).toContain('exposeInMainWorld("kbstudio"');
  });

  it('builds the renderer with relative asset URLs and no inline script (the server CSP forbids them)', () => {
    const html = readFileSync(join(outDir, 'renderer', 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\.\/assets\/index-[\w-]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).toMatch(/href="\.\/assets\/index-[\w-]+\.css"/);
  });
});

describe('copyWorkerFiles (main build)', () => {
  /**
   * Builds src/index.ts of a scratch project (its files: path under src/ → text) as electron-vite builds
   * main, with the plugin, and hands `check` the out/main folder.
   */
  async function buildMain(files: Record<string, string>, check: (outMain: string) => Promise<void>) {
    const dir = mkdtempSync(join(tmpdir(), 'kbstudio-worker-build-'));
    try {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(dir, 'src', path, '..'), { recursive: true });
        writeFileSync(join(dir, 'src', path), text);
      }
      await build({
        configFile: false,
        logLevel: 'silent',
        root: dir,
        plugins: [copyWorkerFiles()],
        build: {
          ssr: join(dir, 'src', 'index.ts'),
          outDir: join(dir, 'out', 'main'),
          minify: false,
          ssrEmitAssets: true, // as electron-vite's main preset sets it
          rolldownOptions: { output: { format: 'es', entryFileNames: 'index.js' } },
        },
      });
      await check(join(dir, 'out', 'main'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('puts worker scripts referenced by new URL(..., import.meta.url) beside the bundle', async () => {
    await buildMain(
      {
        'parsers/pdfWorker.mjs': "import { parentPort } from 'node:worker_threads';\n",
        'parsers/pdf.ts':
          "import { MessageChannel, Worker } from 'node:worker_threads';\nexport const start = () => new Worker(new URL('./pdfWorker.mjs', import.meta.url));\n",
        'index.ts': "export { start } from './parsers/pdf';\n",
      },
      async (outMain) => {
        const bundle = readFileSync(join(outMain, 'index.js'), 'utf8');
        expect(bundle).toContain('new URL("./pdfWorker.mjs", import.meta.url)');
        expect(readFileSync(join(outMain, 'pdfWorker.mjs'), 'utf8')).toContain('parentPort');
      },
    );
  });

  it('copies a plain worker with the plain modules it imports, in turn, beside the bundle', async () => {
    await buildMain(
      {
        'parsers/exclaim.mjs': 'export const exclaim = (text) => `${text}!`;\n',
        'parsers/shout.mjs':
          "import { exclaim } from './exclaim.mjs';\nexport const shout = (text) => exclaim(text.toUpperCase());\n",
        'parsers/shoutWorker.mjs':
          "import { parentPort } from 'node:worker_threads';\nimport { shout } from './shout.mjs';\n" +
          "parentPort.on('message', (text) => parentPort.postMessage(shout(text)));\n",
        'parsers/loud.ts':
          "import { Worker } from 'node:worker_threads';\nexport const start = () => new Worker(new URL('./shoutWorker.mjs', import.meta.url));\n",
        'index.ts': "export { start } from './parsers/loud';\n",
      },
      async (outMain) => {
        expect(
          readdirSync(outMain)
            .filter((f) => f.endsWith('.mjs'))
            .sort(),
        ).toEqual(['exclaim.mjs', 'shout.mjs', 'shoutWorker.mjs']);
        expect(await askWorker(join(outMain, 'shoutWorker.mjs'), 'hello')).toBe('HELLO!');
      },
    );
  });

  it('bundles a worker written in TypeScript, with its imports, into a .mjs file beside the bundle', async () => {
    await buildMain(
      {
        'parsers/shout.ts': 'export const shout = (text: string): string => `${text.toUpperCase()}!`;\n',
        'parsers/shoutWorker.ts':
          "import { parentPort } from 'node:worker_threads';\nimport { shout } from './shout';\n" +
          "parentPort!.on('message', (text: string) => parentPort!.postMessage(shout(text)));\n",
        'parsers/loud.ts':
          "import { MessageChannel, Worker } from 'node:worker_threads';\nexport const start = () => new Worker(new URL('./shoutWorker.ts', import.meta.url));\n",
        'index.ts': "export { start } from './parsers/loud';\n",
      },
      async (outMain) => {
        const bundle = readFileSync(join(outMain, 'index.js'), 'utf8');
        expect(bundle).toContain('new URL("./shoutWorker.mjs", import.meta.url)');
        expect(bundle).not.toContain('shoutWorker.ts');
        expect(await askWorker(join(outMain, 'shoutWorker.mjs'), 'hello')).toBe('HELLO!');
      },
    );
  });
});

describe('Electron app launch', () => {
  const binary = electronBinary();
  const nativeBinding = binary.path ? electronNativeBindingPath(repoRoot, electronVersion()) : undefined;
  const skipReason = binary.missing
    ? `the Electron binary is missing: ${binary.missing}. Run \`node node_modules/electron/install.js\` where its download server is reachable.`
    : nativeBinding && !existsSync(nativeBinding)
      ? `better-sqlite3 is not built for Electron (${nativeBinding}). Run \`node scripts/electron-native.js\`.`
      : undefined;
  if (skipReason) console.warn(`Skipping the Electron launch test: ${skipReason}`);

  let app: ElectronApplication | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    await app?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(skipReason !== undefined)(
    'opens "KB Studio" on the Listings view with an isolated, sandboxed renderer',
    async () => {
      if (!existsSync(join(repoRoot, 'out', 'main', 'index.js'))) {
        await execFileAsync(process.execPath, [electronVite, 'build'], { cwd: repoRoot, timeout: 120_000 });
      }
      dataDir = mkdtempSync(join(tmpdir(), 'kbstudio-electron-'));
      app = await electron.launch({
        executablePath: binary.path!,
        args: [repoRoot, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
        env: { ...process.env, KBSTUDIO_DATA_DIR: dataDir },
        timeout: 60_000,
      });
      const page = await app.firstWindow();
      await page.getByRole('heading', { name: 'Listings' }).waitFor();
      expect(await page.title()).toBe('KB Studio');
      expect(await page.getByRole('link', { name: 'Listings' }).getAttribute('aria-current')).toBe('page');
      // Electron 42 has no API that reads a window's webPreferences back (getLastWebPreferences is
      // gone), so check their effects: what the preload was told, and what the page can reach.
      expect(await page.evaluate('window.kbstudio.isolation')).toEqual({
        sandboxed: true,
        contextIsolated: true,
      });
      expect(await page.evaluate('typeof window.kbstudio.versions.electron')).toBe('string');
      expect(await page.evaluate('[typeof require, typeof process, typeof module]')).toEqual([
        'undefined',
        'undefined',
        'undefined',
      ]);

      const main = await app.evaluate(({ BrowserWindow }) => {
        const [window] = BrowserWindow.getAllWindows();
        return {
          count: BrowserWindow.getAllWindows().length,
          title: window!.getTitle(),
          url: window!.webContents.getURL(),
        };
      });
      expect(main.count).toBe(1);
      expect(main.title).toBe('KB Studio');
      expect(main.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    },
    120_000,
  );
});
