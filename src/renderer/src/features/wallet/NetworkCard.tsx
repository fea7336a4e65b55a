import { CardTitle } from '../../components/CardTitle';
import { Alert, Badge, Button, Card, Group, SegmentedControl, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { maskRpcUrl } from '../../../../shared/maskUrl';
import type { NetworkView } from '../../../../shared/studio';
import { CopyValue } from '../../components/CopyValue';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { errorMessage } from '../../lib/studioApi';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import { choiceOf, NETWORK_CHOICES, NETWORK_LABELS, rpcUrlOf, type NetworkChoice } from './networkChoice';

/** Which Solana network the studio talks to (setting `solana.rpcUrl`), and what that means for the ledger. */
export function NetworkCard() {
  const network = useQuery({ queryKey: marketplaceKeys.network, queryFn: marketplaceApi.network });
  return (
    <Card withBorder padding="lg" aria-label="Network">
      <CardTitle mb="sm">Network</CardTitle>
      {network.isPending ? (
        <LoadingState label="Reading the network…" />
      ) : network.isError ? (
        <ErrorState
          title="Could not read the network"
          error={network.error}
          onRetry={() => void network.refetch()}
        />
      ) : (
        <NetworkForm key={network.data.rpcUrl ?? ''} view={network.data} />
      )}
    </Card>
  );
}

function NetworkForm({ view }: { view: NetworkView }) {
  const queryClient = useQueryClient();
  const [choice, setChoice] = useState<NetworkChoice>(choiceOf(view.rpcUrl));
  const [customUrl, setCustomUrl] = useState(choiceOf(view.rpcUrl) === 'custom' ? (view.rpcUrl ?? '') : '');
  const target = rpcUrlOf(choice, customUrl);
  const fromEnv = view.source === 'environment';
  const save = useMutation({
    mutationFn: () => marketplaceApi.setRpcUrl(target.value),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: marketplaceKeys.network });
      await queryClient.invalidateQueries({ queryKey: ['balance'] });
    },
  });
  const unchanged = target.value === (view.rpcUrl ?? '');

  return (
    <Stack gap="sm">
      <Group gap="xs">
        <Badge
          variant="light"
          color={view.network === 'ledger' ? 'gray' : 'indigo'}
          data-testid="network-badge"
        >
          {NETWORK_LABELS[view.network]}
        </Badge>
        {view.rpcUrl && (
          <Text size="xs" c="dimmed" ff="monospace" truncate maw={260} title={maskRpcUrl(view.rpcUrl)}>
            {maskRpcUrl(view.rpcUrl)}
          </Text>
        )}
      </Group>
      {fromEnv ? (
        <Alert color="blue" variant="light">
          Set by the environment variable SOLANA_RPC_URL when the studio started; unset it to choose here.
        </Alert>
      ) : (
        <>
          <SegmentedControl
            aria-label="Network"
            fullWidth
            size="xs"
            data={NETWORK_CHOICES}
            value={choice}
            onChange={(v) => setChoice(v as NetworkChoice)}
          />
          {choice === 'custom' && (
            <TextInput
              label="RPC URL"
              placeholder="https://my-node.example:8899"
              value={customUrl}
              onChange={(e) => setCustomUrl(e.currentTarget.value)}
              error={customUrl ? target.error : undefined}
            />
          )}
          <Text size="xs" c="dimmed">
            {choice === 'ledger'
              ? 'No RPC: the studio’s own SQLite ledger enforces the program’s rules offline. Nothing is sent anywhere.'
              : choice === 'local'
                ? 'A solana-test-validator on this machine (port 8899), with free airdrops.'
                : choice === 'devnet'
                  ? 'Solana devnet, where the marketplace beta runs. Airdrops are free but rate-limited.'
                  : 'Any Solana JSON-RPC endpoint.'}
          </Text>
          {save.error && (
            <Alert color="red" variant="light" title="Not saved" role="alert">
              {errorMessage(save.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button
              size="xs"
              disabled={unchanged || Boolean(target.error)}
              loading={save.isPending}
              onClick={() => save.mutate()}
            >
              Use this network
            </Button>
          </Group>
        </>
      )}
      <div>
        <Text size="xs" c="dimmed">
          Marketplace program
        </Text>
        <CopyValue value={view.programId} label="program ID" />
      </div>
    </Stack>
  );
}
