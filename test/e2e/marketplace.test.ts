import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { E2eStudio, FIXTURES as fixtures, SCREENSHOTS as screenshots } from '../helpers/e2e';

/**
 * The Pricing, Wallet, API keys and Test buyers views in Chromium against a real `kbstudio serve`:
 * set a price, sign create_listing with a studio wallet through the confirmation, create an API key
 * (shown once, copied), grant a test buyer an expired subscription and see the 403 in the playground.
 * Screenshots of each view at 1280×800 and 1920×1080, light and dark.
 */

const studio = new E2eStudio('kbstudio-e2e-market-');
let listingId = '';

/** Both sizes; full page for views, the viewport for dialogs (which a full-page capture misplaces). */
async function shootBoth(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(screenshots, `${name}-1280x800.png`), fullPage });
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(screenshots, `${name}-1920x1080.png`), fullPage });
  await page.setViewportSize({ width: 1280, height: 800 });
}

const open = (hash: string, colorScheme: 'light' | 'dark' = 'light') =>
  studio.openStudio(hash, { colorScheme, defaultTimeout: 20_000 });
const TEST_TIMEOUT = 120_000;

/**
 * Registers a Wallet Standard wallet in the page, as a browser extension would: it signs legacy Solana
 * transactions with WebCrypto Ed25519 using the given keypair (seed + public key). Page code, so a string.
 */
const fakeBrowserWallet = (args: {
  address: string;
  seed: number[];
  publicKey: number[];
}): string => `(() => {
  const args = ${JSON.stringify(args)};
  const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  const account = {
    address: args.address,
    publicKey: new Uint8Array(args.publicKey),
    chains: ['solana:devnet'],
    features: ['solana:signTransaction'],
  };
  let connected = false;
  const wallet = {
    version: '1.0.0',
    name: 'Test Wallet',
    icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=',
    chains: ['solana:devnet'],
    get accounts() { return connected ? [account] : []; },
    features: {
      'standard:connect': { version: '1.0.0', connect: async () => { connected = true; return { accounts: [account] }; } },
      'standard:events': { version: '1.0.0', on: () => () => {} },
      'solana:signTransaction': {
        version: '1.0.0',
        supportedTransactionVersions: ['legacy'],
        signTransaction: async (...inputs) => {
          const key = await crypto.subtle.importKey(
            'jwk',
            { kty: 'OKP', crv: 'Ed25519', d: b64url(args.seed), x: b64url(args.publicKey) },
            { name: 'Ed25519' },
            false,
            ['sign'],
          );
          return Promise.all(inputs.map(async ({ transaction }) => {
            // Legacy wire format with one signer: [1][64-byte signature][message].
            const bytes = new Uint8Array(transaction);
            const signature = await crypto.subtle.sign({ name: 'Ed25519' }, key, bytes.slice(65));
            bytes.set(new Uint8Array(signature), 1);
            return { signedTransaction: bytes };
          }));
        },
      },
    },
  };
  const callback = ({ register }) => register(wallet);
  window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: callback }));
  window.addEventListener('wallet-standard:app-ready', (event) => callback(event.detail));
})();`;

