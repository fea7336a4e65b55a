import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { E2eStudio, FIXTURES as fixtures, shoot, shootAll } from '../helpers/e2e';

/**
 * Ingest and Inspect end to end, in Chromium, against a real `kbstudio serve` (real SQLite): the
 * shared fixture documents are dropped on the window and every file's outcome is checked.
 */

const studio = new E2eStudio('kbstudio-e2e-ingest-');
const openStudio = (hash: string, viewport?: { width: number; height: number }) =>
  studio.openStudio(hash, { viewport, defaultTimeout: 15_000 });

/**
 * Drops files on the window the way the OS does: dragenter reaches the page, the full-window drop
 * target appears, and dragover and drop go to whatever is under the pointer (that target).
 */
async function dropFiles(page: Page, names: string[]): Promise<void> {
  const files = names.map((name) => ({
    name,
    base64: readFileSync(join(fixtures, name)).toString('base64'),
  }));
  // A string, so this file needs no DOM types: it runs in the page.
  await page.evaluate(`(async () => {
    const transfer = new DataTransfer();
    for (const f of ${JSON.stringify(files)}) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], f.name));
    }
    const fire = (target, type) =>
      target.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
    fire(document.body, 'dragenter');
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const under = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
    for (const type of ['dragenter', 'dragover', 'drop']) fire(under, type);
  })()`);
}

