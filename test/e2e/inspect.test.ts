import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, SCREENSHOTS, shootAll } from '../helpers/e2e';

/**
 * Inspect end to end, in Chromium, against a real `kbstudio serve`: a PDF's chunks with their page
 * numbers, and re-ingesting a document from the original file the studio kept, with new chunking.
 */

const studio = new E2eStudio('kbstudio-e2e-inspect-');
const openStudio = (hash: string) => studio.openStudio(hash, { defaultTimeout: 15_000 });
const PDF = 'layout-parser-paper-fast.pdf';

describe('Inspect and re-ingest in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    const listing = JSON.parse(
      await studio.runCli([
        'listings',
        'create',
        '--title',
        'Papers',
        '--access-model',
        'one_time',
        '--price',
        '1',
      ]),
    ) as Listing;
    await studio.runCli([
      'ingest',
      '--listing',
      listing.id,
      ...[PDF, 'umlauts-utf8.md', 'stanley-cups.csv', 'simple.json'].map((name) => join(FIXTURES, name)),
    ]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('shows a PDF’s chunks with their page numbers', async () => {
    const page = await openStudio('#/inspect');
    const docs = page.getByRole('navigation', { name: 'Documents' });
    await docs.getByRole('button', { name: new RegExp(PDF.replace(/\./g, '\\.')) }).click();
    const chunks = page.locator('[aria-label="Chunks"]');
    await chunks.getByText('Page: 1').first().waitFor();
    await chunks.getByText('Page: 2').first().waitFor();
    await shootAll(page, 'inspect-pdf', { fullPage: false });
  });

  it('shows a JSON array file as one entry whose items are documents, deleted as a whole', async () => {
    const page = await openStudio('#/inspect');
    const docs = page.getByRole('navigation', { name: 'Documents' });
    // simple.json holds 8 items, each one document for the API (spec §2), each one chunk here.
    const entry = docs.getByRole('button', { name: /simple\.json/ });
    await expect.poll(() => entry.innerText()).toMatch(/JSON · 8 documents · 8 chunks/);
    await entry.click();
    await page
      .getByText(/^8 documents · 8 chunks · [\d.]+ (B|KB) · recursive, 512 tokens, 64 overlap$/)
      .waitFor();
    const chunks = page.locator('[aria-label="Chunks"]');
    await chunks.getByText('Item: 7').first().waitFor();
    await page.getByRole('button', { name: 'Delete simple.json' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete document' });
    await expect
      .poll(() => dialog.innerText())
      .toMatch(/Delete simple\.json \(8 documents\) and its 8 chunks/);
    await shootAll(page, 'inspect-json-items', { fullPage: false });
    await dialog.getByRole('button', { name: 'Keep it' }).click();
  });

  it('re-ingests the PDF from its kept file with smaller chunks and shows the job’s outcome', async () => {
    const page = await openStudio('#/inspect');
    const docs = page.getByRole('navigation', { name: 'Documents' });
    await docs.getByRole('button', { name: new RegExp(PDF.replace(/\./g, '\\.')) }).click();
    const summary = page.getByText(/^\d+ chunks · [\d.]+ KB · recursive, 512 tokens, 64 overlap$/);
    const before = Number(/^(\d+)/.exec(await summary.innerText())![1]);

    await page.getByRole('button', { name: `Re-ingest ${PDF}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Re-ingest document' });
    // The form starts from the settings the document was ingested with.
    await expect
      .poll(() => dialog.getByRole('textbox', { name: 'Chunk size (tokens)' }).inputValue())
      .toBe('512');
    await expect
      .poll(() => dialog.getByRole('textbox', { name: 'Overlap (tokens)' }).inputValue())
      .toBe('64');
    await dialog.getByText('These are the settings it was ingested with').waitFor();
    await dialog.getByRole('textbox', { name: 'Chunk size (tokens)' }).fill('128');
    await dialog.getByRole('textbox', { name: 'Overlap (tokens)' }).fill('16');
    await dialog.getByText('These are the settings it was ingested with').waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Re-ingest' }).click();
    await dialog.getByText('Ingestion finished', { exact: true }).waitFor({ timeout: 60_000 });
    const outcome = dialog.getByRole('table', { name: 'Ingestion outcome' }).getByRole('row').nth(1);
    await expect.poll(() => outcome.innerText()).toMatch(new RegExp(`^${PDF}[\\s\\S]*ingested`, 'i'));
    await shootAll(page, 'inspect-reingest-outcome', { fullPage: false });
    await dialog.getByRole('button', { name: 'Close' }).click();

    const after = page.getByText(/^\d+ chunks · [\d.]+ KB · recursive, 128 tokens, 16 overlap$/);
    await after.waitFor();
    expect(Number(/^(\d+)/.exec(await after.innerText())![1])).toBeGreaterThan(before * 2);
    await page.locator('[aria-label="Chunks"]').getByText('Page: 1').first().waitFor();
    // The re-ingestion alone may take up to 60 s (above) beside another suite's Chromium and servers.
  }, 120_000);

  it('explains that a document whose original file was not kept must be dropped again', async () => {
    const hash = createHash('sha256')
      .update(readFileSync(join(FIXTURES, 'umlauts-utf8.md')))
      .digest('hex');
    rmSync(join(studio.dataDir, 'sources', hash.slice(0, 2), hash));
    const page = await openStudio('#/inspect');
    await page
      .getByRole('navigation', { name: 'Documents' })
      .getByRole('button', { name: /umlauts-utf8\.md/ })
      .click();
    await page.getByText('to re-ingest it, drop the file again on Ingest').waitFor();
    const button = page.getByRole('button', { name: 'Re-ingest umlauts-utf8.md' });
    expect(await button.getAttribute('aria-disabled')).toBe('true');
    await button.hover();
    await page
      .getByRole('tooltip', { name: 'The original file was not kept: drop it again on Ingest' })
      .waitFor();
    await button.dispatchEvent('click');
    await page.waitForTimeout(300);
    expect(await page.getByRole('dialog', { name: 'Re-ingest document' }).count()).toBe(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'inspect-source-not-kept-1280x800-light.png') });
  });
});
