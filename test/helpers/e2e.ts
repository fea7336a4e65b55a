import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { cliInProcess } from './mainInProcess';

/**
 * What the Playwright suites in test/e2e share: a real `kbstudio serve` on a fresh data directory,
 * the CLI to seed it, and headless Chromium on the built studio UI.
 */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SHARED = join(REPO_ROOT, '..', 'shared');
export const FIXTURES = join(SHARED, 'fixtures', 'docs');
export const CLI = join(REPO_ROOT, 'bin', 'kbstudio.js');
export const RENDERER_INDEX = join(REPO_ROOT, 'out', 'renderer', 'index.html');
export const SCREENSHOTS = join(REPO_ROOT, 'test-results', 'screenshots');
export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const execFileAsync = promisify(execFile);

/** Runs `kbstudio --data-dir <dataDir> --json ...args` and resolves with its stdout. */
export async function runCli(dataDir: string, args: string[], timeout = 30_000): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [CLI, '--data-dir', dataDir, '--json', ...args], {
    cwd: REPO_ROOT,
    timeout,
  });
  return stdout;
}

export interface StartedServer {
  child: ChildProcess;
  /** The server's address, no trailing slash. */
  url: string;
  /** The link that signs a browser in to the studio (`<url>/?token=<token>`). */
  studioUrl: string;
  /** This launch's studio token, read from the link. */
  token: string;
}

/**
 * Starts `kbstudio serve --port <port> --json [...args]` (0: any free port) and resolves with what it
 * prints.
 */
export function startServer(dataDir: string, port = 0, args: string[] = []): Promise<StartedServer> {
  const child = spawn(
    process.execPath,
    [CLI, '--data-dir', dataDir, 'serve', '--port', String(port), '--json', ...args],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`kbstudio serve printed no URL within 30 s.\n${stderr}`)),
      30_000,
    );
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      try {
        const { url, studioUrl } = JSON.parse(line) as { url: string; studioUrl: string };
        resolve({ child, url, studioUrl, token: new URL(studioUrl).searchParams.get('token') ?? '' });
      } catch {
        reject(new Error(`kbstudio serve printed something that is not JSON: ${line}\n${stderr}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kbstudio serve exited with code ${code} before printing its URL.\n${stderr}`));
    });
  });
}

/** SIGTERM, then SIGKILL if the server has not exited within 5 s. */
export async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Whether `target` lies inside `box` and is what a click at its centre hits (nothing covers it). */
export async function inView(
  target: Locator,
  box: { x: number; y: number; width: number; height: number },
): Promise<boolean> {
  const rect = (await target.boundingBox())!;
  const inside =
    rect.x >= box.x - 1 &&
    rect.x + rect.width <= box.x + box.width + 1 &&
    rect.y >= box.y - 1 &&
    rect.y + rect.height <= box.y + box.height + 1;
  const hit = await target.evaluate((element) => {
    const r = element.getBoundingClientRect();
    const top = element.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return top !== null && element.contains(top);
  });
  return inside && hit;
}

export async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/**
 * The view at 1280×800 and 1920×1080, light and dark: `<name>-<w>x<h>-<theme>.png`. Full-page by
 * default; `fullPage: false` keeps an open dialog framed as the user sees it.
 */
