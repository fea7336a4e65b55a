import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, shoot } from '../helpers/e2e';

/**
 * The studio UI end to end, in Chromium, against a real `kbstudio serve`: data made through the
 * CLI must show in the UI, and what the UI creates must reach the server.
 */
const studio = new E2eStudio('kbstudio-e2e-');
const runCli = (args: string[]) => studio.runCli(args);
const openStudio = (hash = '', viewport?: { width: number; height: number }) =>
  studio.openStudio(hash, { viewport });
let cliListing: Listing;

/** Resizes the viewport and waits until the shell's sidebar has been laid out for the new height. */
async function resize(page: Page, width: number, height: number): Promise<void> {
  await page.setViewportSize({ width, height });
  const navbar = page.locator('.mantine-AppShell-navbar');
  await expect
    .poll(async () => {
      const box = await navbar.boundingBox();
      return box && box.y + box.height;
    })
    .toBe(height);
}

/** The text content of each cell of the table row that contains `text` (as written, before CSS casing). */
async function rowCells(page: Page, tableName: string, text: string): Promise<string[]> {
  const row = page.getByRole('table', { name: tableName }).getByRole('row').filter({ hasText: text });
  await row.waitFor();
  return (await row.getByRole('cell').allTextContents()).map((t) => t.trim());
}

