import { Alert, Badge, Button, Card, Group, Menu, Select, Stack, Table, Text, Tooltip } from '@mantine/core';
import { IconChevronDown, IconPlayerPlay, IconUserPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Listing } from '../../../../shared/listings';
import { testBuyerStatesFor, type TestBuyer, type TestBuyerState } from '../../../../shared/studio';
import { CopyValue } from '../../components/CopyValue';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { ACCESS_MODEL_LABELS, formatDateTime, formatListingPrice, formatSol } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import { ListingPicker } from '../ingest/ListingPicker';
import { useListingChoice } from '../ingest/useListingChoice';
import { expectedAnswer, playgroundHrefAs, STATE_LABELS, STATUS_BADGES } from './buyerStates';

export function TestBuyersPage() {
  const api = useStudioApi();
  const [listingId] = useListingChoice();
  const listing = useQuery({
    queryKey: [...queryKeys.listings, 'one', listingId],
    queryFn: () => api.listings.get(listingId!),
    enabled: listingId !== null,
  });
  return (
    <>
      <PageHeader
        title="Test buyers"
        description="Local buyer wallets holding a credential in any state (active, expired, low balance, revoked), so you can query your listing as they would and see exactly what a real buyer gets."
        actions={<ListingPicker />}
      />
      {listingId === null ? (
        <Card withBorder padding="xl">
          <Text fw={600}>No listing chosen</Text>
          <Text size="sm" c="dimmed">
            Create a listing first, then choose it above.
          </Text>
        </Card>
      ) : listing.isPending ? (
        <LoadingState label="Loading the listing…" />
      ) : listing.isError ? (
        <ErrorState
          title="Could not load the listing"
          error={listing.error}
          onRetry={() => void listing.refetch()}
        />
      ) : (
        <Buyers listing={listing.data} />
      )}
    </>
  );
}

