import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dialog, Locator, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, inView, shoot } from '../helpers/e2e';

/**
 * What a creator runs into between the views, in Chromium against a real `kbstudio serve`: tables
 * in a small window, the chunking fields, the Ingest queue across sections, unsaved pricing, a
 * deleted document in Inspect and the keyboard on Ingest.
 */

const studio = new E2eStudio('kbstudio-e2e-ux-');
const SMALL = { width: 900, height: 700 };
const LONG_TITLE = 'Supercalifragilistic_Knowledge_Base_Without_Any_Spaces_In_Its_Title_For_Overflow';
let handbook: Listing;

const fixture = (name: string, mimeType = 'text/markdown') => ({
  name,
  mimeType,
  buffer: readFileSync(join(FIXTURES, name)),
});

const chooseHandbook = () =>
  `localStorage.setItem('kbstudio.workListing', ${JSON.stringify(JSON.stringify(handbook.id))});`;

/**
 * The `options` field of each preview request the page sends (Playwright does not show multipart
 * bodies that carry a file), in `window.previewOptions`.
 */
const RECORD_PREVIEWS = `window.previewOptions = [];
  const send = window.fetch;
  window.fetch = function (input, init) {
    const url = typeof input === 'string' ? input : input.url;
    if (url.endsWith('/studio/preview') && init && init.body instanceof FormData)
      window.previewOptions.push(JSON.parse(init.body.get('options')));
    return send.apply(this, arguments);
  };`;

/** The Ingest view with the handbook chosen. */
async function openIngest(initScript = ''): Promise<Page> {
  const page = await studio.openStudio('#/ingest', {
    defaultTimeout: 15_000,
    initScript: chooseHandbook() + initScript,
  });
  await page.getByText('Drop files, folders or ZIP archives here').waitFor();
  await expect
    .poll(() => page.getByRole('combobox', { name: 'Listing' }).inputValue())
    .toBe('Employment law handbook');
  return page;
}

const queueFiles = (page: Page, files: ReturnType<typeof fixture>[]) =>
  page.locator('input[type="file"]:not([webkitdirectory])').first().setInputFiles(files);

/**
 * Scrolls the table sideways with the mouse wheel, as a creator would (where it can), then says whether `target`
 * lies inside the table's visible box and is what the pointer would hit there.
 */
