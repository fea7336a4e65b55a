import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { E2eStudio, FIXTURES, shoot } from '../helpers/e2e';
import { remoteKey } from '../helpers/pushRemote';
import { startStudio, type TestStudio } from '../helpers/studio';

/**
 * Publish end to end: the studio (`kbstudio serve` in Chromium) pushes a knowledge base to a second
 * real server playing the hosted service, and shows the remote's report.
 */

const studio = new E2eStudio('kbstudio-e2e-publish-');
let remote: TestStudio;
let key: string;
const FILES = ['codeblock.md', 'stanley-cups.csv', 'fake.docx', 'fake-html.html', 'umlauts-utf8.md'];

async function addTarget(page: Page, baseUrl: string, apiKey: string): Promise<void> {
  const addButton = page.getByRole('button', { name: 'Add target' });
  if (await addButton.isVisible()) await addButton.click();
  await page.getByRole('textbox', { name: 'Base URL' }).fill(baseUrl);
  await page.locator('input[type="password"]').fill(apiKey);
  await page.getByRole('button', { name: 'Save target' }).click();
  await page.getByLabel('Saved API key (masked)').waitFor();
}

describe('Publish in Chromium: push to a second server', () => {
  beforeAll(async () => {
    studio.prepare();
    remote = await startStudio({ rateLimits: { perKey: 10_000 } });
    key = remoteKey(remote);
    const listing = JSON.parse(
      await studio.runCli([
        'listings',
        'create',
        '--title',
        'Field guide',
        '--access-model',
        'one_time',
        '--price',
        '1',
      ]),
    ) as { id: string };
    await studio.runCli(['ingest', '--listing', listing.id, ...FILES.map((f) => join(FIXTURES, f))]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(async () => {
    await studio.close();
    await remote?.close();
  });

  it(
    'shows a wrong key as an authentication error, then pushes and shows the remote report',
    { timeout: 120_000 },
    async () => {
      const page = await studio.openStudio('#/publish', { defaultTimeout: 30_000 });
      await page.getByRole('heading', { name: 'Publish' }).waitFor();
      await expect
        .poll(() => page.getByRole('combobox', { name: 'Listing' }).inputValue())
        .toBe('Field guide');
      await page.getByText(/^5 documents · \d+ chunks · /).waitFor();
      await shoot(page, 'publish-empty-1280x800-light');

      await addTarget(page, remote.url, 'kbs_wrongwrongwrongwrongwrongwrong0');
      await expect.poll(() => page.getByLabel('Saved API key (masked)').textContent()).toBe('kbs_••••ong0');
      await page.getByRole('button', { name: 'Push', exact: true }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'Authentication failed' });
      await alert.waitFor();
      await expect.poll(() => alert.textContent()).toContain(`Authentication failed at ${remote.url}/v1`);
      await shoot(page, 'publish-auth-error-1280x800-light');

      // Saving the same address again replaces the key.
      await addTarget(page, `${remote.url}/v1`, key);
      await page
        .getByLabel('Saved API key (masked)')
        .getByText(`kbs_••••${key.slice(-4)}`)
        .waitFor();
      await page.getByRole('button', { name: 'Push', exact: true }).click();
      await page.getByText('Push finished').waitFor();
      const report = page.getByRole('table', { name: 'Push report' });
      for (const f of FILES)
        await report.getByRole('row', { name: new RegExp(f.replace('.', '\\.')) }).waitFor();
      expect(await report.getByText('accepted', { exact: true }).count()).toBe(FILES.length);
      await page.getByText(`${FILES.length} accepted`).waitFor();
      await shoot(page, 'publish-report-1280x800-light');

      const remoteListings = remote.services.db.prepare('SELECT id FROM listings').pluck().all() as string[];
      expect(remoteListings).toHaveLength(1);
      expect(
        remote.services.knowledgeBase
          .documents(remoteListings[0]!)
          .map((d) => d.source)
          .sort(),
      ).toEqual([...FILES].sort());
    },
  );

  it(
    'shows the latest push of the listing when the view opens: a push in three parts',
    { timeout: 60_000 },
    async () => {
      const page = await studio.openStudio('#/listings', { defaultTimeout: 30_000 });
      await page.getByRole('heading', { name: 'Listings' }).waitFor();
      // Started through the studio API with small parts, as a test-sized bulk threshold.
      const status = await page.evaluate(`(async () => {
      const token = document.querySelector('meta[name="kbstudio-token"]').content;
      const headers = { 'X-Studio-Token': token, 'Content-Type': 'application/json' };
      const listings = await (await fetch('/studio/listings', { headers })).json();
      const targets = await (await fetch('/studio/push/targets', { headers })).json();
      const body = JSON.stringify({ listingId: listings.data[0].id, targetId: targets.data[0].id, maxPartFiles: 2 });
      return (await fetch('/studio/push', { method: 'POST', headers, body })).status;
    })()`);
      expect(status).toBe(202);
      await page.goto(`${studio.baseUrl}/#/publish`);
      await page.getByText('Push finished').waitFor();
      for (const n of [1, 2, 3]) await page.getByRole('group', { name: `Part ${n} of 3` }).waitFor();
      await page.getByText(`${FILES.length} unchanged`).waitFor();
      await shoot(page, 'publish-parts-1280x800-light');
    },
  );

  it('pushes again at 1920×1080 in dark mode: every file unchanged', { timeout: 60_000 }, async () => {
    const page = await studio.openStudio('#/publish', {
      viewport: { width: 1920, height: 1080 },
      colorScheme: 'dark',
      defaultTimeout: 30_000,
    });
    await page.getByLabel('Saved API key (masked)').waitFor();
    await page.getByRole('button', { name: 'Push', exact: true }).click();
    await page.getByText('Push finished').waitFor();
    await page.getByText(`${FILES.length} unchanged`).waitFor();
    await shoot(page, 'publish-report-1920x1080-dark');
  });
});
