import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import type { Wallet } from '../../src/shared/studio';
import { E2eStudio, shoot } from '../helpers/e2e';

/**
 * A buyer wallet made and granted from the CLI (`kbstudio wallet create --name buyer1`, `kbstudio
 * credentials grant --wallet buyer1`), not by Test buyers: the view names it, sets its credential and
 * queries as it, and the Playground's "Acting as" shows it. And an address naming no view is replaced
 * by the one shown. In Chromium against a real `kbstudio serve`.
 */

const studio = new E2eStudio('kbstudio-e2e-held-buyers-');
let listing: Listing;
let buyer1: Wallet;

const open = (hash: string) => studio.openStudio(hash, { defaultTimeout: 15_000 });
const hashOf = (page: Page) => page.evaluate<string>('location.hash');
const actingAsField = (page: Page) => page.getByRole('combobox', { name: 'Acting as' });

describe('wallets the studio holds as buyers, and unknown addresses, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    listing = JSON.parse(
      await studio.runCli([
        'listings',
        'create',
        '--title',
        'Monthly notes',
        '--access-model',
        'subscription',
        '--price',
        '0.5',
        '--subscription-days',
        '30',
      ]),
    ) as Listing;
    await studio.runCli(['listings', 'publish', listing.id]);
    buyer1 = JSON.parse(await studio.runCli(['wallet', 'create', '--name', 'buyer1'])) as Wallet;
    await studio.runCli(['credentials', 'grant', '--listing', listing.id, '--wallet', 'buyer1']);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('names a CLI-made wallet on Test buyers, sets it expired, and queries as it in the Playground', async () => {
    const page = await open('#/buyers');
    const row = page.locator(`[data-buyer="${buyer1.address}"]`);
    await row.waitFor();
    expect(await row.innerText()).toContain('buyer1');
    expect(await row.innerText()).not.toContain('Outside wallet');
    // The creator needs no credential: not a row.
    expect(await page.locator(`[data-buyer="${listing.creatorWallet}"]`).count()).toBe(0);

    await row.getByRole('button', { name: 'Set credential' }).click();
    await page.getByRole('menuitem', { name: 'Expired subscription' }).click();
    await expect.poll(() => row.getByTestId('buyer-status').textContent()).toBe('Expired');
    await shoot(page, 'held-buyers-1280x800');

    const query = row.getByRole('link', { name: 'Query as this buyer' });
    expect(await query.getAttribute('aria-disabled')).toBeNull();
    await query.click();
    await expect.poll(() => actingAsField(page).inputValue()).toBe('buyer1 · expired');
    await page.getByRole('textbox', { name: 'Query' }).fill('anything');
    await expect.poll(() => page.getByRole('button', { name: 'Run' }).isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByText('credential_expired', { exact: true }).first().waitFor();

    await actingAsField(page).click();
    await page.getByRole('option', { name: 'Creator (always allowed)' }).click();
    await actingAsField(page).click();
    await page.getByRole('option', { name: 'buyer1 · expired' }).click();
    expect(page.url()).toContain(`as=${encodeURIComponent(buyer1.address)}`);
  });

  it('replaces an address naming no view by the view shown, Listings, without a history entry', async () => {
    const page = await open('#/bogus');
    await page.getByRole('heading', { name: 'Listings' }).first().waitFor();
    await expect.poll(() => hashOf(page)).toBe('#/listings');

    await page.getByRole('link', { name: 'Settings' }).click();
    await expect.poll(() => hashOf(page)).toBe('#/settings');
    await page.evaluate("location.hash = '#/nope?x=1'");
    await expect.poll(() => hashOf(page)).toBe('#/listings');
    await page.goBack();
    await expect.poll(() => hashOf(page)).toBe('#/settings');
  });
});
