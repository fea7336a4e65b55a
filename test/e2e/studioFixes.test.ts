import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Listing } from '../../src/shared/listings';
import type { Wallet } from '../../src/shared/studio';
import { E2eStudio, FIXTURES, shoot } from '../helpers/e2e';

/**
 * What a UI audit of the studio found, each fixed and checked in Chromium against a real
 * `kbstudio serve`: a keypair's secret in view, a push target forgotten without asking, pages wider
 * than a 900 px window, the Test buyers table cut at 1280×800, an airdrop error outliving its network,
 * a stale "Acting as" status, the Edit dialog promising new terms it cannot apply, and `1e-9` typed
 * as a price.
 */

const studio = new E2eStudio('kbstudio-e2e-fixes-');
const SMALL = { width: 900, height: 700 };
const LARGE = { width: 1280, height: 800 };
/** Published, sold per query at 0.001 SOL, with one document. */
let published: Listing;
/** A draft sold one-time for 1 SOL. */
let draft: Listing;
/** A draft with four documents, for Inspect. */
let guide: Listing;
const GUIDE_DOCS = ['codeblock.md', 'simple-table.md', 'stanley-cups.csv', 'umlauts-utf8.md'];

const choose = (listing: Listing) =>
  `localStorage.setItem('kbstudio.workListing', ${JSON.stringify(JSON.stringify(listing.id))});`;

const open = (
  hash: string,
  { listing = published, viewport = LARGE }: { listing?: Listing; viewport?: typeof LARGE } = {},
) => studio.openStudio(hash, { viewport, defaultTimeout: 15_000, initScript: choose(listing) });

const studioCall = <T>(method: string, path: string, body?: unknown) =>
  studio.studioCall<T>(method, path, body);

/** A new test buyer of `listing` holding a credential in `state`. */
async function addBuyer(listing: Listing, state = 'active'): Promise<Wallet> {
  const wallet = await studioCall<Wallet>('POST', '/buyers', {});
  await studioCall('POST', '/buyers/credential', { listingId: listing.id, wallet: wallet.address, state });
  return wallet;
}

/** How far the page itself scrolls sideways: 0 when it fits the window. */
const pageOverflow = (page: Page) =>
  page.evaluate<number>('document.scrollingElement.scrollWidth - window.innerWidth');

/** What a dialog shows: its text, and the value of every field in it. */
const shownIn = (dialog: Locator) =>
  dialog.evaluate((el) => {
    const root = el as unknown as {
      innerText: string;
      querySelectorAll(selector: string): ArrayLike<{ value: string }>;
    };
    const values = Array.from(root.querySelectorAll('input, textarea'), (field) => field.value);
    return [root.innerText, ...values].join('\n');
  });

/** Whether `target` lies inside `box` (a rectangle on the page). */
async function inside(target: Locator, box: { x: number; y: number; width: number }): Promise<boolean> {
  const rect = (await target.boundingBox())!;
  return rect.x >= box.x - 1 && rect.x + rect.width <= box.x + box.width + 1;
}

