import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, shootAll } from '../helpers/e2e';

/**
 * The Playground across a visit elsewhere, in Chromium against a real `kbstudio serve`: the form (query,
 * Top k, Min score as typed, mode, filters, the stream switch) and the last results are found again;
 * and the request code and the running badge say how the shown run was asked, not how the switch
 * stands now.
 */

const studio = new E2eStudio('kbstudio-e2e-pg-drafts-');
let hockey: Listing;

const open = () => studio.openStudio(`#/playground?listing=${hockey.id}`, { defaultTimeout: 20_000 });
const code = (page: Page) => page.locator('pre').first();
const streamSwitch = (page: Page) => page.getByRole('switch', { name: 'Stream chunks as they arrive' });
const isRetrieve = (request: Request) => /\/v1\/retrieve(\/stream)?$/.test(request.url());

async function goTo(page: Page, section: 'Inspect' | 'Playground'): Promise<void> {
  await page.getByRole('link', { name: section, exact: true }).click();
  await page.getByRole('heading', { name: section }).waitFor();
}

describe('the Playground across navigation, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    hockey = await studio.createListing('Hockey');
    await studio.runCli(['ingest', '--listing', hockey.id, join(FIXTURES, 'stanley-cups.csv')]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('keeps the form, Min score as typed, and the last results across a visit to another section', async () => {
    const page = await open();
    const sent: Request[] = [];
    page.on('request', (request) => {
      if (isRetrieve(request)) sent.push(request);
    });
    const query = page.getByRole('textbox', { name: 'Query' });
    const topK = page.getByRole('textbox', { name: 'Top k' });
    const minScore = page.getByRole('textbox', { name: 'Min score' });
    await query.fill('Maple Leafs Stanley Cups');
    await topK.fill('7');
    await minScore.fill('0.01');
    await page.getByRole('radiogroup').getByText('Lexical', { exact: true }).click();
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('textbox', { name: 'Filter 1 key' }).fill('source');
    await page.getByRole('textbox', { name: 'Filter 1 value' }).fill('nothing.md');
    await page.getByRole('combobox', { name: 'Filter 1 operator' }).click();
    await page.getByRole('option', { name: '≠', exact: true }).click();
    await streamSwitch(page).check();
    await expect.poll(() => page.getByRole('button', { name: 'Run' }).isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByLabel('Latency').waitFor();
    const chunks = await page.getByRole('list', { name: 'Ranked chunks' }).getByRole('listitem').count();
    expect(chunks).toBeGreaterThan(0);
    const request = await code(page).innerText();
    expect(request).toContain('/retrieve/stream');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.postDataJSON()).toMatchObject({
      topK: 7,
      minScore: 0.01,
      mode: 'lexical',
      filters: { source: { $ne: 'nothing.md' } },
    });

    await goTo(page, 'Inspect');
    await goTo(page, 'Playground');
    await page.getByLabel('Latency').waitFor();
    expect(await query.inputValue()).toBe('Maple Leafs Stanley Cups');
    expect(await topK.inputValue()).toBe('7');
    expect(await minScore.inputValue()).toBe('0.01');
    expect(await page.getByRole('radio', { name: 'Lexical' }).isChecked()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Filter 1 key' }).inputValue()).toBe('source');
    expect(await page.getByRole('textbox', { name: 'Filter 1 value' }).inputValue()).toBe('nothing.md');
    expect(await page.getByRole('combobox', { name: 'Filter 1 operator' }).inputValue()).toBe('≠');
    expect(await streamSwitch(page).isChecked()).toBe(true);
    expect(await page.getByRole('list', { name: 'Ranked chunks' }).getByRole('listitem').count()).toBe(
      chunks,
    );
    expect(await code(page).innerText()).toBe(request);
    expect(sent).toHaveLength(1);
    await shootAll(page, 'playground-kept-after-return');
  });

  it('runs with a Min score of three decimals as typed, not cut to two', async () => {
    const page = await open();
    const sent: Request[] = [];
    page.on('request', (request) => {
      if (isRetrieve(request)) sent.push(request);
    });
    await page.getByRole('textbox', { name: 'Query' }).fill('Maple Leafs');
    const minScore = page.getByRole('textbox', { name: 'Min score' });
    await minScore.fill('0.015');
    await minScore.blur();
    expect(await minScore.inputValue()).toBe('0.015');
    const run = page.getByRole('button', { name: 'Run' });
    await expect.poll(() => run.isEnabled()).toBe(true);
    await run.click();
    await page.getByLabel('Latency').waitFor();
    expect(sent[0]!.postDataJSON()).toMatchObject({ minScore: 0.015 });
    // The step still adds its 0.05 to the number shown, without float noise.
    await minScore.fill('0.1');
    await minScore.press('ArrowUp');
    expect(await minScore.inputValue()).toBe('0.15');
  });

  it('shows the request of the run shown, whatever the Stream switch says now', async () => {
    const page = await open();
    await page.getByRole('textbox', { name: 'Query' }).fill('Maple Leafs');
    if (await streamSwitch(page).isChecked()) await streamSwitch(page).uncheck();
    const run = page.getByRole('button', { name: 'Run' });
    await expect.poll(() => run.isEnabled()).toBe(true);
    await run.click();
    await page.getByLabel('Latency').waitFor();
    await expect.poll(() => code(page).innerText()).toContain("/v1/retrieve'");

    await streamSwitch(page).check();
    await page.waitForTimeout(200);
    expect(await code(page).innerText()).toContain("/v1/retrieve'");
    expect(await code(page).innerText()).not.toContain('/retrieve/stream');
    await page.getByRole('tab', { name: 'TypeScript client' }).click();
    await expect.poll(() => code(page).innerText()).toContain('client.retrieve(');
    expect(await code(page).innerText()).not.toContain('retrieveStream');
  });

  it('says a query asked without streaming is searching, while the Stream switch is turned on', async () => {
    const page = await open();
    await page.getByRole('textbox', { name: 'Query' }).fill('Maple Leafs');
    const run = page.getByRole('button', { name: 'Run' });
    await expect.poll(() => run.isEnabled()).toBe(true);
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/v1/retrieve', async (route) => {
      await released;
      await route.continue().catch(() => undefined);
    });
    await run.click();
    const searching = page.getByText('Searching…', { exact: true });
    await searching.waitFor();
    await streamSwitch(page).check();
    await page.waitForTimeout(200);
    expect(await searching.isVisible()).toBe(true);
    expect(await page.getByText(/^Streaming…/).count()).toBe(0);
    release();
    await page.getByLabel('Latency').waitFor();
  });
});
