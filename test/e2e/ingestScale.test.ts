import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, shoot, shootAll } from '../helpers/e2e';
import { OPENAI_TEST_KEY, startFakeOpenAi, type FakeServer } from '../helpers/fakeProviders';

/**
 * Ingest at scale and after a partial failure, in Chromium against a real `kbstudio serve`: a folder of
 * 1,500 files is shown and followed a page of rows at a time; files an ingestion rejected stay queued
 * with their reason and are tried again; an outcome row says which ZIP archive a file came from.
 */

const studio = new E2eStudio('kbstudio-e2e-ingest-scale-');
const FILES = 1500;
let offline: Listing;
let hosted: Listing;
let openAi: FakeServer;

const fixture = (name: string) => join(FIXTURES, name);

const openIngest = (listing: Listing) => studio.openIngest(listing);

const queueFiles = (page: Page, files: string[]) =>
  page.locator('input[type="file"]:not([webkitdirectory])').first().setInputFiles(files);

/** The text of each row of a table (header left out), its cells separated by spaces. */
const rowTexts = async (page: Page, table: string) =>
  (await page.getByRole('table', { name: table }).locator('tbody tr').allInnerTexts()).map((t) =>
    t.replace(/\s+/g, ' ').trim(),
  );

describe('Ingest at scale and after rejections, in Chromium', () => {
  beforeAll(async () => {
    studio.prepare();
    openAi = await startFakeOpenAi();
    // The hosted model's provider is this fake one, with no key stored yet.
    await studio.runCli(['settings', 'set', 'openai.baseUrl', `${openAi.url}/v1`]);
    offline = await studio.createListing('Offline notes');
    hosted = JSON.parse(
      await studio.runCli([
        ...['listings', 'create', '--title', 'Hosted notes', '--access-model', 'one_time', '--price', '1'],
        ...['--embedding-model', 'text-embedding-3-small'],
      ]),
    ) as Listing;
    await studio.start();
  });

  afterEach(() => studio.closePage());

  afterAll(async () => {
    await studio.close();
    await openAi?.close();
  });

  it(
    'shows a folder of 1,500 files, its progress and its outcome a page of rows at a time',
    { timeout: 300_000 },
    async () => {
      const folder = join(studio.dataDir, 'drop', 'notes');
      mkdirSync(folder, { recursive: true });
      for (let i = 0; i < FILES; i++) {
        const n = String(i).padStart(4, '0');
        writeFileSync(
          join(folder, `note-${n}.md`),
          `# Note ${n}\n\nThe ${n}th note of the set, on tide ${i}.\n`,
        );
      }
      const page = await openIngest(offline);
      await page.locator('input[webkitdirectory]').setInputFiles(folder);
      const ingest = page.getByRole('button', { name: `Ingest ${FILES.toLocaleString('en-US')} files` });
      await ingest.waitFor({ timeout: 60_000 });

      // The queue: one page of rows, the others a click away.
      expect(await rowTexts(page, 'Files to ingest')).toHaveLength(50);
      const pages = page.getByRole('navigation', { name: 'Pages of the files to ingest' });
      expect(await pages.innerText()).toContain('1–50 of 1,500 files');
      await pages.getByRole('button', { name: '30', exact: true }).click();
      await expect.poll(() => rowTexts(page, 'Files to ingest')).toHaveLength(50);
      expect((await rowTexts(page, 'Files to ingest'))[49]).toMatch(/^notes\/note-1499\.md/);
      await shoot(page, 'ingest-scale-queue-1280x800-light');

      // The most table rows the page holds at any moment of the job (the page counts them itself).
      await page.evaluate(`(() => {
        const rows = document.getElementsByTagName('tr');
        window.mostRows = rows.length;
        new MutationObserver(() => { window.mostRows = Math.max(window.mostRows, rows.length); })
          .observe(document.body, { childList: true, subtree: true });
      })()`);
      await ingest.click();
      await page.getByText(/· [\d,]+ of 1,500 files ·/).waitFor({ timeout: 60_000 });
      await shoot(page, 'ingest-scale-running-1280x800-light');
      await page.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 240_000 });

      // Queue, progress and outcome together never held more than a few pages of rows.
      expect(await page.evaluate('window.mostRows')).toBeLessThan(200);
      expect(await rowTexts(page, 'Ingestion outcome')).toHaveLength(50);
      const outcomePages = page.getByRole('navigation', { name: 'Pages of the ingestion outcome' });
      expect(await outcomePages.innerText()).toContain('1–50 of 1,500 files');
      await outcomePages.getByRole('button', { name: '30', exact: true }).click();
      await expect
        .poll(async () => (await rowTexts(page, 'Ingestion outcome')).at(-1))
        .toMatch(/^notes\/note-1499\.md ingested 1$/i);
      // Every file was ingested: none stays queued.
      await page.getByText('Nothing queued yet.').waitFor();
      await shoot(page, 'ingest-scale-outcome-1280x800-light');
    },
  );

  it('keeps the rejected files queued with their reason, and ingests them once the key is added', async () => {
    const page = await openIngest(hosted);
    await queueFiles(page, [
      fixture('umlauts-utf8.md'),
      fixture('simple-table.md'),
      fixture('loremipsum-flat.pdf'),
    ]);
    await page.getByRole('button', { name: 'Ingest 3 files' }).click();
    await page.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await rowTexts(page, 'Ingestion outcome')).toEqual([
      expect.stringMatching(/^loremipsum-flat\.pdf .*OCR.* rejected 0$/i),
      expect.stringMatching(/^simple-table\.md .*Settings → Embedding providers.* rejected 0$/i),
      expect.stringMatching(/^umlauts-utf8\.md .*Settings → Embedding providers.* rejected 0$/i),
    ]);

    // Nothing was ingested: all three stay queued, each with the reason it was rejected.
    const queue = await rowTexts(page, 'Files to ingest');
    expect(queue).toEqual([
      expect.stringMatching(/^loremipsum-flat\.pdf Not ingested: .*OCR/),
      expect.stringMatching(/^simple-table\.md Not ingested: .*Settings → Embedding providers/),
      expect.stringMatching(/^umlauts-utf8\.md Not ingested: .*Settings → Embedding providers/),
    ]);
    await page.getByText('3 files were not ingested').waitFor();
    await shootAll(page, 'ingest-rejected-kept');

    // The cause fixed where the reason says, the same queue is ingested again.
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    const key = page.locator('form').filter({ has: page.getByLabel('OpenAI API key', { exact: true }) });
    await key.getByLabel('OpenAI API key', { exact: true }).fill(OPENAI_TEST_KEY);
    await key.getByRole('button', { name: 'Save OpenAI API key' }).click();
    await key.getByText('stored', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'Ingest', exact: true }).click();
    await page.getByRole('button', { name: 'Ingest 3 files' }).click();
    await page.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 60_000 });
    expect(await rowTexts(page, 'Ingestion outcome')).toEqual([
      expect.stringMatching(/^loremipsum-flat\.pdf .* rejected 0$/i),
      expect.stringMatching(/^simple-table\.md ingested [1-9]/i),
      expect.stringMatching(/^umlauts-utf8\.md ingested [1-9]/i),
    ]);
    // The ingested files left the queue; the PDF without a text layer stays, with its reason.
    expect(await rowTexts(page, 'Files to ingest')).toEqual([
      expect.stringMatching(/^loremipsum-flat\.pdf Not ingested: .*OCR/),
    ]);
    await page.getByRole('button', { name: 'Ingest 1 file' }).waitFor();
    await shoot(page, 'ingest-rejected-retried-1280x800-light');
  }, 120_000);

  it('says which ZIP archive a file came from when a file queued beside it has its name', async () => {
    const page = await openIngest(offline);
    await queueFiles(page, [fixture('simple.zip'), fixture('stanley-cups.csv')]);
    await page.getByRole('button', { name: 'Ingest 2 files' }).click();
    await page.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 60_000 });
    // The archive comes first, so its entry takes the name and the file queued beside it is refused.
    const rows = await rowTexts(page, 'Ingestion outcome');
    expect(rows).toHaveLength(3);
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^simple\.zip › ideas-page\.html ingested/i),
        expect.stringMatching(/^simple\.zip › stanley-cups\.csv .*ingested 3$/i),
        expect.stringMatching(/^stanley-cups\.csv .*the name appears twice.* rejected 0$/i),
      ]),
    );
    // The archive was ingested whole and leaves the queue; the refused file stays, with its reason.
    expect(await rowTexts(page, 'Files to ingest')).toEqual([
      expect.stringMatching(/^stanley-cups\.csv Not ingested: .*the name appears twice/),
    ]);
    await shootAll(page, 'ingest-zip-origin');
  }, 60_000);
});
