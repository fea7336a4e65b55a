import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../src/db/services';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, shoot } from '../helpers/e2e';

/**
 * Inspect with many listings and many documents, in Chromium against a real `kbstudio serve`: every
 * listing can be picked (not only the first page of 100), a list of 1,500 documents draws a bounded
 * number of rows, the chosen document lives in the address (reload, Back, Forward), a document deleted
 * elsewhere is reported by its file name, and a chunk search with no word in it finds nothing.
 */

const studio = new E2eStudio('kbstudio-e2e-inspect-state-');
const DOCUMENTS = 1500;
const OTHER_LISTINGS = 105;
let handbook: Listing;
let oldest: Listing;
let seed = '';

const name = (i: number) => `note-${String(i).padStart(4, '0')}.md`;

/** Inspect, with the handbook as the listing the views work on (as if chosen before). */
const openInspect = (hash = '#/inspect'): Promise<Page> =>
  studio.openStudio(hash, {
    defaultTimeout: 20_000,
    initScript: `localStorage.setItem('kbstudio.workListing', ${JSON.stringify(JSON.stringify(handbook.id))});`,
  });

const documentList = (page: Page) => page.getByRole('navigation', { name: 'Documents' });
const heading = (page: Page, source: string) =>
  page.getByRole('button', { name: `Delete ${source}`, exact: true });
const documentOf = (page: Page) =>
  new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '').get('document');

