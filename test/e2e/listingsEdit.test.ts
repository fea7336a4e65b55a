import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';

/** Editing and deleting listings in the studio UI, in Chromium, against a real `kbstudio serve`. */
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const cli = join(repoRoot, 'bin', 'kbstudio.js');
const rendererIndex = join(repoRoot, 'out', 'renderer', 'index.html');
const screenshots = join(repoRoot, 'test-results', 'screenshots');
const CHROMIUM = '/usr/bin/chromium';
const execFileAsync = promisify(execFile);

let dataDir: string;
let server: ChildProcess | undefined;
let baseUrl: string;
let browser: Browser | undefined;
let context: BrowserContext | undefined;

async function runCli(args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [cli, '--data-dir', dataDir, '--json', ...args], {
    cwd: repoRoot,
    timeout: 30_000,
  });
  return stdout;
}

/** Starts `kbstudio serve --port 0 --json` and resolves with the URL from its one line of JSON. */
function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [cli, '--data-dir', dataDir, 'serve', '--port', '0', '--json'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
        resolve({ child, url: (JSON.parse(line) as { url: string }).url });
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

async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function openStudio(hash = '', viewport = { width: 1280, height: 800 }): Promise<Page> {
  context = await browser!.newContext({ viewport, colorScheme: 'light', reducedMotion: 'reduce' });
  const page = await context.newPage();
  await page.goto(`${baseUrl}/${hash}`);
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}.png`) });
}

/** The text content of each cell of the table row that contains `text`. */
async function rowCells(page: Page, text: string): Promise<string[]> {
  const row = page.getByRole('table', { name: 'Listings' }).getByRole('row').filter({ hasText: text });
  await row.waitFor();
  return (await row.getByRole('cell').allTextContents()).map((t) => t.trim());
}

async function storedListings(): Promise<Listing[]> {
  const stored = JSON.parse(await runCli(['listings', 'list'])) as Listing[] | { data: Listing[] };
  return Array.isArray(stored) ? stored : stored.data;
}

describe('editing and deleting listings in the studio UI', () => {
  beforeAll(async () => {
    if (!existsSync(rendererIndex)) {
      throw new Error(
        `The studio UI is not built (${rendererIndex} is missing). Run \`npm run build:web\` first.`,
      );
    }
    if (!existsSync(CHROMIUM))
      throw new Error(`Chromium is not installed at ${CHROMIUM} (Debian package chromium).`);
    mkdirSync(screenshots, { recursive: true });
    dataDir = mkdtempSync(join(tmpdir(), 'kbstudio-e2e-edit-'));
    for (const [title, price] of [
      ['Harbour tide tables', '1.5'],
      ['Scratch notes', '0.5'],
    ]) {
      await runCli([
        'listings',
        'create',
        '--title',
        title!,
        '--access-model',
        'one_time',
        '--price',
        price!,
      ]);
    }
    const started = await startServer();
    server = started.child;
    baseUrl = started.url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
  });

  afterEach(async () => {
    await context?.close();
    context = undefined;
  });

  afterAll(async () => {
    await browser?.close();
    await stopServer(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('edits a listing’s price in the prefilled form and shows it in the table', async () => {
    const page = await openStudio();
    expect((await rowCells(page, 'Harbour tide tables')).slice(3, 4)).toEqual(['1.5 SOL']);
    await page.getByRole('button', { name: 'Edit Harbour tide tables' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit Harbour tide tables' });
    expect(await dialog.getByRole('textbox', { name: 'Title' }).inputValue()).toBe('Harbour tide tables');
    expect(await dialog.getByRole('textbox', { name: 'Price' }).inputValue()).toBe('1.5');
    expect(await dialog.getByRole('textbox', { name: 'Embedding model' }).inputValue()).not.toBe('');
    await dialog.getByRole('textbox', { name: 'Price' }).fill('2.25');
    await shoot(page, 'edit-listing-1280x800');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await rowCells(page, 'Harbour tide tables')).slice(0, 4)).toEqual([
      expect.stringContaining('Harbour tide tables'),
      '—',
      'One-time',
      '2.25 SOL',
    ]);
    expect((await storedListings()).find((l) => l.title === 'Harbour tide tables')).toMatchObject({
      price: 2.25,
      accessModel: 'one_time',
    });
  });

  it('deletes a draft after a confirmation naming it, and leaves the others', async () => {
    const page = await openStudio();
    await page.getByRole('button', { name: 'Delete Scratch notes' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete listing' });
    await confirm.getByText('Scratch notes').waitFor();
    await confirm.getByText(/0 documents.*0 chunks/).waitFor();
    await shoot(page, 'delete-listing-1280x800');
    await confirm.getByRole('button', { name: 'Delete listing' }).click();
    await confirm.waitFor({ state: 'detached' });
    const table = page.getByRole('table', { name: 'Listings' });
    await table.getByRole('row').filter({ hasText: 'Scratch notes' }).waitFor({ state: 'detached' });
    expect(await table.getByRole('row').filter({ hasText: 'Harbour tide tables' }).count()).toBe(1);
    expect((await storedListings()).map((l) => l.title)).toEqual(['Harbour tide tables']);
  });
});