export async function shootAll(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  for (const theme of ['light', 'dark'] as const) {
    const toggle = page.getByRole('button', { name: `Switch to ${theme} theme` });
    // A DOM click: an open dialog's overlay would catch a pointer click on the header's toggle.
    if (await toggle.count()) await toggle.dispatchEvent('click');
    for (const [width, height] of [
      [1280, 800],
      [1920, 1080],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.evaluate('window.scrollTo(0, 0)');
      await page.waitForTimeout(250);
      await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}x${height}-${theme}.png`), fullPage });
    }
  }
  await page.getByRole('button', { name: 'Switch to light theme' }).dispatchEvent('click');
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Holds the requests of a job's event stream until `release()`: the job is lost whatever its pace. */
export async function holdEvents(page: Page, pattern: string) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let onAsked = () => {};
  const asked = new Promise<void>((resolve) => (onAsked = resolve));
  await page.route(pattern, async (route) => {
    onAsked();
    await released;
    await route.continue().catch(() => undefined);
  });
  return { asked, release };
}

export interface OpenOptions {
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  /** Playwright's default wait per action, when a suite needs other than its 30 s. */
  defaultTimeout?: number;
  /** Script run in every page of the context before the page's own (e.g. the desktop app's bridge). */
  initScript?: string;
  /**
   * Called with the page before it navigates: for waits on what the page asks as it loads, which
   * may be answered before `goto` returns (the load event does not wait for the app's fetches).
   */
  beforeGoto?: (page: Page) => void;
}

/**
 * One suite's studio: call `prepare()` in beforeAll, seed `dataDir` through `runCli`, then `start()`;
 * `closePage()` in afterEach and `close()` in afterAll.
 */
export class E2eStudio {
  dataDir = '';
  baseUrl = '';
  /** This launch's studio token (what the studio's link carries). */
  studioToken = '';
  /** The browser context of the page `openStudio` last opened. */
  context: BrowserContext | undefined;
  private server: ChildProcess | undefined;
  private browser: Browser | undefined;

  constructor(private readonly tempPrefix: string) {}

  /** Fails clearly when the UI is not built or Chromium is missing, and makes a fresh data directory. */
  prepare(): void {
    if (!existsSync(RENDERER_INDEX)) {
      throw new Error(
        `The studio UI is not built (${RENDERER_INDEX} is missing). Run \`npm run build:web\` first.`,
      );
    }
    if (!existsSync(CHROMIUM))
      throw new Error(`Chromium is not installed at ${CHROMIUM} (Debian package chromium).`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    this.dataDir = mkdtempSync(join(tmpdir(), this.tempPrefix));
  }

  /**
   * `kbstudio --json …args` on this studio's data directory, run in this process (cliInProcess): a spawned
   * kbstudio costs 1 to 1.6 s here, twice that on a slow CI machine, and the suites seed ~100 times.
   * The CLI suites keep real processes where being one matters. Rejects on a non-zero exit, with what
   * the command printed, as a spawned one did.
   */
  async runCli(args: string[]): Promise<string> {
    const { code, stdout, stderr } = await cliInProcess(this.dataDir, { json: true })(...args);
    if (code !== 0) throw new Error(`kbstudio ${args.join(' ')} exited with ${code}: ${stderr || stdout}`);
    return stdout;
  }

  /** A draft listing sold one-time for 1 SOL, made with the CLI as a creator would. */
  async createListing(title: string): Promise<Listing> {
    const args = ['listings', 'create', '--title', title, '--access-model', 'one_time', '--price', '1'];
    return JSON.parse(await this.runCli(args)) as Listing;
  }

  async start(): Promise<void> {
    const started = await startServer(this.dataDir);
    this.server = started.child;
    this.baseUrl = started.url;
    this.studioToken = started.token;
    this.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }

  /** SIGKILL to the server, as a crash would; `ensureServer()` serves the same data directory again. */
  async killServer(): Promise<void> {
    const server = this.server;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
  }

  /**
   * The data directory served again if the server has stopped, with a new studio token: on a new port
   * (pages must be opened anew), or on the same one (`samePort`), as a creator starting
   * `kbstudio serve` again would.
   */
  async ensureServer({ samePort = false } = {}): Promise<void> {
    const server = this.server;
    if (server && server.exitCode === null && server.signalCode === null) return;
    const started = await startServer(this.dataDir, samePort ? Number(new URL(this.baseUrl).port) : 0);
    this.server = started.child;
    this.baseUrl = started.url;
    this.studioToken = started.token;
  }

  /** The studio's link (which signs the browser in), opening the view `hash` (e.g. `#/publish`). */
  studioLink(hash = ''): string {
    return `${this.baseUrl}/?token=${encodeURIComponent(this.studioToken)}${hash}`;
  }

  /** A call of the studio API, as the page makes it, resolving with its `data` (throws on an error). */
  async studioCall<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.baseUrl}/studio${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'X-Studio-Token': this.studioToken },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as { data: T };
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  }

  /** Ingest with `listing` chosen (as the studio remembers the listing worked on), its drop zone shown. */
  async openIngest(listing: Listing): Promise<Page> {
    const page = await this.openStudio('#/ingest', {
      defaultTimeout: 15_000,
      initScript: `localStorage.setItem('kbstudio.workListing', ${JSON.stringify(JSON.stringify(listing.id))});`,
    });
    await page.getByText('Drop files, folders or ZIP archives here').waitFor();
    await expect.poll(() => page.getByRole('combobox', { name: 'Listing' }).inputValue()).toBe(listing.title);
    return page;
  }

  async openStudio(hash = '', options: OpenOptions = {}): Promise<Page> {
    this.context = await this.browser!.newContext({
      viewport: options.viewport ?? { width: 1280, height: 800 },
      colorScheme: options.colorScheme ?? 'light',
      reducedMotion: 'reduce',
    });
    if (options.initScript) await this.context.addInitScript(options.initScript);
    const page = await this.context.newPage();
    if (options.defaultTimeout) page.setDefaultTimeout(options.defaultTimeout);
    options.beforeGoto?.(page);
    // As a creator does: the link `kbstudio serve` printed; the server takes the token out of the address.
    await page.goto(this.studioLink(hash));
    return page;
  }

  async closePage(): Promise<void> {
    await this.context?.close();
    this.context = undefined;
  }

  async close(): Promise<void> {
    await this.browser?.close();
    await stopServer(this.server);
    if (this.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}
