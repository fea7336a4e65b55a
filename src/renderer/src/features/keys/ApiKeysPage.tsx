import { Badge, Button, EmptyState, Select, Table, Text, Tooltip, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconKey, IconPlus } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { ApiKey } from '../../../../shared/studio';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { formatDateTime, shortAddress } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { CreateKeyModal } from './CreateKeyModal';
import { RevokeKeyModal } from './RevokeKeyModal';

export function ApiKeysPage() {
  const api = useStudioApi();
  const [creating, createModal] = useDisclosure(false);
  const [revoking, setRevoking] = useState<ApiKey>();
  const keys = useQuery({ queryKey: queryKeys.keys, queryFn: () => api.keys.list() });
  const wallets = useQuery({ queryKey: queryKeys.wallets, queryFn: () => api.wallets.list() });
  // A key acts for one wallet: the list can be narrowed to the keys of one.
  const [walletFilter, setWalletFilter] = useState<string | null>(null);
  const walletOptions = [
    { value: '', label: 'All wallets' },
    ...(wallets.data ?? []).map((w) => ({
      value: w.address,
      label: `${w.name} · ${shortAddress(w.address, 4, 4)}`,
    })),
  ];
  const shown = (keys.data ?? []).filter((k) => !walletFilter || k.wallet === walletFilter);

  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys let apps and scripts call this studio's /v1 API as one of your wallets. A key is shown once, when it is created; the studio keeps only its hash."
        actions={
          <>
            <Select
              aria-label="Wallet"
              data={walletOptions}
              value={walletFilter ?? ''}
              onChange={(v) => setWalletFilter(v || null)}
              allowDeselect={false}
              w={240}
            />
            <Button leftSection={<IconPlus size={16} />} onClick={createModal.open}>
              Create key
            </Button>
          </>
        }
      />
      {keys.isPending ? (
        <LoadingState label="Loading API keys…" />
      ) : keys.isError ? (
        <ErrorState
          title="Could not load the API keys"
          error={keys.error}
          onRetry={() => void keys.refetch()}
        />
      ) : keys.data.length === 0 ? (
        <EmptyState
          mt={48}
          icon={<IconKey size={28} />}
          variant="light"
          title="No API keys yet"
          description="Create a key to query your listings from code, the client library or the CLI."
        >
          <EmptyState.Actions>
            <Button leftSection={<IconPlus size={16} />} onClick={createModal.open}>
              Create key
            </Button>
          </EmptyState.Actions>
        </EmptyState>
      ) : (
        <KeysTable keys={shown} onRevoke={setRevoking} />
      )}
      <CreateKeyModal opened={creating} onClose={createModal.close} wallet={walletFilter} />
      <RevokeKeyModal apiKey={revoking} onClose={() => setRevoking(undefined)} />
    </>
  );
}

function KeysTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke: (key: ApiKey) => void }) {
  return (
    // Narrow enough to fit the card at 1024 px without scrolling sideways (dates and labels wrap).
    <Table.ScrollContainer minWidth={680} type="native" className="kb-table-wrap">
      <Table verticalSpacing="sm" horizontalSpacing="md" highlightOnHover aria-label="API keys">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Label</Table.Th>
            {/* Next to the label: in view whole at any width, never under the pinned actions. */}
            <Table.Th>Status</Table.Th>
            <Table.Th>Key</Table.Th>
            <Table.Th>Wallet</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Last used</Table.Th>
            <Table.Th w={100} className="kb-pin-end">
              <VisuallyHidden>Actions</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {keys.map((key) => {
            const revoked = key.revokedAt !== null;
            return (
              <Table.Tr key={key.id} data-key-id={key.id} style={revoked ? { opacity: 0.6 } : undefined}>
                <Table.Td>
                  {key.label ? (
                    <Text size="sm" fw={600}>
                      {key.label}
                    </Text>
                  ) : (
                    <Text size="sm" c="dimmed" fs="italic">
                      No label
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  {revoked ? (
                    <Tooltip label={`Revoked ${formatDateTime(key.revokedAt)}`} withArrow>
                      <Badge color="red" variant="light">
                        Revoked
                      </Badge>
                    </Tooltip>
                  ) : (
                    <Badge color="teal" variant="light">
                      Active
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm" ff="monospace">
                    {key.prefix}…
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Tooltip label={key.wallet} withArrow>
                    <Text size="sm" ff="monospace" tabIndex={0} aria-label={`Wallet ${key.wallet}`}>
                      {shortAddress(key.wallet, 6, 6)}
                    </Text>
                  </Tooltip>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{formatDateTime(key.createdAt)}</Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm" c={key.lastUsedAt ? undefined : 'dimmed'}>
                    {key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}
                  </Text>
                </Table.Td>
                <Table.Td ta="right" className="kb-pin-end">
                  {!revoked && (
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      onClick={() => onRevoke(key)}
                      aria-label={`Revoke ${key.label || key.prefix}`}
                    >
                      Revoke
                    </Button>
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
