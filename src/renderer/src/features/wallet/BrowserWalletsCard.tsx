import { CardTitle } from '../../components/CardTitle';
import { Alert, Avatar, Button, Card, Group, Stack, Text } from '@mantine/core';
import type { StandardWalletAdapter } from '@solana/wallet-standard-wallet-adapter-base';
import { useMutation } from '@tanstack/react-query';
import { CopyValue } from '../../components/CopyValue';
import { errorMessage } from '../../lib/studioApi';
import { isDesktopApp, useBrowserWallets } from '../../lib/wallet/browserWallets';
import type { TransactionSigner } from '../../lib/wallet/signListing';

export interface ConnectedBrowserWallet {
  name: string;
  address: string;
  signer: TransactionSigner;
}

/**
 * Browser wallets (Wallet Standard) in `kbstudio serve`: listed when the page sees one, connected
 * through their own adapter, then offered as a signer for create_listing. The secret stays in the
 * browser wallet.
 */
export function BrowserWalletsCard({
  connected,
  onConnected,
}: {
  connected: ConnectedBrowserWallet | null;
  onConnected: (wallet: ConnectedBrowserWallet | null) => void;
}) {
  const adapters = useBrowserWallets();
  const connect = useMutation({
    mutationFn: async (adapter: StandardWalletAdapter) => {
      await adapter.connect();
      const address = adapter.publicKey?.toBase58();
      if (!address) throw new Error(`${adapter.name} connected without an account.`);
      return { name: adapter.name, address, signer: adapter };
    },
    onSuccess: onConnected,
  });

  return (
    <Card withBorder padding="lg" aria-label="Browser wallets">
      <CardTitle mb="sm">Browser wallet</CardTitle>
      {isDesktopApp() ? (
        <Text size="sm" c="dimmed">
          Browser wallet extensions do not run inside the desktop app. Open the studio in your browser with{' '}
          <code>kbstudio serve</code> to sign with Phantom, Solflare or another Solana wallet.
        </Text>
      ) : connected ? (
        <Stack gap="xs">
          <Text size="sm">
            Connected to <b>{connected.name}</b>
          </Text>
          <CopyValue value={connected.address} label="browser wallet address" />
          <Group>
            <Button size="xs" variant="default" onClick={() => onConnected(null)}>
              Disconnect
            </Button>
          </Group>
        </Stack>
      ) : adapters.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="no-browser-wallet">
          No Solana wallet extension was found in this browser. Install one that supports the Wallet Standard
          (Phantom, Solflare, Backpack…) and reload this page to sign with it; the studio wallets above work
          without one.
        </Text>
      ) : (
        <Stack gap="xs">
          {adapters.map((adapter) => (
            <Group key={adapter.name} justify="space-between">
              <Group gap="sm">
                <Avatar src={adapter.icon} size={24} radius="sm" alt="" />
                <Text size="sm">{adapter.name}</Text>
              </Group>
              <Button
                size="xs"
                variant="light"
                loading={connect.isPending && connect.variables === adapter}
                onClick={() => connect.mutate(adapter)}
              >
                Connect
              </Button>
            </Group>
          ))}
        </Stack>
      )}
      {connect.error && (
        <Alert mt="sm" color="red" variant="light" role="alert" title="Not connected">
          {errorMessage(connect.error)}
        </Alert>
      )}
    </Card>
  );
}
