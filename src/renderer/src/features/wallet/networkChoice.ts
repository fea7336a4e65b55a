import { SOLANA_NETWORK_URLS, type SolanaNetwork } from '../../../../shared/studio';

/** The choices of the network control: the embedded ledger, the two named clusters, or any RPC URL. */
export type NetworkChoice = 'ledger' | 'local' | 'devnet' | 'custom';

export const NETWORK_CHOICES: { value: NetworkChoice; label: string }[] = [
  { value: 'ledger', label: 'Embedded' },
  { value: 'local', label: 'Local' },
  { value: 'devnet', label: 'Devnet' },
  { value: 'custom', label: 'Custom' },
];

export const NETWORK_LABELS: Record<SolanaNetwork, string> = {
  ledger: 'Embedded ledger (no RPC)',
  local: 'Local validator',
  devnet: 'Devnet',
  testnet: 'Testnet',
  mainnet: 'Mainnet',
  custom: 'Custom RPC',
};

/** The control's choice for a stored URL: a named cluster only when the URL is exactly its own. */
export function choiceOf(rpcUrl: string | null): NetworkChoice {
  if (!rpcUrl) return 'ledger';
  if (rpcUrl === SOLANA_NETWORK_URLS.local) return 'local';
  if (rpcUrl === SOLANA_NETWORK_URLS.devnet) return 'devnet';
  return 'custom';
}

/** The value to store as `solana.rpcUrl` ('' clears it), or an error for a bad custom URL. */
export function rpcUrlOf(choice: NetworkChoice, customUrl: string): { value: string; error?: string } {
  if (choice === 'ledger') return { value: '' };
  if (choice !== 'custom') return { value: SOLANA_NETWORK_URLS[choice] };
  const value = customUrl.trim();
  if (!value) return { value, error: 'Enter the RPC URL, e.g. https://my-node.example:8899' };
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    return { value, error: 'The RPC URL must start with http:// or https://' };
  }
  return { value };
}
