import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import { E2eStudio, FIXTURES, shoot } from '../helpers/e2e';

/**
 * Defects a UI audit found, in Chromium against a real `kbstudio serve`: a base URL saved over a
 * stored key, the shown-once API key dialog, listings of one title in the pickers, signing an empty
 * listing on the Wallet page, deleting an evaluation run, and the Playground on an empty listing.
 */

const studio = new E2eStudio('kbstudio-e2e-audit-');
const TITLE = 'Twin notes';
/** Two listings of one title: `filled` has a document, `empty` none. */
let filled: Listing;
let empty: Listing;

const choose = (listing: Listing) =>
  `localStorage.setItem('kbstudio.workListing', ${JSON.stringify(JSON.stringify(listing.id))});`;
const open = (hash: string, initScript?: string) =>
  studio.openStudio(hash, { defaultTimeout: 20_000, initScript });
const shortId = (listing: Listing) => listing.id.slice(0, 8);

/** Runs `script` with bash, `KB_API_KEY` set, and resolves with its stdout. */
async function bash(script: string, apiKey: string): Promise<string> {
  const env = { PATH: process.env.PATH, KB_API_KEY: apiKey };
  const { stdout } = await promisify(execFile)('bash', ['--noprofile', '--norc', '-c', script], { env });
  return stdout;
}