describe('studio UI in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    cliListing = JSON.parse(
      await runCli([
        'listings',
        'create',
        '--title',
        'EU case law digest',
        '--access-model',
        'one_time',
        '--price',
        '1.5',
        '--domain',
        'law',
      ]),
    ) as Listing;
    await runCli([
      'listings',
      'create',
      '--title',
      'Clinical trial summaries',
      '--access-model',
      'subscription',
      '--price',
      '2',
      '--subscription-days',
      '30',
      '--domain',
      'medicine',
    ]);
    await runCli(['ingest', '--listing', cliListing.id, join(FIXTURES, 'umlauts-utf8.md')]);
    await studio.start();
  });

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('lists the listings the CLI created: title, price, status, model, documents, chunks and size', async () => {
    const page = await openStudio();
    expect(await page.title()).toBe('Listings · KB Studio');
    await page.getByRole('heading', { name: 'Listings' }).waitFor();
    const row = page
      .getByRole('table', { name: 'Listings' })
      .getByRole('row')
      .filter({ hasText: 'EU case law' });
    // The size comes from the studio after the listings: wait for it.
    await row.getByText(/^\d+(\.\d)? (B|KB)$/).waitFor();
    const cells = await rowCells(page, 'Listings', 'EU case law digest');
    const chunks = JSON.parse(await runCli(['listings', 'show', cliListing.id])) as Listing;
    const bytes = statSync(join(FIXTURES, 'umlauts-utf8.md')).size;
    const chunkCount = `${chunks.chunkCount} ${chunks.chunkCount === 1 ? 'chunk' : 'chunks'}`;
    expect(cells.slice(0, 6)).toEqual([
      `EU case law digest${cliListing.id}`,
      'Draft',
      'law',
      '1.5 SOLOne-time',
      cliListing.embeddingModel,
      `${chunkCount}1 document · ${bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`}`,
    ]);
    expect(chunks.chunkCount).toBeGreaterThan(0);
    const clinical = await rowCells(page, 'Listings', 'Clinical trial summaries');
    expect([clinical[1], ...clinical.slice(3, 6)]).toEqual([
      'Draft',
      '2 SOL / 30 daysSubscription',
      cliListing.embeddingModel,
      '0 chunks0 documents · 0 B',
    ]);
    await shoot(page, 'listings-1280x800-light');
    await resize(page, 1920, 1080);
    await shoot(page, 'listings-1920x1080-light');
  });

  it('searches listings on the server', async () => {
    const page = await openStudio();
    const table = page.getByRole('table', { name: 'Listings' });
    // The unfiltered list first: otherwise the row below is "detached" before it was ever shown.
    await table.getByRole('row').filter({ hasText: 'EU case law digest' }).waitFor();
    await page.getByRole('textbox', { name: 'Search listings' }).fill('clinical');
    await table.getByRole('row').filter({ hasText: 'EU case law digest' }).waitFor({ state: 'detached' });
    expect(await table.getByRole('row').filter({ hasText: 'Clinical trial summaries' }).count()).toBe(1);
    await page.getByRole('textbox', { name: 'Search listings' }).fill('zzzz-no-such-listing');
    await page.getByText('No matching listings').waitFor();
  });

  it('creates a listing from the form, showing the server’s validation next to the field, and publishes it', async () => {
    const page = await openStudio();
    await page.getByRole('button', { name: 'New listing' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New listing' });
    await dialog.getByRole('textbox', { name: 'Title' }).fill('Solana program audits');
    await dialog.getByRole('textbox', { name: 'Domain' }).fill('security');
    await dialog.getByText('Per query', { exact: true }).click();
    await dialog.getByRole('textbox', { name: 'Price per query' }).fill('0');
    await dialog.getByRole('button', { name: 'Create draft' }).click();
    // The server refuses a free per-query listing; its message sits under the price input.
    const priceError = dialog.getByText('A per_query listing needs a price above 0 SOL per query.');
    await priceError.waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Price per query' }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    await shoot(page, 'new-listing-validation-1280x800');

    await dialog.getByRole('textbox', { name: 'Price per query' }).fill('0.002');
    await dialog.getByRole('button', { name: 'Create draft' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await rowCells(page, 'Listings', 'Solana program audits')).slice(1, 4)).toEqual([
      'Draft',
      'security',
      '0.002 SOL / queryPer query',
    ]);

    await page.getByRole('button', { name: 'Publish Solana program audits' }).click();
    const confirm = page.getByRole('dialog', { name: 'Publish listing' });
    await confirm.getByText('Its knowledge base is still empty').waitFor();
    await confirm.getByRole('button', { name: 'Publish' }).click();
    await confirm.waitFor({ state: 'detached' });
    const row = page
      .getByRole('table', { name: 'Listings' })
      .getByRole('row')
      .filter({ hasText: 'Solana program audits' });
    await row.getByText('Published').waitFor();
    expect(await row.getByRole('button', { name: /Publish/ }).count()).toBe(0);

    const stored = JSON.parse(await runCli(['listings', 'list'])) as Listing[] | { data: Listing[] };
    const all = Array.isArray(stored) ? stored : stored.data;
    expect(all.find((l) => l.title === 'Solana program audits')).toMatchObject({
      accessModel: 'per_query',
      price: 0.002,
      domain: 'security',
      status: 'published',
    });
  });

  it('creates an API key, shows it once with a copy button, lists it, and revokes it after confirmation', async () => {
    const page = await openStudio();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByText('No API keys yet').waitFor();
    await shoot(page, 'api-keys-empty-1280x800-light');
    await page.getByRole('button', { name: 'Create key' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Create API key' });
    await dialog.getByRole('textbox', { name: 'Label' }).fill('e2e assistant');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByRole('dialog', { name: 'Copy your new API key' });
    await shown.getByText('Shown only once').waitFor();
    const key = (await shown.getByTestId('new-api-key').innerText()).trim();
    expect(key).toMatch(/^kbs_[0-9A-Za-z]{32}$/);
    await studio.context!.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: studio.baseUrl });
    await shown.getByRole('button', { name: 'Copy', exact: true }).click();
    await shown.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
    await shoot(page, 'api-key-created-1280x800');
    await shown.getByRole('button', { name: 'I have copied the key' }).click();
    await shown.waitFor({ state: 'detached' });

    const cells = await rowCells(page, 'API keys', 'e2e assistant');
    expect(cells[1]).toBe('Active');
    expect(cells[2]).toBe(`${key.slice(0, 8)}…`);
    expect(cells[5]).toBe('Never');
    // Shown once: after the dialog closes the page holds only the prefix.
    expect(await page.content()).not.toContain(key);
    await shoot(page, 'api-keys-1280x800-light');

    await page.getByRole('button', { name: 'Revoke e2e assistant' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke API key' });
    await confirm.getByText('This cannot be undone.', { exact: false }).waitFor();
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    const row = page
      .getByRole('table', { name: 'API keys' })
      .getByRole('row')
      .filter({ hasText: 'e2e assistant' });
    await row.getByText('Revoked').waitFor();

    const keys = JSON.parse(await runCli(['keys', 'list'])) as
      { label: string; revokedAt: string | null }[] | { data: { label: string; revokedAt: string | null }[] };
    const listed = (Array.isArray(keys) ? keys : keys.data).find((k) => k.label === 'e2e assistant');
    expect(listed?.revokedAt).toEqual(expect.any(String));
  });

  it('switches to the dark theme and keeps it after a reload', async () => {
    const page = await openStudio();
    const html = page.locator('html');
    await page.getByRole('heading', { name: 'Listings' }).waitFor();
    expect(await html.getAttribute('data-mantine-color-scheme')).toBe('light');
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    await page.getByRole('button', { name: 'Switch to light theme' }).waitFor();
    expect(await html.getAttribute('data-mantine-color-scheme')).toBe('dark');
    await page.reload();
    await page.getByRole('table', { name: 'Listings' }).waitFor();
    expect(await html.getAttribute('data-mantine-color-scheme')).toBe('dark');
    await shoot(page, 'listings-1280x800-dark');
    await resize(page, 1920, 1080);
    await shoot(page, 'listings-1920x1080-dark');
    await page.getByRole('link', { name: 'API keys' }).click();
    // The table, or the empty state when no key exists yet: this test must not depend on another's keys.
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await shoot(page, 'api-keys-1920x1080-dark');
  });

  it('keeps a file dropped outside the Ingest drop zone from navigating away from the studio', async () => {
    const page = await openStudio('#/listings');
    await page.getByRole('heading', { name: 'Listings' }).waitFor();
    // Runs in the page (a string: this test project has no DOM types).
    const prevented = await page.evaluate(`['dragover', 'drop'].map((type) => {
      const data = new DataTransfer();
      data.items.add(new File(['# notes'], 'notes.md', { type: 'text/markdown' }));
      const event = new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data });
      document.querySelector('main').dispatchEvent(event);
      return event.defaultPrevented;
    })`);
    // A drop event left unprevented is what makes a browser open the file in place of the app.
    expect(prevented).toEqual([true, true]);
    expect(page.url()).toContain('#/listings');
  });

  it('moves through the sidebar with the keyboard', async () => {
    const page = await openStudio();
    const listings = page.getByRole('link', { name: 'Listings' });
    await listings.focus();
    expect(await listings.getAttribute('aria-current')).toBe('page');
    const entries = await page
      .getByRole('navigation', { name: 'Studio sections' })
      .getByRole('link')
      .allInnerTexts();
    const steps = entries.findIndex((t) => t.trim() === 'API keys');
    for (let i = 0; i < steps; i++) await page.keyboard.press('ArrowDown');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('API keys');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/keys');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.keyboard.press('Home');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Listings');
    await page.goBack();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });

  it('shows the version, data directory and API base URL in Settings', async () => {
    const page = await openStudio('#/settings');
    const info = page.getByRole('definition');
    await page.getByText(studio.dataDir, { exact: true }).waitFor();
    const values = (await info.allInnerTexts()).map((t) => t.trim());
    expect(values[0]).toMatch(/^\d+\.\d+\.\d+/);
    expect(values).toContain(studio.dataDir);
    expect(values).toContain(`${studio.baseUrl}/v1`);
    expect(values).toContain('Browser · served by kbstudio serve');
    await shoot(page, 'settings-1280x800-light');
  });
});