describe('Ingest and Inspect in Chromium against kbstudio serve', () => {
  const names = readdirSync(fixtures).sort();

  beforeAll(async () => {
    studio.prepare();
    await studio.createListing('Fixture library');
    await studio.start();
  });

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it(
    'takes every fixture dropped on the window, previews a PDF’s chunks, and shows each file’s outcome',
    { timeout: 240_000 },
    async () => {
      const page = await openStudio('#/ingest');
      await page.getByRole('heading', { name: 'Ingest', exact: true }).waitFor();
      await page.getByText('Drop files, folders or ZIP archives here').waitFor();
      await expect
        .poll(() => page.getByRole('combobox', { name: 'Listing' }).inputValue())
        .toBe('Fixture library');
      await shoot(page, 'ingest-empty-1280x800-light');

      await dropFiles(page, names);
      const queue = page.getByRole('table', { name: 'Files to ingest' });
      await queue
        .getByRole('row')
        .nth(names.length - 1)
        .waitFor();
      expect(await queue.getByRole('row').count()).toBe(names.length);

      await page.getByRole('combobox', { name: 'Document to preview' }).click();
      await page.getByRole('option', { name: 'layout-parser-paper-fast.pdf' }).click();
      const preview = page.getByRole('article', { name: 'Chunk 1' });
      await preview.getByText('Page: 1').waitFor();
      await expect.poll(() => preview.innerText()).toContain('LayoutParser');
      const summary = page.getByText(/^\d+ chunks · [\d,]+ tokens/);
      const coarse = await summary.innerText();
      await page.getByRole('textbox', { name: 'Chunk size (tokens)' }).fill('128');
      await expect.poll(() => summary.innerText(), { timeout: 10_000 }).not.toBe(coarse);
      expect(Number(/^(\d+)/.exec(await summary.innerText())![1])).toBeGreaterThan(
        Number(/^(\d+)/.exec(coarse)![1]),
      );
      await shoot(page, 'ingest-queued-preview-1280x800-light');

      await page.getByRole('button', { name: `Ingest ${names.length} files` }).click();
      await page.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 150_000 });
      const outcome = page.getByRole('table', { name: 'Ingestion outcome' });
      const rows = outcome.getByRole('row');
      const texts = (await rows.allInnerTexts()).slice(1);
      for (const name of names.filter((n) => !n.endsWith('.zip'))) {
        expect(
          texts.some((t) => t.startsWith(name)),
          `${name} has an outcome`,
        ).toBe(true);
      }
      const flat = rows.filter({ hasText: 'loremipsum-flat.pdf' });
      await expect.poll(() => flat.innerText()).toMatch(/rejected/i);
      await expect.poll(() => flat.innerText()).toContain('OCR');
      await expect
        .poll(() => rows.filter({ hasText: 'layout-parser-paper-fast.pdf' }).innerText())
        .toMatch(/ingested/i);
      await expect.poll(() => rows.filter({ hasText: 'umlauts-utf8.md' }).innerText()).toMatch(/ingested/i);
      // A JSON array's items are documents (spec §2): its row says how many.
      await expect
        .poll(() => rows.filter({ hasText: '8 documents, one per JSON item' }).first().innerText())
        .toMatch(/^simple\.json[\s\S]*ingested/i);
      // The ZIP's entries share names with files dropped beside it: one of each pair is refused, by name.
      expect(texts.some((t) => t.includes('the name appears twice'))).toBe(true);
      await shootAll(page, 'ingest-outcome');
    },
  );

  it('takes a dropped folder with its subfolders, keeping each file’s path in the folder', async () => {
    const folder = join(studio.dataDir, 'drop', 'handbook');
    mkdirSync(join(folder, 'policies'), { recursive: true });
    copyFileSync(join(fixtures, 'umlauts-utf8.md'), join(folder, 'intro.md'));
    copyFileSync(join(fixtures, 'simple-table.md'), join(folder, 'policies', 'table.md'));
    writeFileSync(join(folder, '.DS_Store'), 'litter');
    const page = await openStudio('#/ingest');
    await page.getByText('Drop files, folders or ZIP archives here').waitFor();
    // A real OS drop of the folder, through Chromium's input layer (the page gets directory entries).
    const cdp = await page.context().newCDPSession(page);
    const data = { items: [], files: [folder], dragOperationsMask: 1 };
    for (const type of ['dragEnter', 'dragOver', 'drop'] as const) {
      await cdp.send('Input.dispatchDragEvent', { type, x: 640, y: 400, data });
    }
    const queue = page.getByRole('table', { name: 'Files to ingest' });
    await queue.getByRole('row').nth(1).waitFor();
    expect(await queue.getByRole('row').allInnerTexts()).toEqual([
      expect.stringMatching(/^handbook\/intro\.md/),
      expect.stringMatching(/^handbook\/policies\/table\.md/),
    ]);

    // The file picker adds to the same queue.
    const [chooser] = await Promise.all([
      page.waitForEvent('filechooser'),
      page.getByRole('button', { name: 'Choose files' }).click(),
    ]);
    expect(chooser.isMultiple()).toBe(true);
    await chooser.setFiles(join(fixtures, 'fake-memo.pdf'));
    await queue.getByRole('row').nth(2).waitFor();
    expect((await queue.getByRole('row').allInnerTexts()).map((t) => t.split('\t')[0]!.trim())).toEqual([
      'fake-memo.pdf',
      'handbook/intro.md',
      'handbook/policies/table.md',
    ]);
  });

  it('browses a PDF’s chunks with their page numbers, searches them, and deletes a document', async () => {
    const page = await openStudio('#/inspect');
    await page.getByRole('heading', { name: 'Inspect' }).waitFor();
    const docs = page.getByRole('navigation', { name: 'Documents' });
    await docs.getByRole('button', { name: /layout-parser-paper-fast\.pdf/ }).click();
    const chunks = page.getByRole('region', { name: 'Chunks' }).or(page.locator('[aria-label="Chunks"]'));
    await chunks.getByText('Page: 1').first().waitFor();
    await chunks.getByText('Page: 2').first().waitFor();
    await expect
      .poll(() => chunks.getByRole('article').first().innerText())
      .toMatch(/#1[\s\S]*tokens[\s\S]*LayoutParser/);
    await shoot(page, 'inspect-pdf-1280x800-light');

    await page.getByRole('textbox', { name: 'Search chunks' }).fill('toolkit');
    await page.getByText(/^\d+ matching chunks?$/).waitFor();
    // The count can show before the list has re-rendered with the matches: wait for the list itself.
    await expect
      .poll(async () => {
        const texts = await chunks.getByRole('article').allInnerTexts();
        return texts.length > 0 && texts.every((t) => /toolkit/i.test(t));
      })
      .toBe(true);
    await page.setViewportSize({ width: 1920, height: 1080 });
    await shoot(page, 'inspect-search-1920x1080-light');

    await docs.getByRole('button', { name: /stanley-cups-with-emoji\.csv/ }).click();
    await chunks.getByText('Row: 1', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete stanley-cups-with-emoji.csv' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete document' });
    await dialog.getByRole('button', { name: 'Delete document' }).click();
    await dialog.waitFor({ state: 'detached' });
    await docs.getByRole('button', { name: /stanley-cups-with-emoji\.csv/ }).waitFor({ state: 'detached' });
  });

  it('looks right in the dark theme', async () => {
    const page = await openStudio('#/inspect', { width: 1920, height: 1080 });
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    await page.getByRole('navigation', { name: 'Documents' }).waitFor();
    await page.getByText('Page: 1').first().waitFor();
    await shoot(page, 'inspect-1920x1080-dark');
    await page.getByRole('link', { name: 'Ingest' }).click();
    await page.getByText('Drop files, folders or ZIP archives here').waitFor();
    await shoot(page, 'ingest-1280x800-dark');
  });
});