describe('Fixes from the studio UI audit, in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    published = JSON.parse(
      await studio.runCli([
        'listings',
        'create',
        '--title',
        'Tide tables',
        '--access-model',
        'per_query',
        '--price',
        '0.001',
      ]),
    ) as Listing;
    await studio.runCli(['ingest', '--listing', published.id, join(FIXTURES, 'umlauts-utf8.md')]);
    await studio.runCli(['listings', 'publish', published.id]);
    draft = await studio.createListing('Harbour notes');
    guide = await studio.createListing('Field guide');
    await studio.runCli(['ingest', '--listing', guide.id, ...GUIDE_DOCS.map((f) => join(FIXTURES, f))]);
    await studio.runCli(['keys', 'create', '--label', 'Production reader']);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());

  afterAll(() => studio.close());

  it('keeps a keypair’s secret out of view: a chosen file shows the address it holds, a paste is masked', async () => {
    const holder = Keypair.generate();
    const stranger = Keypair.generate();
    // The public half of another keypair: the server refuses it.
    const mismatched = [...holder.secretKey.slice(0, 32), ...stranger.publicKey.toBytes()];
    const refusedFile = join(studio.dataDir, 'mismatched-id.json');
    const goodFile = join(studio.dataDir, 'id.json');
    writeFileSync(refusedFile, JSON.stringify(mismatched));
    writeFileSync(goodFile, JSON.stringify([...holder.secretKey]));
    const secretStart = [...holder.secretKey.slice(0, 8)].join(',');

    const page = await open('#/wallet');
    await page.getByRole('button', { name: 'Import id.json' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import a Solana CLI keypair' });
    await dialog.locator('input[type="file"]').setInputFiles(refusedFile);
    await dialog.getByRole('button', { name: 'Import wallet' }).click();
    await dialog.getByText('the public half does not match the secret half').waitFor();
    expect(await shownIn(dialog)).not.toContain(secretStart);
    await shoot(page, 'fixes-import-refused-1280x800');

    await dialog.locator('input[type="file"]').setInputFiles(goodFile);
    await expect
      .poll(() => dialog.getByTestId('keypair-address').textContent())
      .toContain(holder.publicKey.toBase58());
    expect(await shownIn(dialog)).not.toContain(secretStart);
    await dialog.getByRole('textbox', { name: 'Name' }).fill('cli wallet');
    await dialog.getByRole('button', { name: 'Import wallet' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('table', { name: 'Studio wallets' }).getByText('cli wallet').waitFor();

    // Pasted, the secret is masked as it is typed; the address it holds is shown.
    const pasted = Keypair.generate();
    await page.getByRole('button', { name: 'Import id.json' }).click();
    const field = dialog.getByTestId('keypair-text');
    await field.fill(JSON.stringify([...pasted.secretKey]));
    expect(await field.getAttribute('type')).toBe('password');
    await expect
      .poll(() => dialog.getByTestId('keypair-address').textContent())
      .toContain(pasted.publicKey.toBase58());
  });

  it('asks before forgetting a push target and its API key', async () => {
    const targets = () => studioCall<unknown[]>('GET', '/push/targets');
    const page = await open('#/publish');
    await page.getByRole('textbox', { name: 'Base URL' }).fill('http://127.0.0.1:9/v1');
    await page.locator('input[type="password"]').fill('kbs_abcdefghijklmnopqrstuvwxyz012345');
    await page.getByRole('button', { name: 'Save target' }).click();
    const key = page.getByLabel('Saved API key (masked)');
    await key.waitFor();

    const forget = page.getByRole('button', { name: /^Forget http/ });
    await forget.click();
    const dialog = page.getByRole('dialog', { name: 'Forget target' });
    await dialog.waitFor();
    expect(await targets()).toHaveLength(1);
    await shoot(page, 'fixes-forget-target-1280x800');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await key.isVisible()).toBe(true);
    expect(await targets()).toHaveLength(1);

    await forget.click();
    await dialog.getByRole('button', { name: 'Forget target' }).click();
    await key.waitFor({ state: 'detached' });
    expect(await targets()).toHaveLength(0);
  });

  it('at 900×700, fits Listings, API keys and Test buyers in the window: no sideways page scroll', async () => {
    await addBuyer(published);
    for (const [hash, table] of [
      ['#/listings', 'Listings'],
      ['#/keys', 'API keys'],
      ['#/buyers', 'Test buyers'],
    ] as const) {
      const page = await open(hash, { viewport: SMALL });
      await page.getByRole('table', { name: table }).getByRole('row').nth(1).waitFor();
      await page.waitForTimeout(200);
      expect(await pageOverflow(page), hash).toBeLessThanOrEqual(0);
      await studio.closePage();
    }
  });

  it('shows every Test buyers row action without sideways scrolling, at 1280×800 and at 900×700', async () => {
    await addBuyer(published, 'low_balance');
    await addBuyer(published, 'revoked');
    for (const viewport of [LARGE, SMALL]) {
      const page = await open('#/buyers', { viewport });
      const table = page.getByRole('table', { name: 'Test buyers' });
      const rows = table.getByRole('row').filter({ has: page.getByTestId('buyer-status') });
      await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(2);
      const wrap = table.locator('xpath=ancestor::*[contains(@class, "kb-table-wrap")][1]');
      const size = `${viewport.width}×${viewport.height}`;
      expect(await wrap.evaluate((el) => el.scrollWidth - el.clientWidth), size).toBeLessThanOrEqual(0);
      const box = (await wrap.boundingBox())!;
      for (const row of await rows.all()) {
        for (const action of [
          row.getByRole('link', { name: 'Query as this buyer' }),
          row.getByRole('button', { name: 'Set credential' }),
        ]) {
          expect(await inside(action, box), `${size}: ${await row.innerText()}`).toBe(true);
        }
      }
      expect(await pageOverflow(page), size).toBeLessThanOrEqual(0);
      await shoot(page, `fixes-buyers-${viewport.width}x${viewport.height}`);
      await studio.closePage();
    }

    // On a draft nobody can be queried as: the action says why instead of leading to a 404.
    const page = await open('#/buyers', { listing: draft });
    const row = page
      .getByRole('row')
      .filter({ has: page.getByTestId('buyer-status') })
      .first();
    await row.waitFor();
    const query = row.getByText('Query as this buyer');
    expect(await query.locator('xpath=ancestor-or-self::a[1]').getAttribute('aria-disabled')).toBe('true');
    expect(await query.locator('xpath=ancestor-or-self::a[1]').getAttribute('href')).toBeNull();
    await expect.poll(() => row.innerText()).toContain('404 listing_not_found');
  }, 60_000); // two window sizes, two tables each: 17 s in a slow CI run

  it('clears an airdrop’s error when the wallet moves to another network', async () => {
    const page = await open('#/wallet');
    await page.getByTestId('wallet-balance').waitFor();
    const badge = page.getByTestId('network-badge');
    await page.getByText('Local', { exact: true }).click();
    await page.getByRole('button', { name: 'Use this network' }).click();
    await expect.poll(() => badge.textContent()).toBe('Local validator');
    // No validator listens on this machine: the airdrop fails.
    await page.getByRole('button', { name: 'Request airdrop' }).click();
    const failed = page.getByRole('alert').filter({ hasText: 'No airdrop' });
    await failed.waitFor();

    await page.getByText('Embedded', { exact: true }).click();
    await page.getByRole('button', { name: 'Use this network' }).click();
    await expect.poll(() => badge.textContent()).toBe('Embedded ledger (no RPC)');
    await page.getByTestId('airdrop-reason').waitFor();
    expect(await failed.count()).toBe(0);
  });

  it('shows a custom RPC URL with its key masked, and keeps it whole in the field to edit', async () => {
    const key = 'Zx81kQ0pLm3Nb7Vc2Xa9';
    const rpcUrl = `http://127.0.0.1:9/v2/${key}?api-key=9f8e7d6c-5b4a`;
    await studioCall('PUT', '/settings/solana.rpcUrl', { value: rpcUrl });
    try {
      const page = await open('#/wallet');
      const badge = page.getByTestId('network-badge');
      // On this machine's loopback: the server names the network a local validator; the control says Custom.
      await expect.poll(() => badge.textContent()).toBe('Local validator');
      const shown = 'http://127.0.0.1:9/v2/••••?api-key=••••';
      await page.getByText(shown, { exact: true }).first().waitFor();
      // Nothing answers on port 9: the balance card says it failed, naming the RPC masked too.
      await expect.poll(() => page.locator('body').innerText()).toMatch(/unavailable/);
      const text = await page.locator('body').innerText();
      expect(text).not.toContain(key);
      expect(text).not.toContain('9f8e7d6c');
      expect(await page.getByRole('textbox', { name: 'RPC URL' }).inputValue()).toBe(rpcUrl);
    } finally {
      await studioCall('PUT', '/settings/solana.rpcUrl', { value: '' });
    }
  });

  it('shows the status of the buyer it acts as after each query: low balance once it is spent', async () => {
    const buyer = await addBuyer(published);
    // Two queries' worth.
    await studio.runCli([
      'credentials',
      'grant',
      '--listing',
      published.id,
      '--wallet',
      buyer.address,
      '--balance',
      '0.002',
    ]);
    const page = await open(
      `#/playground?listing=${encodeURIComponent(published.id)}&as=${encodeURIComponent(buyer.address)}`,
    );
    const actingAs = page.getByRole('combobox', { name: 'Acting as' });
    await expect.poll(() => actingAs.inputValue()).toBe(`${buyer.name} · active`);
    await page.getByRole('textbox', { name: 'Query' }).fill('können');
    const runOnce = async () => {
      const answered = page.waitForResponse((r) => r.url().endsWith('/v1/retrieve'));
      await page.getByRole('button', { name: 'Run' }).click();
      return (await answered).status();
    };
    expect(await runOnce()).toBe(200);
    expect(await runOnce()).toBe(200);
    await expect.poll(() => actingAs.inputValue()).toBe(`${buyer.name} · low balance`);
    expect(await runOnce()).toBe(403);
    await expect.poll(() => page.getByTestId('failure-code').textContent()).toBe('insufficient_balance');
    expect(await actingAs.inputValue()).toBe(`${buyer.name} · low balance`);
  });

  it('says a sold listing’s terms are fixed in Edit, and shows the server’s refusal on the fields', async () => {
    await addBuyer(published);
    const page = await open('#/listings');
    await page.getByRole('button', { name: 'Edit Tide tables' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit Tide tables' });
    await dialog.getByText(/While anyone holds access to it .* cannot change/).waitFor();
    expect(await dialog.innerText()).not.toContain('apply to purchases made from now on');

    const price = dialog.getByRole('textbox', { name: 'Price per query' });
    await price.fill('0.005');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    const refused = dialog.getByRole('alert').filter({ hasText: 'the terms are fixed' });
    await refused.waitFor();
    expect(await refused.innerText()).toContain('held under its current terms');
    expect(await price.getAttribute('aria-invalid')).toBe('true');
    await shoot(page, 'fixes-edit-terms-fixed-1280x800');
    const stored = JSON.parse(await studio.runCli(['listings', 'show', published.id])) as Listing;
    expect(stored.price).toBe(0.001);
  });

  it('takes 1e-9 typed as a price for 1 lamport, not -91', async () => {
    const page = await open('#/pricing', { listing: draft });
    const price = page.getByRole('textbox', { name: 'Price (SOL)' });
    await expect.poll(() => price.inputValue()).not.toBe('');
    await price.fill('');
    await price.pressSequentially('1e-9');
    expect(await price.inputValue()).toBe('1e-9');
    await page.getByText('= 1 lamport', { exact: true }).waitFor();
    await expect.poll(() => page.getByTestId('preview-price').textContent()).toBe('0.000000001 SOL');
    await page.getByRole('button', { name: 'Save pricing' }).click();
    await page.getByText('Saved. The preview is what the marketplace returns now.').waitFor();
    const stored = JSON.parse(await studio.runCli(['listings', 'show', draft.id])) as Listing;
    expect(stored.price).toBe(1e-9);
  });

  it('keeps what was typed into New listing when it is closed with Escape, until Start over', async () => {
    const page = await open('#/listings');
    await page.getByRole('button', { name: 'New listing' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New listing' });
    await dialog.getByRole('textbox', { name: 'Title' }).fill('Coastal charts');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'New listing' }).first().click();
    await expect
      .poll(() => dialog.getByRole('textbox', { name: 'Title' }).inputValue())
      .toBe('Coastal charts');
    await dialog.getByRole('button', { name: 'Start over' }).click();
    expect(await dialog.getByRole('textbox', { name: 'Title' }).inputValue()).toBe('');
  });

  it('selects the next document in Inspect after a deletion, not the first one', async () => {
    const page = await open('#/inspect', { listing: guide });
    const list = page.getByRole('navigation', { name: 'Documents' });
    const links = list.getByRole('button');
    await expect.poll(() => links.count()).toBe(GUIDE_DOCS.length);
    const names = (await links.allInnerTexts()).map((text) => text.split('\n')[0]!);
    await links.nth(2).click();
    await page.getByRole('button', { name: `Delete ${names[2]}` }).click();
    await page
      .getByRole('dialog', { name: 'Delete document' })
      .getByRole('button', { name: 'Delete document' })
      .click();
    await expect.poll(() => links.count()).toBe(GUIDE_DOCS.length - 1);
    const active = list.locator('button[data-active]');
    await expect.poll(() => active.innerText()).toContain(names[3]);
    await page.getByRole('button', { name: `Delete ${names[3]}` }).waitFor();
  });

  it('offers a skip link first in the Tab order, and names the close button of dialogs', async () => {
    const page = await open('#/listings');
    await page.getByRole('table', { name: 'Listings' }).waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(await skip.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('kb-main');
    expect(await page.evaluate<string>('location.hash')).toBe('#/listings');

    await page.getByRole('button', { name: 'Publish Harbour notes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish listing' });
    await dialog.getByRole('button', { name: 'Dismiss dialog' }).waitFor();
    // The first focus is Cancel, not the ×.
    await expect
      .poll(() => dialog.evaluate((el) => el.ownerDocument.activeElement?.textContent))
      .toBe('Cancel');
  });
});
