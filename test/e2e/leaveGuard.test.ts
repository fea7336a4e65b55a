import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dialog, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { E2eStudio, FIXTURES, holdEvents } from '../helpers/e2e';

/**
 * Closing the desktop app's window during a job asks first (src/renderer/src/lib/leaveGuard.ts; the
 * main process turns the page's refusal into a dialog). The page is run in Chromium with the desktop
 * bridge the preload script would give it; a browser tab (`kbstudio serve`) asks nothing, since
 * closing it stops no job.
 */

const studio = new E2eStudio('kbstudio-e2e-leave-');
/** What src/preload/index.ts exposes, as far as the page looks at it. */
const DESKTOP_BRIDGE = `Object.defineProperty(window, 'kbstudio', { value: Object.freeze({
  platform: 'linux', isolation: { sandboxed: true, contextIsolated: true },
  versions: { electron: '0.0.0-test', chrome: '', node: '' } }) });`;

/** Queues one fixture on Ingest and starts it, its progress held so that it stays running. */
async function startHeldIngestion(page: Page): Promise<() => void> {
  const events = await holdEvents(page, '**/studio/jobs/*/events');
  await page.getByText('Drop files, folders or ZIP archives here').waitFor();
  await expect.poll(() => page.getByRole('combobox', { name: 'Listing' }).inputValue()).toBe('Guarded');
  await page
    .locator('input[type="file"]:not([webkitdirectory])')
    .first()
    .setInputFiles({
      name: 'umlauts-utf8.md',
      mimeType: 'text/markdown',
      buffer: readFileSync(join(FIXTURES, 'umlauts-utf8.md')),
    });
  await page.getByRole('button', { name: 'Ingest 1 file' }).click();
  await page.getByText('Ingesting…').waitFor();
  return events.release;
}

/** Closes the page as a window close would, and says whether it asked first (the ask is declined). */
async function closeAsks(page: Page): Promise<boolean> {
  let asked: Dialog | undefined;
  const onDialog = (dialog: Dialog) => {
    asked = dialog;
    void dialog.dismiss();
  };
  page.on('dialog', onDialog);
  const closed = new Promise<void>((resolve) => page.once('close', () => resolve()));
  await page.close({ runBeforeUnload: true });
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  page.off('dialog', onDialog);
  if (asked) expect(asked.type()).toBe('beforeunload');
  return asked !== undefined;
}

describe('Closing the window during a job', () => {
  beforeAll(async () => {
    studio.prepare();
    await studio.createListing('Guarded');
    await studio.start();
  });

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('in the desktop app, asks while an ingestion runs and not once it has finished', async () => {
    const page = await studio.openStudio('#/ingest', { initScript: DESKTOP_BRIDGE, defaultTimeout: 15_000 });
    const release = await startHeldIngestion(page);

    expect(await closeAsks(page)).toBe(true);
    expect(page.isClosed()).toBe(false);

    release();
    await page.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await closeAsks(page)).toBe(false);
    expect(page.isClosed()).toBe(true);
  });

  it('in a browser tab (kbstudio serve), asks nothing: the job goes on without the tab', async () => {
    const page = await studio.openStudio('#/ingest', { defaultTimeout: 15_000 });
    await startHeldIngestion(page);
    expect(await closeAsks(page)).toBe(false);
    expect(page.isClosed()).toBe(true);
  });

  it('a tab opened again while the ingestion runs follows it to its end', async () => {
    const page = await studio.openStudio('#/ingest', { defaultTimeout: 15_000 });
    await page.getByText('Drop files, folders or ZIP archives here').waitFor();
    await expect.poll(() => page.getByRole('combobox', { name: 'Listing' }).inputValue()).toBe('Guarded');
    // Seconds of parsing and embedding (12 MB), so the job still runs when the next tab asks for it.
    const files = Array.from({ length: 40 }, (_, i) => ({
      name: `notes-${i}.md`,
      mimeType: 'text/markdown',
      buffer: Buffer.from(generatedNotes(i, 300_000)),
    }));
    await page.locator('input[type="file"]:not([webkitdirectory])').first().setInputFiles(files);
    await page.getByRole('button', { name: 'Ingest 40 files' }).click();
    await page.getByText('Ingesting…').waitFor();
    await page.close();

    // Waited for before the tab loads: a busy server may answer the app's first requests before the
    // page's load event, so a wait begun after `openStudio` could miss it (it did once in CI).
    let listed: Promise<Response> | undefined;
    const again = await studio.openStudio('#/ingest', {
      defaultTimeout: 15_000,
      beforeGoto: (page) => {
        listed = page.waitForResponse((r) => r.url().includes('/studio/jobs?listingId='));
      },
    });
    const [latest] = ((await (await listed!).json()) as { data: { state: string }[] }).data;
    expect(latest?.state, 'the job ended before the tab asked: give it more to ingest').toBe('running');
    // The tab did not start the job: it shows its outcome only by following it (the running job may be
    // shown for a moment only, so that is not waited for).
    await again.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 120_000 });
    expect(await again.getByRole('table', { name: 'Ingestion outcome' }).getByText('ingested').count()).toBe(
      40,
    );
  }, 90_000); // an ingestion followed by two pages: 20 s in a slow CI run
});

/** A Markdown file of about `bytes` bytes: headed sections of sentences that differ from file to file. */
function generatedNotes(seed: number, bytes: number): string {
  const words = ['tide', 'harbor', 'ledger', 'glacier', 'orchard', 'beacon', 'quarry', 'meadow', 'signal'];
  const parts: string[] = [];
  let size = 0;
  for (let s = 0; size < bytes; s++) {
    const section = `## Section ${seed}.${s}\n\n${Array.from(
      { length: 12 },
      (_, k) =>
        `The ${words[(seed + s + k) % words.length]} report ${seed * 1000 + s * 12 + k} notes a change.`,
    ).join(' ')}\n\n`;
    parts.push(section);
    size += section.length;
  }
  return `# Notes ${seed}\n\n${parts.join('')}`;
}
