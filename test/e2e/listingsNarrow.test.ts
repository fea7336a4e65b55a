import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, inView, shoot } from '../helpers/e2e';

/**
 * The Listings table in a 1024×700 window, in Chromium against a real `kbstudio serve`: every column in
 * view without scrolling sideways, Price never under the pinned row actions, the domain and the
 * embedding model still shown (compact columns); in wider windows, the seven columns wherever they fit;
 * in narrower ones (the desktop window's 960 px minimum), each listing a block of its own.
 */

const studio = new E2eStudio('kbstudio-e2e-listings-narrow-');
// One word with no break in it, so the Domain column cannot wrap narrower: the width a long domain takes.
const DOMAIN = 'otorhinolaryngology';
// Long enough to be cut at the title column's widest.
const ENT = 'ENT trial abstracts: hearing, balance and voice disorders';
let model = '';

const FULL = ['Title', 'Status', 'Domain', 'Price', 'Embedding model', 'Contents', 'Actions'];
const COMPACT = ['Title', 'Status', 'Price', 'Contents', 'Actions'];
const headers = (table: Locator) => table.locator('thead th').allTextContents();

const create = async (args: string[]): Promise<Listing> =>
  JSON.parse(await studio.runCli(['listings', 'create', ...args])) as Listing;

async function openListings(viewport: { width: number; height: number }) {
  const page = await studio.openStudio('#/listings', { viewport, defaultTimeout: 15_000 });
  const table = page.getByRole('table', { name: 'Listings' });
  // The sizes come after the listings: the widest the Contents column gets.
  await expect.poll(() => table.getByTestId('listing-size').first().textContent()).not.toBe('—');
  const card = table.locator('xpath=ancestor::*[contains(@class, "kb-table-wrap")][1]');
  return { page, table, card };
}

/** Whether nothing covers `element` at its centre: what a click (or an eye) there meets is its own. */
const uncovered = (element: Locator) =>
  element.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const top = el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return top !== null && el.contains(top);
  });

/** The titles of the rows whose Price cell is under the row's (pinned) actions cell, even in part. */
async function pricesUnderActions(table: Locator): Promise<string[]> {
  const price = (await headers(table)).indexOf('Price');
  expect(price, 'a Price column').toBeGreaterThan(0);
  const covered: string[] = [];
  for (const row of await table.locator('tbody tr').all()) {
    const cells = row.getByRole('cell');
    const cell = cells.nth(price);
    const box = (await cell.boundingBox())!;
    const actions = (await cells.last().boundingBox())!;
    const clear = (await uncovered(cell)) && box.x + box.width <= actions.x + 0.5;
    if (!clear) covered.push((await row.locator('[title]').first().getAttribute('title')) ?? '?');
  }
  return covered;
}

/**
 * What each width must give: Price clear of the actions (polled: the table takes its compact
 * layout once measured), no sideways scroll, and every column in view.
 */
async function expectReadable(table: Locator, card: Locator, size: string): Promise<void> {
  await expect.poll(() => pricesUnderActions(table), { message: size, timeout: 5_000 }).toEqual([]);
  const overflow = await card.evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow, `${size}: sideways scroll`).toBeLessThanOrEqual(0);
  await expectEveryColumnInView(table, card, size);
}

/** Every cell but the actions lies inside the card's visible box with nothing over it, row by row. */
async function expectEveryColumnInView(table: Locator, card: Locator, size: string): Promise<void> {
  const names = await headers(table);
  const box = (await card.boundingBox())!;
  for (const row of await table.locator('tbody tr').all()) {
    const cells = await row.getByRole('cell').all();
    expect(cells).toHaveLength(names.length);
    for (const [i, cell] of cells.slice(0, -1).entries()) {
      expect(await inView(cell, box), `${size}: ${names[i]} of ${await row.innerText()}`).toBe(true);
    }
  }
}