function Buyers({ listing }: { listing: Listing }) {
  const queryClient = useQueryClient();
  const buyers = useQuery({
    queryKey: marketplaceKeys.buyers(listing.id),
    queryFn: () => marketplaceApi.buyers(listing.id),
  });
  const states = testBuyerStatesFor(listing.accessModel);
  const [newState, setNewState] = useState<TestBuyerState | null>(null);
  const initial = newState ?? states[0]!;
  const refresh = () => queryClient.invalidateQueries({ queryKey: marketplaceKeys.buyers(listing.id) });
  const add = useMutation({
    mutationFn: async () => {
      const wallet = await marketplaceApi.createBuyer();
      await marketplaceApi.setBuyerState(listing.id, wallet.address, initial);
      return wallet;
    },
    onSettled: refresh,
  });
  const setState = useMutation({
    mutationFn: ({ wallet, state }: { wallet: string; state: TestBuyerState }) =>
      marketplaceApi.setBuyerState(listing.id, wallet, state),
    onSettled: refresh,
  });
  const draft = listing.status !== 'published';

  return (
    <Stack gap="lg">
      <Card withBorder padding="lg">
        <Group justify="space-between" align="flex-end" wrap="wrap" gap="md">
          <div className="kb-break">
            <Text fw={600}>{listing.title}</Text>
            <Text size="sm" c="dimmed">
              {ACCESS_MODEL_LABELS[listing.accessModel]} · {formatListingPrice(listing)} ·{' '}
              {listing.retrievalRateLimit} queries / minute per buyer
            </Text>
          </div>
          <Group align="flex-end" gap="sm">
            <Select
              label="Credential"
              data={states.map((s) => ({ value: s, label: STATE_LABELS[s] }))}
              value={initial}
              onChange={(v) => v && setNewState(v as TestBuyerState)}
              allowDeselect={false}
              w={230}
              disabled={draft}
            />
            <Button
              leftSection={<IconUserPlus size={16} />}
              onClick={() => add.mutate()}
              loading={add.isPending}
              disabled={draft}
            >
              Add test buyer
            </Button>
          </Group>
        </Group>
        {draft && (
          <Alert color="yellow" variant="light" mt="md">
            This listing is a draft: nobody can hold access to it yet. Publish it (sign create_listing on the
            Wallet page) to grant test buyers.
          </Alert>
        )}
        {(add.error || setState.error) && (
          <Alert color="red" variant="light" mt="md" role="alert" title="Not granted">
            {errorMessage(add.error ?? setState.error)}
          </Alert>
        )}
      </Card>
      {buyers.isPending ? (
        <LoadingState label="Loading test buyers…" />
      ) : buyers.isError ? (
        <ErrorState
          title="Could not load test buyers"
          error={buyers.error}
          onRetry={() => void buyers.refetch()}
        />
      ) : buyers.data.length === 0 ? (
        <Text size="sm" c="dimmed" ta="center" py="xl">
          No test buyers yet. Add one above with the credential state you want to try.
        </Text>
      ) : (
        <Table.ScrollContainer minWidth={960} type="native" className="kb-table-wrap">
          <Table verticalSpacing="sm" aria-label="Test buyers">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Buyer</Table.Th>
                <Table.Th>Wallet</Table.Th>
                <Table.Th>Credential</Table.Th>
                <Table.Th>Terms</Table.Th>
                <Table.Th>A query gets</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {buyers.data.map((buyer) => (
                <BuyerRow
                  key={buyer.wallet}
                  buyer={buyer}
                  listing={listing}
                  states={states}
                  busy={setState.isPending && setState.variables?.wallet === buyer.wallet}
                  onSet={(state) => setState.mutate({ wallet: buyer.wallet, state })}
                />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Stack>
  );
}

function BuyerRow({
  buyer,
  listing,
  states,
  busy,
  onSet,
}: {
  buyer: TestBuyer;
  listing: Listing;
  states: TestBuyerState[];
  busy: boolean;
  onSet: (state: TestBuyerState) => void;
}) {
  const c = buyer.credential;
  const badge = STATUS_BADGES[c?.status ?? 'none']!;
  const answer = expectedAnswer(c);
  const terms = !c
    ? 'Revoked or never granted'
    : c.accessModel === 'subscription'
      ? `${c.status === 'expired' ? 'Expired' : 'Expires'} ${formatDateTime(c.expiresAt)}`
      : c.accessModel === 'per_query'
        ? `Balance ${formatSol(c.balance ?? 0)}`
        : 'Until revoked';
  return (
    <Table.Tr data-buyer={buyer.wallet}>
      <Table.Td>
        <Text size="sm" fw={600} style={{ whiteSpace: 'nowrap' }}>
          {buyer.name ?? 'Outside wallet'}
        </Text>
        {c && !c.testGrant && (
          <Text size="xs" c="dimmed">
            Bought access
          </Text>
        )}
      </Table.Td>
      <Table.Td maw={200}>
        <CopyValue value={buyer.wallet} label="buyer wallet" />
      </Table.Td>
      <Table.Td>
        <Badge color={badge.color} variant="light" data-testid="buyer-status">
          {badge.label}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{terms}</Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm" ff="monospace" c={answer.code ? 'red' : 'teal'}>
          {answer.status}
          {answer.code ? ` ${answer.code}` : ' OK'}
        </Text>
      </Table.Td>
      <Table.Td>
        <Group gap="xs" justify="flex-end" wrap="nowrap">
          {buyer.name && (
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <Button
                  size="xs"
                  variant="default"
                  rightSection={<IconChevronDown size={14} />}
                  loading={busy}
                >
                  Set credential
                </Button>
              </Menu.Target>
              <Menu.Dropdown>
                {states.map((state) => (
                  <Menu.Item key={state} onClick={() => onSet(state)}>
                    {STATE_LABELS[state]}
                  </Menu.Item>
                ))}
              </Menu.Dropdown>
            </Menu>
          )}
          <Tooltip
            label={
              buyer.name
                ? 'Open the playground with this buyer’s API key'
                : 'The studio does not hold this wallet'
            }
            withArrow
          >
            <Button
              size="xs"
              variant="light"
              component="a"
              href={buyer.name ? playgroundHrefAs(listing.id, buyer.wallet) : undefined}
              leftSection={<IconPlayerPlay size={14} />}
              disabled={!buyer.name}
            >
              Query as this buyer
            </Button>
          </Tooltip>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}
