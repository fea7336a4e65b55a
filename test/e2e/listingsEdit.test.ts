import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, shoot } from '../helpers/e2e';

/** Editing and deleting listings in the studio UI, in Chromium, against a real `kbstudio serve`. */

const studio = new E2eStudio('kbstudio-e2e-edit-');
const runCli = (args: string[]) => studio.runCli(args);
const openStudio = () => studio.openStudio();

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
    studio.prepare();
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
    await studio.start();
  });

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('edits a listing’s price in the prefilled form and shows it in the table', async () => {
    const page = await openStudio();
    expect((await rowCells(page, 'Harbour tide tables')).slice(3, 4)).toEqual(['1.5 SOLOne-time']);
    await page.getByRole('button', { name: 'Edit Harbour tide tables' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit Harbour tide tables' });
    await expect
      .poll(() => dialog.getByRole('textbox', { name: 'Title' }).inputValue())
      .toBe('Harbour tide tables');
    await expect.poll(() => dialog.getByRole('textbox', { name: 'Price' }).inputValue()).toBe('1.5');
    await expect
      .poll(() => dialog.getByRole('combobox', { name: 'Embedding model' }).inputValue())
      .toContain('kbs-offline-hybrid-v1');
    await dialog.getByRole('textbox', { name: 'Price' }).fill('2.25');
    await shoot(page, 'edit-listing-1280x800');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const edited = await rowCells(page, 'Harbour tide tables');
    expect([edited[0], edited[2], edited[3]]).toEqual([
      expect.stringContaining('Harbour tide tables'),
      '—',
      '2.25 SOLOne-time',
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
