import { isWalletAdapterCompatibleStandardWallet } from '@solana/wallet-adapter-base';
import { StandardWalletAdapter } from '@solana/wallet-standard-wallet-adapter-base';
import { getWallets } from '@wallet-standard/app';
import type { Wallet as StandardWallet } from '@wallet-standard/base';
import { useEffect, useState } from 'react';

/** True inside the desktop app (its preload defines `window.kbstudio`); false in `kbstudio serve`. */
export const isDesktopApp = (): boolean => typeof window !== 'undefined' && window.kbstudio !== undefined;

/** Wallet Standard wallets that can sign Solana transactions, as wallet adapters. */
export function compatibleAdapters(wallets: readonly StandardWallet[]): StandardWalletAdapter[] {
  return wallets
    .filter(isWalletAdapterCompatibleStandardWallet)
    .map((wallet) => new StandardWalletAdapter({ wallet }));
}

/**
 * The browser wallets the page can see (Phantom, Solflare, Backpack…: every Wallet Standard wallet
 * that signs Solana transactions), kept current as extensions register. Empty in the desktop app,
 * where extensions do not run.
 */
export function useBrowserWallets(): StandardWalletAdapter[] {
  const [adapters, setAdapters] = useState<StandardWalletAdapter[]>([]);
  useEffect(() => {
    if (isDesktopApp()) return;
    const registry = getWallets();
    const refresh = () => setAdapters(compatibleAdapters(registry.get()));
    refresh();
    const offRegister = registry.on('register', refresh);
    const offUnregister = registry.on('unregister', refresh);
    return () => {
      offRegister();
      offUnregister();
    };
  }, []);
  return adapters;
}
