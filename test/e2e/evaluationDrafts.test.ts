import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, shoot, shootAll } from '../helpers/e2e';

/**
 * The Evaluation page across a visit elsewhere, and by keyboard, in Chromium against a real
 * `kbstudio serve`: a run still running is shown running when the page comes back (no second one can
 * start), with the questions, tab and name typed for the listing; a run is chosen with a real button,
 * and a hit's id, score and snippet show on focus as on hover.
 */

const studio = new E2eStudio('kbstudio-e2e-eval-drafts-');
let lease: Listing;
let other: Listing;

const open = (hash: string) => studio.openStudio(hash, { defaultTimeout: 20_000 });
const picker = (page: Page) => page.getByRole('combobox', { name: 'Listing' });

async function chooseListing(page: Page, title: string): Promise<void> {
  await picker(page).click();
  await page.getByRole('option', { name: title }).click();
  await expect.poll(() => picker(page).inputValue()).toBe(title);
}

async function goTo(page: Page, section: 'Inspect' | 'Evaluation'): Promise<void> {
  await page.getByRole('link', { name: section, exact: true }).click();
  await page.getByRole('heading', { name: section }).waitFor();
}

const isRunPost = (request: Request) =>
  request.method() === 'POST' && /\/studio\/listings\/[^/]+\/evaluations$/.test(request.url());

describe('the Evaluation page across navigation and by keyboard, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    other = await studio.createListing('Other notes');
    lease = await studio.createListing('Lease notes');
    const docs = join(studio.dataDir, 'docs');
    mkdirSync(docs);
    writeFileSync(join(docs, 'lease.md'), '# Lease\n\nThe notice period for tenants is three months.\n');
    writeFileSync(join(docs, 'rent.md'), '# Rent\n\nRent is paid on the first day of each month.\n');
    await studio.runCli(['ingest', '--listing', lease.id, join(docs, 'lease.md'), join(docs, 'rent.md')]);
    await studio.runCli(['ingest', '--listing', other.id, join(docs, 'rent.md')]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('shows a run still running after a visit elsewhere, with what was typed, and starts no second one', async () => {
    const page = await open('#/evaluation');
    await chooseListing(page, 'Lease notes');
    // The run's request is held until released: the page is left and found again meanwhile.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const posts: Request[] = [];
    await page.route('**/studio/listings/*/evaluations', async (route) => {
      if (!isRunPost(route.request())) return route.continue();
      posts.push(route.request());
      await released;
      await route.continue().catch(() => undefined);
    });

    const questions = 'notice period for tenants | three months\nwhen is rent paid | first day';
    await page.getByRole('tab', { name: 'Write questions' }).click();
    await page.getByRole('textbox', { name: 'Questions' }).fill(questions);
    await page.getByRole('textbox', { name: 'Run name' }).fill('held run');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    const running = page.getByRole('status').filter({ hasText: 'Running every question' });
    await running.waitFor();
    await expect.poll(() => posts.length).toBe(1);

    await goTo(page, 'Inspect');
    await goTo(page, 'Evaluation');
    await running.waitFor();
    expect(await page.getByRole('tab', { name: 'Write questions' }).getAttribute('aria-selected')).toBe(
      'true',
    );
    expect(await page.getByRole('textbox', { name: 'Questions' }).inputValue()).toBe(questions);
    expect(await page.getByRole('textbox', { name: 'Run name' }).inputValue()).toBe('held run');
    const runButton = page.getByRole('button', { name: 'Run evaluation' });
    expect(await runButton.isDisabled()).toBe(true);
    await shootAll(page, 'evaluation-run-pending-after-return');

    // Another listing has its own draft and no run waiting; the first one's is found again.
    await chooseListing(page, 'Other notes');
    expect(await running.count()).toBe(0);
    await page.getByRole('textbox', { name: 'Run name' }).fill('other run');
    await chooseListing(page, 'Lease notes');
    await running.waitFor();
    expect(await page.getByRole('textbox', { name: 'Run name' }).inputValue()).toBe('held run');

    release();
    const runs = page.getByRole('table', { name: 'Evaluation runs' });
    await runs.getByText('held run').waitFor({ timeout: 60_000 });
    await running.waitFor({ state: 'detached' });
    expect(await runButton.isEnabled()).toBe(true);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.postDataJSON()).toMatchObject({ mode: 'hybrid', name: 'held run' });
  }, 90_000);

  it('chooses a run with the keyboard, and shows a hit’s id, score and snippet on focus', async () => {
    for (const name of ['first run', 'second run']) {
      await studio.studioCall('POST', `/listings/${lease.id}/evaluations`, {
        mode: 'hybrid',
        name,
        questions: [{ question: 'notice period for tenants', expectedText: 'three months' }],
      });
    }
    const page = await open('#/evaluation');
    await chooseListing(page, 'Lease notes');
    const runs = page.getByRole('table', { name: 'Evaluation runs' });
    const first = runs.getByRole('button', { name: 'first run', exact: true });
    const second = runs.getByRole('button', { name: 'second run', exact: true });
    // The newest is shown first.
    await expect.poll(() => second.getAttribute('aria-pressed')).toBe('true');
    expect(await first.getAttribute('aria-pressed')).toBe('false');

    // By keyboard: from the run's Compare box, Tab reaches its name, and Enter chooses it.
    await runs.getByRole('checkbox', { name: 'Compare first run' }).focus();
    await page.keyboard.press('Tab');
    expect(await first.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => first.getAttribute('aria-pressed')).toBe('true');
    expect(await second.getAttribute('aria-pressed')).toBe('false');
    await page.locator('[aria-label="Run first run"]').waitFor();

    const results = page.getByRole('table', { name: 'Per-question results' });
    const hit1 = results.getByRole('button', { name: /^Hit 1, (relevant|not relevant): / });
    const name = (await hit1.getAttribute('aria-label')) ?? '';
    expect(name).toMatch(/score \d\.\d{3}$/);
    await hit1.focus();
    // Keyboard focus on the next hit, as a user tabbing along the row gives it.
    await page.keyboard.press('Tab');
    const hit2 = results.getByRole('button', { name: /^Hit 2, / });
    expect(await hit2.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    // The tooltip shows, and describes the hit while it does.
    await expect.poll(() => hit2.getAttribute('aria-describedby')).toBeTruthy();
    const tooltip = page.locator(`[id="${await hit2.getAttribute('aria-describedby')}"]`);
    expect(await tooltip.getAttribute('role')).toBe('tooltip');
    await tooltip.waitFor();
    const shown = await tooltip.innerText();
    expect(shown).toMatch(/ · \d\.\d{3}/);
    expect(shown).toMatch(/notice period|Rent is paid/);
    // As the user sees it, in both themes: the hit focused from the one before, its tooltip open.
    for (const theme of ['light', 'dark'] as const) {
      const toggle = page.getByRole('button', { name: `Switch to ${theme} theme` });
      if (await toggle.count()) await toggle.dispatchEvent('click');
      await hit1.focus();
      await page.keyboard.press('Tab');
      await hit2.scrollIntoViewIfNeeded();
      await page.locator('[role="tooltip"]').last().waitFor();
      await shoot(page, `evaluation-hit-tooltip-on-focus-1280x800-${theme}`);
    }
  }, 90_000);
});