describe('pricing, wallet, API keys and test buyers in Chromium against kbstudio serve', () => {
  beforeAll(async () => {
    studio.prepare();
    const created = JSON.parse(
      await studio.runCli([
        'listings',
        'create',
        '--title',
        'Stanley Cup history',
        '--description',
        'Every Stanley Cup win, by team and season, with the memos behind them.',
        '--access-model',
        'subscription',
        '--price',
        '1',
        '--subscription-days',
        '30',
      ]),
    ) as { id: string };
    listingId = created.id;
    await studio.runCli(['ingest', '--listing', listingId, join(fixtures, 'stanley-cups.csv')]);
    await studio.start();
  }, 120_000);

  afterEach(() => studio.closePage());
  afterAll(() => studio.close());

  it(
    'sets a price with the lamports shown live, refuses bad values per field, and previews the listing',
    async () => {
      const page = await open('#/pricing');
      const form = page.getByRole('form', { name: 'Pricing' });
      await form.waitFor();
      const price = page.getByRole('textbox', { name: /Price per period/ });
      await price.fill('');
      await page.getByText('Enter a price in SOL.').waitFor();
      await price.fill('0.25');
      await page.getByText('= 250,000,000 lamports').waitFor();
      await page.getByRole('textbox', { name: /Retrieval rate limit/ }).fill('0');
      await page.getByText('Allow at least 1 retrieval per minute.').waitFor();
      expect(await page.getByRole('button', { name: 'Save pricing' }).isDisabled()).toBe(false);
      await page.getByRole('textbox', { name: /Retrieval rate limit/ }).fill('30');
      await page.getByRole('textbox', { name: 'Domain' }).fill('sports');
      const tags = page.getByRole('combobox', { name: 'Tags' });
      await tags.fill('hockey');
      await tags.press('Enter');
      await tags.fill('NHL');
      await tags.press('Enter');
      await page.getByText('Unsaved changes').waitFor();
      await expect.poll(() => page.getByTestId('preview-price').textContent()).toBe('0.25 SOL / 30 days');
      await shootBoth(page, 'pricing-editing');
      await page.getByRole('button', { name: 'Save pricing' }).click();
      await page.getByText('Saved. The preview is what the marketplace returns now.').waitFor();
      await page.getByText('Draft: only you can see it').waitFor();
      const shown = JSON.parse(await studio.runCli(['listings', 'show', listingId])) as Record<
        string,
        unknown
      >;
      expect(shown).toMatchObject({
        price: 0.25,
        retrievalRateLimit: 30,
        domain: 'sports',
        tags: ['hockey', 'nhl'],
      });
      await page.getByRole('tab', { name: 'GET /v1/listings/:id' }).click();
      const body = JSON.parse((await page.getByTestId('preview-json').textContent())!) as {
        data: Record<string, unknown>;
      };
      expect(body.data).toMatchObject({
        id: listingId,
        price: 0.25,
        accessModel: 'subscription',
        subscriptionDays: 30,
      });
      await shootBoth(page, 'pricing-json');

      const dark = await open('#/pricing', 'dark');
      await dark.getByRole('form', { name: 'Pricing' }).waitFor();
      await dark.getByTestId('preview-price').waitFor();
      await dark.screenshot({ path: join(screenshots, 'pricing-dark-1280x800.png'), fullPage: true });
    },
    TEST_TIMEOUT,
  );

  it(
    'signs create_listing with the studio wallet through the confirmation, then shows the PDA and signature',
    async () => {
      const page = await open('#/wallet');
      await page.getByRole('heading', { name: 'Wallet', exact: true }).waitFor();
      await page.getByTestId('airdrop-reason').waitFor();
      await expect
        .poll(() => page.getByTestId('airdrop-reason').textContent())
        .toContain('moves no real SOL');
      await page.getByTestId('no-browser-wallet').waitFor();
      await page.getByTestId('wallet-balance').waitFor();
      await shootBoth(page, 'wallet');

      await page.getByRole('button', { name: 'Review and sign…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm: sign create_listing' });
      await dialog.getByRole('table', { name: 'Accounts' }).waitFor();
      await expect
        .poll(() => dialog.getByTestId('sign-price').textContent())
        .toBe('0.25 SOL = 250,000,000 lamports per period');
      const signedText = await dialog.getByRole('table', { name: 'What is signed' }).textContent();
      expect(signedText).toContain('create_listing');
      expect(signedText).toContain(listingId);
      expect(signedText).toContain('30 days');
      await shootBoth(page, 'wallet-sign-confirm', false);
      await dialog.getByRole('button', { name: 'Sign and publish' }).click();
      const done = page.getByRole('dialog', { name: 'Listing signed' });
      await done.getByTestId('signed-pda').waitFor();
      const pda = (await done.getByTestId('signed-pda').textContent())!.trim();
      const signature = (await done.getByTestId('signed-signature').textContent())!.trim();
      expect(signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/);
      await shootBoth(page, 'wallet-signed', false);
      const shown = JSON.parse(await studio.runCli(['listings', 'show', listingId])) as Record<
        string,
        unknown
      >;
      expect(shown).toMatchObject({ status: 'published', pdaAddress: pda });
      await done.getByRole('button', { name: 'Done' }).click();

      // A malformed keypair file is refused with a message naming what is wrong.
      await page.getByRole('button', { name: 'Import id.json' }).click();
      const importDialog = page.getByRole('dialog', { name: 'Import a Solana CLI keypair' });
      await importDialog.getByTestId('keypair-text').fill('[1, 2, 3]');
      await importDialog.getByRole('button', { name: 'Import wallet' }).click();
      await importDialog.getByText('a JSON array of 64 numbers 0..255; it has 3').waitFor();
      await page.screenshot({ path: join(screenshots, 'wallet-import-error-1280x800.png') });

      const dark = await open('#/wallet', 'dark');
      await dark.getByTestId('wallet-balance').waitFor();
      await dark.screenshot({ path: join(screenshots, 'wallet-dark-1280x800.png'), fullPage: true });
    },
    TEST_TIMEOUT,
  );

  it(
    'creates an API key shown once with a copy button, listed afterwards by its prefix only',
    async () => {
      const page = await open('#/keys');
      await studio.context!.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: 'Create key' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Create API key' });
      await dialog.getByRole('textbox', { name: 'Label' }).fill('Research assistant');
      await dialog.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.getByTestId('new-api-key').textContent())!.trim();
      expect(key).toMatch(/^kbs_[A-Za-z0-9]{32}$/);
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
      await shootBoth(page, 'keys-created', false);
      await page.getByRole('button', { name: 'I have copied the key' }).click();
      const row = page.getByRole('row', { name: /Research assistant/ });
      await row.waitFor();
      await expect.poll(() => row.textContent()).toContain(key.slice(0, 8));
      expect(await page.content()).not.toContain(key);
      await shootBoth(page, 'keys-list');
    },
    TEST_TIMEOUT,
  );

  it(
    'grants a test buyer an expired subscription and shows the 403 in the playground as that buyer',
    async () => {
      const page = await open('#/buyers');
      await page.getByRole('heading', { name: 'Test buyers' }).waitFor();
      await page.getByRole('combobox', { name: 'Credential' }).click();
      await page.getByRole('option', { name: 'Expired subscription' }).click();
      await page.getByRole('button', { name: 'Add test buyer' }).click();
      const row = page.getByRole('row', { name: /test-buyer-1/ });
      await row.waitFor();
      await row.getByText('Expired', { exact: true }).waitFor();
      await expect.poll(() => row.textContent()).toContain('403 credential_expired');
      await shootBoth(page, 'buyers');

      await row.getByRole('link', { name: 'Query as this buyer' }).click();
      await page.getByRole('heading', { name: 'Playground' }).waitFor();
      await expect
        .poll(() => page.getByRole('combobox', { name: 'Acting as' }).inputValue())
        .toContain('test-buyer-1');
      await page.getByRole('textbox', { name: 'Query' }).fill('Maple Leafs Stanley Cups');
      await page.getByRole('button', { name: 'Run' }).click();
      const failure = page.getByTestId('query-failure');
      await failure.waitFor();
      await expect.poll(() => page.getByTestId('failure-status').textContent()).toBe('403');
      await expect.poll(() => page.getByTestId('failure-code').textContent()).toBe('credential_expired');
      await expect.poll(() => failure.textContent()).toContain('Renew it to query again');
      await shootBoth(page, 'playground-as-buyer-403');

      // The creator still queries the same listing.
      await page.getByRole('combobox', { name: 'Acting as' }).click();
      await page.getByRole('option', { name: 'Creator (always allowed)' }).click();
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByRole('list', { name: 'Ranked chunks' }).getByRole('listitem').first().waitFor();

      const dark = await open('#/buyers', 'dark');
      await dark.getByRole('row', { name: /test-buyer-1/ }).waitFor();
      await dark.screenshot({ path: join(screenshots, 'buyers-dark-1280x800.png'), fullPage: true });
    },
    TEST_TIMEOUT,
  );

  it(
    'connects a browser wallet (Wallet Standard) in serve mode and signs create_listing with it',
    async () => {
      const keypair = Keypair.generate();
      const file = join(studio.dataDir, 'browser-id.json');
      writeFileSync(file, JSON.stringify([...keypair.secretKey]));
      await studio.runCli(['wallet', 'import', file, '--name', 'phantom-copy']);
      const address = keypair.publicKey.toBase58();
      const page = await open('#/wallet');
      await page.addInitScript({
        content: fakeBrowserWallet({
          address,
          seed: [...keypair.secretKey.slice(0, 32)],
          publicKey: [...keypair.publicKey.toBytes()],
        }),
      });
      await page.reload();
      // A listing created by the browser wallet's address, through the studio API with the page's token.
      const token = studio.studioToken;
      const created = await fetch(`${studio.baseUrl}/studio/listings`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Studio-Token': token },
        body: JSON.stringify({
          title: 'Signed in the browser',
          accessModel: 'one_time',
          price: 0.5,
          creatorWallet: address,
        }),
      });
      const listingOfBrowserWallet = ((await created.json()) as { data: { id: string } }).data.id;
      await page.reload();
      const browserCard = page.getByLabel('Browser wallets');
      await browserCard.getByText('Test Wallet').waitFor();
      await browserCard.getByRole('button', { name: 'Connect' }).click();
      await browserCard.getByText('Connected to').waitFor();
      await page.getByRole('combobox', { name: 'Listing' }).last().click();
      await page.getByRole('option', { name: 'Signed in the browser' }).click();
      await page.getByRole('combobox', { name: 'Sign with' }).click();
      await page.getByRole('option', { name: 'Test Wallet (browser)' }).click();
      await page.getByLabel('Sign a listing').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(screenshots, 'wallet-browser-connected-1280x800.png') });
      await page.getByRole('button', { name: 'Review and sign…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm: sign create_listing' });
      await dialog.getByRole('button', { name: 'Sign and publish' }).click();
      const done = page.getByRole('dialog', { name: 'Listing signed' });
      await done.getByTestId('signed-pda').waitFor();
      const pda = (await done.getByTestId('signed-pda').textContent())!.trim();
      const shown = JSON.parse(await studio.runCli(['listings', 'show', listingOfBrowserWallet])) as Record<
        string,
        unknown
      >;
      expect(shown).toMatchObject({ status: 'published', pdaAddress: pda, creatorWallet: address });
    },
    TEST_TIMEOUT,
  );
});