describe('Inspect at scale and in the address, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    // The oldest listing: with 106 after it, the first page of listings (100) leaves it out.
    oldest = await studio.createListing('Archive of the oldest listing');
    const services = openServices(studio.dataDir);
    try {
      const wallet = services.wallets.defaultWallet().address;
      for (let i = 0; i < OTHER_LISTINGS; i++) {
        services.listings.create({ title: `Listing ${i}`, accessModel: 'one_time', price: 1 }, wallet);
      }
    } finally {
      services.close();
    }
    handbook = await studio.createListing('Handbook');
    // A folder's files are named by their path in it: notes/note-0000.md.
    seed = mkdtempSync(join(tmpdir(), 'kbstudio-e2e-inspect-notes-'));
    const folder = join(seed, 'notes');
    mkdirSync(folder);
    for (let i = 0; i < DOCUMENTS; i++) {
      writeFileSync(join(folder, name(i)), `# Note ${i}\n\nThe body of note ${i}: leave, pay and hours.\n`);
    }
    await studio.runCli(['ingest', '--listing', handbook.id, folder]);
    await studio.start();
  }, 300_000);

  afterEach(() => studio.closePage());

  afterAll(async () => {
    await studio.close();
    if (seed) rmSync(seed, { recursive: true, force: true });
  });

  it('offers every listing in the picker, the oldest of 107 too, found by its title', async () => {
    const page = await openInspect();
    const picker = page.getByRole('combobox', { name: 'Listing' });
    await expect.poll(() => picker.inputValue()).toBe(handbook.title);
    await picker.click();
    await picker.fill('oldest listing');
    await page.getByRole('option', { name: /Archive of the oldest listing/ }).click();
    await expect.poll(() => picker.inputValue()).toBe(oldest.title);
    await page.getByText('This knowledge base is empty').waitFor();
    expect(page.url()).toContain(`listing=${oldest.id}`);
  });

  it('draws a bounded number of document rows, says how many, and keeps the filter quick', async () => {
    const page = await openInspect();
    const rows = documentList(page).getByRole('button');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(200);
    await page.getByText(`Showing 200 of 1,500 documents — type to narrow.`).waitFor();
    await shoot(page, 'inspect-many-documents-1280x800-light');

    await page.getByRole('button', { name: 'Show 200 more' }).click();
    await expect.poll(() => rows.count()).toBe(400);

    const filter = page.getByRole('textbox', { name: 'Filter documents' });
    await filter.fill('note-14');
    await expect.poll(() => rows.count()).toBe(100);
    await page.getByText('Showing').waitFor({ state: 'detached' });
    await filter.fill('note-1499');
    await expect.poll(() => rows.count()).toBe(1);
    await filter.fill('');
    await expect.poll(() => rows.count()).toBe(200);
  });

  it('keeps the chosen document in the address: reload, Back and Forward restore it', async () => {
    const page = await openInspect();
    await documentList(page)
      .getByRole('button', { name: /note-0042\.md/ })
      .click();
    await heading(page, 'notes/note-0042.md').waitFor();
    await expect.poll(() => documentOf(page)).toBe('notes/note-0042.md');
    expect(page.url()).toContain(`listing=${handbook.id}`);

    await page.reload();
    await heading(page, 'notes/note-0042.md').waitFor();

    await page.getByRole('link', { name: 'Playground' }).click();
    await page.waitForURL(/#\/playground/);
    await page.goBack();
    await heading(page, 'notes/note-0042.md').waitFor();
    await page.goForward();
    await page.waitForURL(/#\/playground/);
    await page.goBack();
    await heading(page, 'notes/note-0042.md').waitFor();

    // A document far down the list (past the rows drawn) is still shown, and listed as the selected one.
    await page.goto(studio.studioLink(`#/inspect?listing=${handbook.id}&document=notes/note-1400.md`));
    await heading(page, 'notes/note-1400.md').waitFor();
    await documentList(page)
      .getByRole('button', { name: /note-1400\.md/ })
      .waitFor();
  });

  it('falls back to the first document when the address names one that no longer exists', async () => {
    const failed: string[] = [];
    const page = await openInspect(`#/inspect?listing=${handbook.id}&document=gone.md`);
    page.on('response', (r) => r.status() >= 400 && failed.push(r.url()));
    await heading(page, 'notes/note-0000.md').waitFor();
    await expect.poll(() => documentOf(page)).toBe('notes/note-0000.md');
    await page.waitForTimeout(500);
    expect(failed).toEqual([]);
  });

  it('says a document deleted elsewhere was already deleted, by its file name, and drops it', async () => {
    const page = await openInspect();
    await documentList(page)
      .getByRole('button', { name: /note-0007\.md/ })
      .click();
    await heading(page, 'notes/note-0007.md').click();
    const dialog = page.getByRole('dialog', { name: 'Delete document' });
    await dialog.waitFor();
    // Another window deletes it first.
    const docs = await studio.studioCall<{ id: string; source: string }[]>(
      'GET',
      `/listings/${handbook.id}/documents`,
    );
    await studio.studioCall(
      'DELETE',
      `/documents/${docs.find((d) => d.source === 'notes/note-0007.md')!.id}`,
    );

    await dialog.getByRole('button', { name: 'Delete document' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: "'notes/note-0007.md' was already deleted." }).waitFor();
    expect(await page.getByText(/No document 'doc_/).count()).toBe(0);
    await expect
      .poll(() =>
        documentList(page)
          .getByRole('button', { name: /note-0007\.md/ })
          .count(),
      )
      .toBe(0);
    // Its neighbour takes its place.
    await heading(page, 'notes/note-0008.md').waitFor();
    await shoot(page, 'inspect-already-deleted-1280x800-light');
  });

  it('finds no chunk for a search with no word in it, and says to type one', async () => {
    const page = await openInspect();
    await documentList(page)
      .getByRole('button', { name: /note-0001\.md/ })
      .click();
    await heading(page, 'notes/note-0001.md').waitFor();
    // The chunk pane's count (announced), not the document list's "1 chunk" beside the name.
    await page.locator('[aria-live="polite"]', { hasText: /^1 chunk$/ }).waitFor();
    const search = page.getByRole('textbox', { name: 'Search chunks' });
    for (const q of ['^', '"', '--']) {
      await search.fill(q);
      await page.getByText(`“${q}” has no word to search for: type a word (letters or digits).`).waitFor();
      expect(await page.getByText(/matching chunk/).count()).toBe(0);
    }
    await search.fill('leave');
    await page.getByText('1 matching chunk', { exact: true }).waitFor();
    await search.fill('nowhere');
    await page.getByText('No chunk of this document contains “nowhere”.').waitFor();
  });
});