describe('Studio safeguards in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    filled = await studio.createListing(TITLE);
    empty = await studio.createListing(TITLE);
    await studio.runCli(['ingest', '--listing', filled.id, join(FIXTURES, 'umlauts-utf8.md')]);
    await studio.runCli(['settings', 'set', 'openai.apiKey', 'sk-audit-0123456789abcdef']);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('warns that a new base URL clears the stored key, then says which key it cleared', async () => {
    const page = await open('#/settings');
    const warning = page.getByText('Saving a new base URL clears the stored OpenAI API key');
    await warning.waitFor();
    // No Cohere key is stored: nothing to clear there.
    expect(await page.getByText('clears the stored Cohere API key').count()).toBe(0);

    const baseUrl = page.getByRole('textbox', { name: 'OpenAI base URL', exact: true });
    await shoot(page, 'settings-base-url-warning-1280x800');
    await baseUrl.fill('http://127.0.0.1:9/v1');
    await baseUrl.press('Enter');
    // Named for people, as the field is ("OpenAI API key"), not by the key the CLI knows.
    const notice = page.getByRole('status').filter({ hasText: 'Cleared the OpenAI API key' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('set it again for the new base URL');
    expect(await notice.textContent()).not.toContain('openai.apiKey');
    await shoot(page, 'settings-key-cleared-1280x800');
    // The key is gone, so saving the URL again would clear nothing.
    await warning.waitFor({ state: 'detached' });
    const shown = JSON.parse(await studio.runCli(['settings', 'show'])) as
      { key: string; source: string }[] | { data: { key: string; source: string }[] };
    const settings = Array.isArray(shown) ? shown : shown.data;
    expect(settings.find((s) => s.key === 'openai.apiKey')?.source).toBe('unset');
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await notice.waitFor({ state: 'detached' });
  });

  it('keeps the new API key shown through Escape and a click beside the dialog', async () => {
    const page = await open('#/keys');
    await page.getByRole('button', { name: 'Create key' }).first().click();
    const form = page.getByRole('dialog', { name: 'Create API key' });
    await form.getByRole('textbox', { name: 'Label' }).fill('audit key');
    await form.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Copy your new API key' });
    await shown.getByTestId('new-api-key').waitFor();

    await page.keyboard.press('Escape');
    await page.mouse.click(8, 400);
    await page.waitForTimeout(400);
    expect(await shown.isVisible()).toBe(true);
    await shown.getByRole('button', { name: 'I have copied the key' }).click();
    await shown.waitFor({ state: 'detached' });
  });

  it('tells listings of one title apart in the listing picker', async () => {
    const page = await open('#/inspect', choose(empty));
    const picker = page.getByRole('combobox', { name: 'Listing' });
    await expect.poll(() => picker.inputValue()).toBe(`${TITLE} · ${shortId(empty)}`);
    await picker.click();
    const option = (listing: Listing) => page.getByRole('option').filter({ hasText: shortId(listing) });
    await expect.poll(() => option(filled).textContent()).toBe(`${TITLE} · ${shortId(filled)}1 document`);
    expect(await option(empty).textContent()).toBe(`${TITLE} · ${shortId(empty)}0 documents`);
    await shoot(page, 'listing-picker-same-title-1280x800');
    await option(filled).click();
    await expect.poll(() => picker.inputValue()).toBe(`${TITLE} · ${shortId(filled)}`);
  });

  it('warns before the Wallet page signs a listing whose knowledge base is empty', async () => {
    const page = await open('#/wallet', choose(empty));
    await page.getByRole('heading', { name: 'Wallet', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Review and sign…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm: sign create_listing' });
    await dialog.getByRole('table', { name: 'Accounts' }).waitFor();
    await dialog.getByText('Its knowledge base is still empty').waitFor();
    await shoot(page, 'wallet-sign-empty-listing-1280x800');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });

    const other = await open('#/wallet', choose(filled));
    await other.getByRole('button', { name: 'Review and sign…' }).click();
    const signing = other.getByRole('dialog', { name: 'Confirm: sign create_listing' });
    await signing.getByRole('table', { name: 'Accounts' }).waitFor();
    expect(await signing.getByText('Its knowledge base is still empty').count()).toBe(0);
  });

  it('asks before deleting an evaluation run, and shows a failure', async () => {
    const page = await open('#/evaluation');
    await page.getByRole('combobox', { name: 'Listing' }).click();
    await page
      .getByRole('option')
      .filter({ hasText: shortId(filled) })
      .click();
    await page.getByRole('tab', { name: 'Write questions' }).click();
    await page.getByRole('textbox', { name: 'Questions' }).fill('können | können');
    await page.getByRole('textbox', { name: 'Run name' }).fill('audit run');
    await page.getByRole('button', { name: 'Run evaluation' }).click();
    const row = page.getByRole('table', { name: 'Evaluation runs' }).getByRole('row').filter({
      hasText: 'audit run',
    });
    await row.waitFor({ timeout: 60_000 });

    await page.getByRole('button', { name: 'Delete run audit run' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete evaluation run' });
    await confirm.getByText('This cannot be undone.', { exact: false }).waitFor();
    await shoot(page, 'evaluation-delete-run-1280x800');
    await confirm.getByRole('button', { name: 'Keep it' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await row.count()).toBe(1);

    await page.route('**/studio/listings/*/evaluations/*', (route) =>
      route.request().method() === 'DELETE'
        ? route.fulfill({
            status: 500,
            contentType: 'application/json',
            body: JSON.stringify({ error: { code: 'internal_error', message: 'The disk is full.' } }),
          })
        : route.continue(),
    );
    await page.getByRole('button', { name: 'Delete run audit run' }).click();
    await confirm.getByRole('button', { name: 'Delete run' }).click();
    const failure = confirm.getByRole('alert');
    await failure.waitFor();
    expect(await failure.textContent()).toContain('The disk is full.');
    expect(await row.count()).toBe(1);

    await page.unroute('**/studio/listings/*/evaluations/*');
    await confirm.getByRole('button', { name: 'Delete run' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.waitFor({ state: 'detached' });
  });

  it('shows a curl command that a shell runs with the key of $KB_API_KEY', async () => {
    const created = JSON.parse(await studio.runCli(['keys', 'create', '--label', 'curl'])) as { key: string };
    const page = await open(`#/playground?listing=${filled.id}`);
    const query = `können's "words" $HOME`;
    await page.getByRole('textbox', { name: 'Query' }).fill(query);
    await page.getByRole('button', { name: 'Run' }).click();
    const code = page.locator('pre').filter({ hasText: 'curl -X POST' });
    await code.waitFor();
    const curl = (await code.textContent())!;

    // What curl is given: a function in its place prints each argument.
    const args = (await bash(`curl() { printf '%s\\0' "$@"; }\n${curl}`, created.key)).split('\0');
    expect(args[4]).toBe(`Authorization: Bearer ${created.key}`);
    expect(JSON.parse(args[8]!)).toMatchObject({ listingId: filled.id, query });

    // And the real thing, against this studio.
    const status = await bash(`${curl} -s -o /dev/null -w '%{http_code}'`, created.key);
    expect(status).toBe('200');
  });

  it('says the knowledge base is empty when the Playground queries a listing without chunks', async () => {
    const page = await open(`#/playground?listing=${empty.id}`);
    await page.getByText('This listing has no chunks yet').waitFor();
    await page.getByRole('textbox', { name: 'Query' }).fill('können');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByText('The knowledge base of this listing is empty: ingest documents first').waitFor();
    expect(await page.getByText('No chunk matched').count()).toBe(0);
  });
});