describe('the Listings table at 1024×700 and wider, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    const digest = await create([
      ...['--title', 'EU case law digest', '--access-model', 'one_time', '--price', '1.5'],
      ...['--domain', 'law'],
    ]);
    model = digest.embeddingModel;
    await create([
      ...['--title', ENT, '--access-model', 'per_query', '--price', '0.000125'],
      ...['--domain', DOMAIN],
    ]);
    const market = await create([
      ...['--title', 'Market data', '--access-model', 'subscription', '--price', '0.25'],
      ...['--subscription-days', '30'],
    ]);
    await studio.runCli(['listings', 'publish', market.id]);
    await studio.runCli(['ingest', '--listing', digest.id, join(FIXTURES, 'umlauts-utf8.md')]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('at 1024×700, shows every column without scrolling sideways, Price never under the actions', async () => {
    const { page, table, card } = await openListings({ width: 1024, height: 700 });
    await expectReadable(table, card, '1024×700');
    expect(await headers(table)).toEqual(COMPACT);
    // The domain and the embedding model are still on each row (under the title's id).
    const ent = table.getByRole('row').filter({ hasText: 'ENT trial abstracts' });
    expect(await uncovered(ent.getByText(DOMAIN))).toBe(true);
    expect(await ent.getByText(DOMAIN).textContent()).toContain(model);
    const market = table.getByRole('row').filter({ hasText: 'Market data' });
    expect(await uncovered(market.getByText(model))).toBe(true);
    for (const action of ['Publish', 'Edit', 'Delete']) {
      const button = table.getByRole('button', { name: `${action} ${ENT}`, exact: true });
      expect(await inView(button, (await card.boundingBox())!), action).toBe(true);
    }
    await shoot(page, 'listings-narrow-1024x700-light');

    // A wider window has room for the seven columns again.
    await page.setViewportSize({ width: 1920, height: 1080 });
    await expect.poll(() => headers(table)).toEqual(FULL);
    await expectReadable(table, card, '1920×1080');
  });

  it('at 1280×800, takes the seven columns where they fit and the compact ones where not', async () => {
    const { page, table, card } = await openListings({ width: 1280, height: 800 });
    // The long domain beside the per-query price leaves the seven columns no room at 1280.
    await expectReadable(table, card, '1280×800');
    expect(await headers(table)).toEqual(COMPACT);
    await shoot(page, 'listings-narrow-1280x800-light');

    // Without that row, they fit.
    await page.getByRole('textbox', { name: 'Search listings' }).fill('digest');
    await table.getByRole('row').filter({ hasText: 'Market data' }).waitFor({ state: 'detached' });
    await expect.poll(() => headers(table)).toEqual(FULL);
    await expectReadable(table, card, '1280×800, one row');
    await shoot(page, 'listings-narrow-search-1280x800-light');
  });

  it('below the compact columns (960×700, the desktop window at its narrowest; 900×700), stacks each listing as a block', async () => {
    for (const viewport of [
      { width: 960, height: 700 },
      { width: 900, height: 700 },
    ]) {
      const size = `${viewport.width}×${viewport.height}`;
      const { page, table, card } = await openListings(viewport);
      // No sideways scroll (the compact columns scrolled under the pinned actions here).
      const overflow = () => card.evaluate((el) => el.scrollWidth - el.clientWidth);
      await expect.poll(overflow, { message: `${size}: sideways scroll` }).toBeLessThanOrEqual(0);
      expect(await card.getAttribute('data-layout')).toBe('stacked');
      // Still a table to assistive technology: its header cells name the compact columns.
      expect(await table.getByRole('columnheader').allTextContents()).toEqual(COMPACT);
      const rows = table.getByRole('row').filter({ has: page.getByRole('cell') });
      expect(await rows.count()).toBe(3);
      for (const row of await rows.all()) {
        await row.scrollIntoViewIfNeeded();
        const box = (await card.boundingBox())!;
        const cells = await row.getByRole('cell').all();
        expect(cells).toHaveLength(COMPACT.length);
        const boxes = [];
        for (const [i, cell] of cells.entries()) {
          expect(await inView(cell, box), `${size}: ${COMPACT[i]} of ${await row.innerText()}`).toBe(true);
          boxes.push((await cell.boundingBox())!);
        }
        // No part of a block lies over another: Price and Contents are never under the actions.
        for (const [i, a] of boxes.entries()) {
          for (const [j, b] of boxes.entries()) {
            if (j <= i) continue;
            const apart =
              a.x + a.width <= b.x + 0.5 ||
              b.x + b.width <= a.x + 0.5 ||
              a.y + a.height <= b.y + 0.5 ||
              b.y + b.height <= a.y + 0.5;
            expect(apart, `${size}: ${COMPACT[i]} and ${COMPACT[j]} of ${await row.innerText()}`).toBe(true);
          }
        }
      }
      // The block says what each figure is, and keeps the domain and the model.
      const ent = rows.filter({ hasText: 'ENT trial abstracts' });
      const label = (cell: Locator) =>
        cell.evaluate((el) =>
          el.ownerDocument.defaultView!.getComputedStyle(el, '::before').content.replace(/"/g, ''),
        );
      const [price, contents] = [ent.getByRole('cell').nth(2), ent.getByRole('cell').nth(3)];
      expect([await label(price), await price.innerText()]).toEqual([
        'Price',
        '0.000125 SOL / query\n\nPer query',
      ]);
      expect(await label(contents)).toBe('Contents');
      expect(await contents.innerText()).toMatch(/^0 chunks\s+0 documents · /);
      expect(await uncovered(ent.getByText(DOMAIN))).toBe(true);
      for (const action of ['Publish', 'Edit', 'Delete']) {
        const button = table.getByRole('button', { name: `${action} ${ENT}`, exact: true });
        await button.scrollIntoViewIfNeeded();
        expect(await uncovered(button), `${size}: ${action}`).toBe(true);
      }
      await shoot(page, `listings-stacked-${viewport.width}x${viewport.height}-light`);

      // Wider again, the table has its columns back.
      await page.setViewportSize({ width: 1920, height: 1080 });
      await expect.poll(() => card.getAttribute('data-layout'), { message: size }).toBe('full');
      await expectReadable(table, card, `${size}, then 1920×1080`);
      await studio.closePage();
    }
  }, 60_000); // four window sizes: 18 s in a slow CI run

  it('at 1920×1080, shows the seven columns, each in view', async () => {
    const { page, table, card } = await openListings({ width: 1920, height: 1080 });
    await page.waitForTimeout(300);
    expect(await headers(table)).toEqual(FULL);
    await expectReadable(table, card, '1920×1080');
    await shoot(page, 'listings-narrow-1920x1080-light');
  });
});
