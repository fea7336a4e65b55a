import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { OFFLINE_MODEL } from '../../src/shared/embeddingModels';
import { E2eStudio, FIXTURES, shoot } from '../helpers/e2e';

/**
 * Inspect on a long document, in Chromium against a real `kbstudio serve`: a 21,000-line JSONL import
 * (1,050 pages of chunks). Counts and page numbers carry thousands separators, "Go to chunk" opens a
 * chunk's page from the keyboard and refuses a number the document lacks, a common word's matches are
 * counted to "10,000+", and the selected document is still read whole (its chunking line, Re-ingest).
 */

const studio = new E2eStudio('kbstudio-e2e-inspect-long-');
const LINES = 21_000;
let archive: Listing;
let seed = '';

const openInspect = (document: string): Promise<Page> =>
  studio.openStudio(`#/inspect?listing=${archive.id}&document=${encodeURIComponent(document)}`, {
    defaultTimeout: 20_000,
  });

const chunkCards = (page: Page) => page.locator('[aria-label="Chunks"] > article');
const focusedChunk = (page: Page) =>
  page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null");

describe('Inspect on a 21,000-chunk document, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    archive = await studio.createListing('Archive');
    // Pre-built embeddings, one chunk a line: `heron` in every line, `egret` in every 1,000th.
    seed = mkdtempSync(join(tmpdir(), 'kbstudio-e2e-inspect-long-'));
    const lines = Array.from({ length: LINES }, (_, i) =>
      JSON.stringify({
        text: `Line ${i + 1}: the heron${i % 1000 ? '' : ' met an egret'} by the pond.`,
        embedding: Array.from({ length: OFFLINE_MODEL.dimensions }, (_, d) => (((i + d) % 9) - 4) / 4),
      }),
    );
    writeFileSync(join(seed, 'corpus.jsonl'), `${lines.join('\n')}\n`);
    await studio.runCli([
      'ingest',
      '--listing',
      archive.id,
      join(seed, 'corpus.jsonl'),
      join(FIXTURES, 'umlauts-utf8.md'),
    ]);
    await studio.start();
  }, 300_000);

  afterEach(() => studio.closePage());

  afterAll(async () => {
    await studio.close();
    if (seed) rmSync(seed, { recursive: true, force: true });
  });

  it('counts with separators and still shows the selected document whole', async () => {
    const page = await openInspect('corpus.jsonl');
    // The document's line: its chunks from the list, its size and chunking once read whole.
    await page.getByText(/^21,000 chunks · [\d.]+ MB · pre-built embeddings$/).waitFor();
    await page.getByText('21,000 chunks', { exact: true }).waitFor();
    const reingest = page.getByRole('button', { name: 'Re-ingest corpus.jsonl' });
    await expect.poll(() => reingest.getAttribute('aria-disabled')).toBeNull();
    expect(await page.getByText('drop the file again on Ingest').count()).toBe(0);
    await page.getByRole('button', { name: '1,050', exact: true }).waitFor();
    await chunkCards(page).first().getByText('#1', { exact: true }).waitFor();
    await shoot(page, 'inspect-long-document-1280x800-light');

    // Another document: its chunking line.
    await page
      .getByRole('navigation', { name: 'Documents' })
      .getByRole('button', { name: /umlauts-utf8\.md/ })
      .click();
    await page.getByText(/^\d+ chunks? · [\d.]+ (B|KB) · recursive, 512 tokens, 64 overlap$/).waitFor();
    await expect
      .poll(() =>
        page.getByRole('button', { name: 'Re-ingest umlauts-utf8.md' }).getAttribute('aria-disabled'),
      )
      .toBeNull();
  });

  it('goes to a chunk by its number from the keyboard, and refuses a number the document lacks', async () => {
    const page = await openInspect('corpus.jsonl');
    const goTo = page.getByRole('textbox', { name: 'Go to chunk' });
    await goTo.waitFor();
    await goTo.focus();
    await page.keyboard.type('21001');
    await page.keyboard.press('Enter');
    await page.getByText('Type a chunk number from 1 to 21,000.').waitFor();
    expect(await goTo.getAttribute('aria-invalid')).toBe('true');
    await shoot(page, 'inspect-go-to-chunk-refused-1280x800-light');

    await goTo.fill('');
    await page.keyboard.type('12,345');
    await page.keyboard.press('Enter');
    // Its page (618 of 1,050), the focus on the chunk itself.
    await expect.poll(() => focusedChunk(page)).toBe('Chunk 12345');
    expect(await page.getByText('Type a chunk number').count()).toBe(0);
    const chunk = page.getByRole('article', { name: 'Chunk 12345' });
    await chunk.getByText('#12,345', { exact: true }).waitFor();
    await chunk.getByText('Line 12345: the heron by the pond.').waitFor();
    expect(await page.getByRole('button', { name: '618', exact: true }).getAttribute('aria-current')).toBe(
      'page',
    );
    expect(await chunkCards(page).first().getAttribute('aria-label')).toBe('Chunk 12341');
    await shoot(page, 'inspect-go-to-chunk-1280x800-light');

    // A chunk on the page shown, with the Go button.
    await goTo.fill('#12,350');
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await expect.poll(() => focusedChunk(page)).toBe('Chunk 12350');
  });

  it('counts a common word’s matches to 10,000+ and a rare one’s exactly', async () => {
    const page = await openInspect('corpus.jsonl');
    const search = page.getByRole('textbox', { name: 'Search chunks' });
    await search.fill('heron');
    await page.getByText('10,000+ matching chunks', { exact: true }).waitFor();
    // Going to a chunk number is the document's: not while searching.
    expect(await page.getByRole('textbox', { name: 'Go to chunk' }).count()).toBe(0);
    await page.getByRole('button', { name: '500', exact: true }).click();
    await page.getByText('The first 10,000 matches are paged: add a word to narrow the search.').waitFor();
    await expect.poll(() => chunkCards(page).first().getAttribute('aria-label')).toBe('Chunk 9981');

    await search.fill('egret');
    await page.getByText('21 matching chunks', { exact: true }).waitFor();
    await expect.poll(() => chunkCards(page).count()).toBe(20);
    expect(await chunkCards(page).nth(1).getAttribute('aria-label')).toBe('Chunk 1001');
  });
});
