import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, shootAll } from '../helpers/e2e';

/**
 * Pricing on a published listing whose buyer holds a credential, in Chromium against a real
 * `kbstudio serve`: the warning about fixed terms only for the terms, the server's refusal of new
 * terms under the field it names and gone once a field changes, no lamport echo beside a refused
 * price, and a decimal period or rate limit refused with the schema's words rather than rewritten.
 */

const studio = new E2eStudio('kbstudio-e2e-pricing-terms-');
/** Published, sold one-time for 1 SOL; `buyer1` holds a credential for it. */
let held: Listing;

const open = (hash: string) =>
  studio.openStudio(hash, {
    defaultTimeout: 20_000,
    initScript: `localStorage.setItem('kbstudio.workListing', ${JSON.stringify(JSON.stringify(held.id))});`,
  });

const priceField = (page: Page) => page.getByRole('textbox', { name: /^Price/ });
const limitField = (page: Page) => page.getByRole('textbox', { name: /Retrieval rate limit/ });
const warning = (page: Page) => page.getByText('This listing is published. While anyone holds access');

describe('Pricing of a published listing a buyer holds, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    held = await studio.createListing('Held notes');
    await studio.runCli(['listings', 'publish', held.id]);
    await studio.runCli(['wallet', 'create', '--name', 'buyer1']);
    await studio.runCli(['credentials', 'grant', '--listing', held.id, '--wallet', 'buyer1']);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('warns of fixed terms only when the terms change', async () => {
    const page = await open('#/pricing');
    await page.getByRole('form', { name: 'Pricing' }).waitFor();
    await expect.poll(() => limitField(page).inputValue()).toBe('60 / minute');

    // Only the rate limit: not a term, no warning (unsaved changes all the same).
    await limitField(page).fill('30');
    await page.getByText('Unsaved changes').waitFor();
    expect(await warning(page).count()).toBe(0);
    await limitField(page).fill('60');
    await page.getByRole('textbox', { name: 'Domain' }).fill('notes');
    await page.getByText('Unsaved changes').waitFor();
    expect(await warning(page).count()).toBe(0);
    await page.getByRole('textbox', { name: 'Domain' }).fill('');
    await priceField(page).fill('0.75');
    await warning(page).waitFor();
  });

  it('says the refusal of new terms under the price, and drops it once the price is edited', async () => {
    const page = await open('#/pricing');
    await page.getByRole('form', { name: 'Pricing' }).waitFor();
    await expect.poll(() => priceField(page).inputValue()).toBe('1');
    await priceField(page).fill('0.75');
    await page.getByRole('button', { name: 'Save pricing' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'credential held under its current terms' });
    await refusal.waitFor();
    const said = await refusal.innerText();
    expect(said).toMatch(new RegExp(`^Listing '${held.id}' has 1 credential held under its current terms`));
    expect(said).not.toContain('price:');
    // Said under the price, which it is about, and marked there; not in a general alert.
    expect(await priceField(page).getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await priceField(page).getAttribute('aria-describedby')) ?? '';
    expect(await refusal.getAttribute('id')).not.toBeNull();
    expect(describedBy.split(' ')).toContain(await refusal.getAttribute('id'));
    expect(await page.getByText('Not saved', { exact: true }).count()).toBe(0);
    expect(await page.getByText('price:', { exact: false }).count()).toBe(0);
    await shootAll(page, 'pricing-terms-refused');

    // Back to the saved price: nothing left to refuse, and nothing to save.
    await priceField(page).fill('1');
    await refusal.waitFor({ state: 'detached' });
    expect(await priceField(page).getAttribute('aria-invalid')).not.toBe('true');
    expect(await page.getByRole('button', { name: 'Save pricing' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Reset' }).isDisabled()).toBe(true);
    expect(await warning(page).count()).toBe(0);
  });

  it('echoes no lamports beside a refused price', async () => {
    const page = await open('#/pricing');
    const form = page.getByRole('form', { name: 'Pricing' });
    await form.waitFor();
    await form.getByText('Per query', { exact: true }).click();
    await priceField(page).fill('0');
    await page.getByText('A per-query listing needs a price above 0 SOL per query.').waitFor();
    expect(await form.innerText()).not.toContain('= 0 lamports');
    await page.getByText('1 SOL = 1,000,000,000 lamports').waitFor();
    await priceField(page).fill('0.002');
    await page.getByText('= 2,000,000 lamports').waitFor();
  });

  it('refuses a decimal period or rate limit in the schema’s words rather than rewriting it', async () => {
    const page = await open('#/pricing');
    const form = page.getByRole('form', { name: 'Pricing' });
    await form.waitFor();
    await form.getByText('Subscription', { exact: true }).click();
    const period = page.getByRole('textbox', { name: 'Period (days)' });
    await period.fill('1.5');
    await period.blur();
    expect(await period.inputValue()).toBe('1.5');
    await page.getByText('The period is a whole number of days.').waitFor();
    expect(await period.getAttribute('aria-invalid')).toBe('true');

    await limitField(page).fill('1.5');
    await limitField(page).blur();
    expect(await limitField(page).inputValue()).toBe('1.5 / minute');
    await page.getByText('The rate limit is a whole number of retrievals per minute.').waitFor();
    await shootAll(page, 'pricing-decimal-refused');
  });
});
