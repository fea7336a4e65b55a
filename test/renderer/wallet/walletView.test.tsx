import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { Wallet as StandardWallet } from '@wallet-standard/base';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { airdropAvailability, networkOfRpcUrl } from '../../../src/shared/studio';
import { compatibleAdapters } from '../../../src/renderer/src/lib/wallet/browserWallets';
import { BrowserWalletsCard } from '../../../src/renderer/src/features/wallet/BrowserWalletsCard';
import { checkKeypairText } from '../../../src/renderer/src/features/wallet/keypairFile';
import { choiceOf, rpcUrlOf } from '../../../src/renderer/src/features/wallet/networkChoice';

const ICON = 'data:image/svg+xml;base64,PHN2Zy8+' as const;

function standardWallet(name: string, features: string[], chains: string[]): StandardWallet {
  const feature = { version: '1.0.0', supportedTransactionVersions: ['legacy', 0] };
  return {
    version: '1.0.0',
    name,
    icon: ICON,
    chains: chains as StandardWallet['chains'],
    accounts: [],
    features: Object.fromEntries(
      features.map((f) => [f, { ...feature, on: () => () => {}, connect: async () => ({ accounts: [] }) }]),
    ),
  };
}

describe('keypair files', () => {
  it('accepts the Solana CLI layout and names what is wrong otherwise', () => {
    expect(checkKeypairText(JSON.stringify(new Array(64).fill(7)), 'id.json')).toBeUndefined();
    expect(checkKeypairText('  ', 'id.json')).toBe(
      'id.json is empty: choose the keypair file or paste its contents.',
    );
    expect(checkKeypairText('{"secret": 1', 'id.json')).toBe(
      'id.json is not JSON: expected the Solana CLI format, an array of 64 numbers.',
    );
    expect(checkKeypairText('{"a":1}', 'id.json')).toContain('not an object');
    expect(checkKeypairText('[1,2]', 'id.json')).toContain('it has 2');
    expect(checkKeypairText(JSON.stringify([...new Array(63).fill(1), 256]), 'k.json')).toContain(
      'item 64 is 256',
    );
  });
});

describe('networks', () => {
  it('maps the control to solana.rpcUrl and back', () => {
    expect(rpcUrlOf('ledger', '')).toEqual({ value: '' });
    expect(rpcUrlOf('devnet', '')).toEqual({ value: 'https://api.devnet.solana.com' });
    expect(rpcUrlOf('local', '')).toEqual({ value: 'http://127.0.0.1:8899' });
    expect(rpcUrlOf('custom', 'ftp://node')).toMatchObject({
      error: 'The RPC URL must start with http:// or https://',
    });
    expect(rpcUrlOf('custom', ' https://rpc.example.com ')).toEqual({ value: 'https://rpc.example.com' });
    expect(choiceOf(null)).toBe('ledger');
    expect(choiceOf('https://api.devnet.solana.com')).toBe('devnet');
    expect(choiceOf('http://127.0.0.1:8899')).toBe('local');
    expect(choiceOf('http://localhost:9000')).toBe('custom');
  });

  it('knows where an airdrop is possible, and says why not', () => {
    expect(networkOfRpcUrl(undefined)).toBe('ledger');
    expect(networkOfRpcUrl('http://localhost:9000')).toBe('local');
    expect(networkOfRpcUrl('https://api.mainnet-beta.solana.com')).toBe('mainnet');
    expect(networkOfRpcUrl('https://rpc.example.com')).toBe('custom');
    expect(airdropAvailability('devnet')).toEqual({ available: true, reason: null });
    expect(airdropAvailability('mainnet').reason).toBe('Mainnet has no faucet: SOL there is real money.');
    expect(airdropAvailability('ledger').available).toBe(false);
  });
});

describe('browser wallets (Wallet Standard)', () => {
  it('offers only wallets that can connect and sign Solana transactions, as adapters', () => {
    const phantom = standardWallet(
      'Phantom',
      ['standard:connect', 'standard:events', 'solana:signTransaction'],
      ['solana:devnet'],
    );
    const ethOnly = standardWallet('EthWallet', ['standard:connect', 'standard:events'], ['ethereum:1']);
    const adapters = compatibleAdapters([phantom, ethOnly]);
    expect(adapters.map((a) => a.name)).toEqual(['Phantom']);
    expect(adapters[0]!.icon).toBe(ICON);
  });

  it('says plainly when the browser has none, with no button to press', () => {
    const html = renderToStaticMarkup(
      <MantineProvider>
        <QueryClientProvider client={new QueryClient()}>
          <BrowserWalletsCard connected={null} onConnected={() => {}} />
        </QueryClientProvider>
      </MantineProvider>,
    );
    expect(html).toContain('No Solana wallet extension was found in this browser.');
    expect(html).not.toContain('<button');
  });
});