async function reachable(page: Page, table: Locator, target: Locator): Promise<boolean> {
  const wrap = table.locator('xpath=ancestor::*[contains(@class, "kb-table-wrap")][1]');
  const box = (await wrap.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(2_000, 0);
  await page.waitForTimeout(200);
  return inView(target, box);
}

describe('Studio views in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    handbook = await studio.createListing('Employment law handbook');
    await studio.createListing(LONG_TITLE);
    await studio.runCli([
      'ingest',
      '--listing',
      handbook.id,
      ...['umlauts-utf8.md', 'simple-table.md'].map((name) => join(FIXTURES, name)),
    ]);
    await studio.runCli(['keys', 'create', '--label', 'Production reader']);
    await studio.runCli(['keys', 'create', '--label', 'Nightly evaluation job']);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('at 900×700, puts every row action of the listings table where it can be clicked', async () => {
    const page = await studio.openStudio('#/listings', { viewport: SMALL, defaultTimeout: 15_000 });
    const table = page.getByRole('table', { name: 'Listings' });
    await table.getByText(LONG_TITLE).waitFor();
    for (const title of ['Employment law handbook', LONG_TITLE]) {
      for (const action of ['Publish', 'Edit', 'Delete']) {
        const button = table.getByRole('button', { name: `${action} ${title}`, exact: true });
        expect(await reachable(page, table, button), `${action} ${title}`).toBe(true);
      }
    }
    await shoot(page, 'listings-scrolled-900x700-light');
    await table.getByRole('button', { name: `Edit ${LONG_TITLE}`, exact: true }).click();
    await page.getByRole('dialog').waitFor();
    // The long title is cut in its cell, with the whole title on hover.
    const title = table.getByText(LONG_TITLE);
    expect(await title.getAttribute('title')).toBe(LONG_TITLE);
    expect(await title.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
  });

  it('at 900×700, scrolls the API keys table sideways so every Revoke can be clicked', async () => {
    const page = await studio.openStudio('#/keys', { viewport: SMALL, defaultTimeout: 15_000 });
    const table = page.getByRole('table', { name: 'API keys' });
    for (const label of ['Production reader', 'Nightly evaluation job']) {
      const revoke = table.getByRole('button', { name: `Revoke ${label}` });
      expect(await reachable(page, table, revoke), `Revoke ${label}`).toBe(true);
    }
    await table.getByRole('button', { name: 'Revoke Production reader' }).click();
    await page.getByRole('dialog', { name: 'Revoke API key' }).waitFor();
  });

  it('lets the chunk size be cleared and typed again: 256 is 256, and only 256 is sent', async () => {
    const page = await openIngest(RECORD_PREVIEWS);
    const sizesSent = () => page.evaluate<unknown[]>('window.previewOptions.map((o) => o.chunkSize)');
    await queueFiles(page, [fixture('umlauts-utf8.md')]);
    await page.getByText(/^\d+ chunks? · [\d,]+ tokens/).waitFor();
    expect(await sizesSent()).toEqual([512]);

    const size = page.getByRole('textbox', { name: 'Chunk size (tokens)' });
    await size.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Backspace');
    expect(await size.inputValue()).toBe('');
    await page.getByText('Chunk size must be a whole number from 16 to 8192 tokens.').waitFor();
    await page.keyboard.type('256');
    expect(await size.inputValue()).toBe('256');

    await expect.poll(sizesSent).toEqual([512, 256]);
    await page.waitForTimeout(600);
    expect(await sizesSent()).toEqual([512, 256]);
    await page.getByText(/^\d+ chunks? · [\d,]+ tokens/).waitFor();
    await expect
      .poll(() => page.getByText('Chunk size must be a whole number from 16 to 8192 tokens.').count())
      .toBe(0);
  });

  it('keeps the queued files and the chunking settings when the creator visits another section', async () => {
    const page = await openIngest();
    await queueFiles(page, [fixture('umlauts-utf8.md'), fixture('simple-table.md')]);
    const queue = page.getByRole('table', { name: 'Files to ingest' });
    await queue.getByText('simple-table.md').waitFor();
    await page.getByRole('textbox', { name: 'Overlap (tokens)' }).fill('32');

    await page.getByRole('link', { name: 'Inspect', exact: true }).click();
    await page.getByRole('heading', { name: 'Inspect' }).waitFor();
    await page.getByRole('link', { name: 'Ingest', exact: true }).click();
    await page.getByRole('heading', { name: 'Ingest', level: 1 }).waitFor();

    await queue.getByText('umlauts-utf8.md').waitFor();
    await queue.getByText('simple-table.md').waitFor();
    expect(await page.getByRole('textbox', { name: 'Overlap (tokens)' }).inputValue()).toBe('32');
    await page.getByRole('button', { name: 'Ingest 2 files' }).waitFor();
  });

  it('leaves the invisible drop overlay of Ingest out of the keyboard’s Tab order', async () => {
    const page = await openIngest();
    const reached: string[] = [];
    for (let i = 0; i < 120; i++) {
      await page.keyboard.press('Tab');
      const label = await page.evaluate<string>(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return 'body';
        return el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 40) ?? el.tagName;
      })()`);
      if (reached.includes(label) && label === reached[0]) break;
      reached.push(label);
    }
    expect(reached).toContain('Choose files');
    expect(reached).not.toContain('Drop files to ingest');
  });

  describe('unsaved pricing', () => {
    /** Pricing of the handbook, reached from Listings through the sidebar, with its rate limit edited. */
    async function editPricing(): Promise<Page> {
      const page = await studio.openStudio('#/listings', {
        defaultTimeout: 15_000,
        initScript: chooseHandbook(),
      });
      await page.getByRole('table', { name: 'Listings' }).waitFor();
      await page.getByRole('link', { name: 'Pricing' }).click();
      const limit = page.getByRole('textbox', { name: 'Retrieval rate limit' });
      await expect.poll(() => limit.inputValue()).toBe('60 / minute');
      await limit.fill('120');
      await page.getByText('Unsaved changes').waitFor();
      return page;
    }

    it('asks before another section drops them: Stay keeps them, Discard leaves', async () => {
      const page = await editPricing();
      const limit = page.getByRole('textbox', { name: 'Retrieval rate limit' });
      const dialog = page.getByRole('dialog', { name: 'Discard unsaved changes?' });

      await page.getByRole('link', { name: 'Listings' }).click();
      await dialog.waitFor();
      await shoot(page, 'pricing-leave-unsaved-1280x800-light');
      await dialog.getByRole('button', { name: 'Stay' }).click();
      await dialog.waitFor({ state: 'hidden' });
      expect(new URL(page.url()).hash).toBe('#/pricing');
      expect(await limit.inputValue()).toMatch(/^120/);

      // The back button asks too, and the address stays the page's.
      await page.goBack();
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Stay' }).click();
      await dialog.waitFor({ state: 'hidden' });
      expect(new URL(page.url()).hash).toBe('#/pricing');
      expect(await limit.inputValue()).toMatch(/^120/);

      await page.getByRole('link', { name: 'Listings' }).click();
      await dialog.getByRole('button', { name: 'Discard' }).click();
      await page.getByRole('heading', { name: 'Listings' }).waitFor();
      expect(new URL(page.url()).hash).toBe('#/listings');
      // Nothing was saved.
      const stored = JSON.parse(await studio.runCli(['listings', 'show', handbook.id])) as Listing;
      expect(stored.retrievalRateLimit).toBe(60);
    });

    it('asks before a closed or reloaded browser tab drops them', async () => {
      const page = await editPricing();
      let asked: Dialog | undefined;
      page.on('dialog', (dialog) => {
        asked = dialog;
        void dialog.dismiss();
      });
      await page.close({ runBeforeUnload: true });
      await expect.poll(() => asked?.type()).toBe('beforeunload');
      expect(page.isClosed()).toBe(false);
    });
  });

  it('deletes a document in Inspect without asking for its chunks again (no 404)', async () => {
    const page = await studio.openStudio('#/inspect', {
      defaultTimeout: 15_000,
      initScript: chooseHandbook(),
    });
    const failed: Response[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(response);
    });
    const docs = page.getByRole('navigation', { name: 'Documents' });
    await docs.getByRole('button', { name: /simple-table\.md/ }).click();
    await page.locator('[aria-label="Chunks"]').waitFor();

    await page.getByRole('button', { name: 'Delete simple-table.md' }).click();
    const listed = page.waitForResponse((r) => r.url().endsWith(`/studio/listings/${handbook.id}/documents`));
    await page.getByRole('dialog').getByRole('button', { name: 'Delete document' }).click();
    await listed;
    await expect.poll(() => docs.getByRole('button', { name: /simple-table\.md/ }).count()).toBe(0);
    await page.locator('[aria-label="Chunks"]').waitFor();
    await page.waitForTimeout(500);
    expect(failed.map((r) => `${r.status()} ${r.request().method()} ${r.url()}`)).toEqual([]);
  });
});
