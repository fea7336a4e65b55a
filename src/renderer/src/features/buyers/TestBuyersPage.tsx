import {
  Alert,
  Badge,
  Box,
  Button,
  Card,
  Group,
  Menu,
  Select,
  Stack,
  Table,
  Text,
  Tooltip,
  VisuallyHidden,
} from '@mantine/core';
import { IconChevronDown, IconPlayerPlay, IconUserPlus } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useId, useState } from 'react';
import type { Listing } from '../../../../shared/listings';
import { testBuyerStatesFor, type TestBuyer, type TestBuyerState } from '../../../../shared/studio';
import { CardTitle } from '../../components/CardTitle';
import { CopyValue } from '../../components/CopyValue';
import { NoListingState } from '../../components/NoListingState';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import {
  ACCESS_MODEL_LABELS,
  counted,
  formatDateTime,
  formatListingPrice,
  formatSol,
  shortAddress,
} from '../../lib/format';
import { announce } from '../../lib/announce';
import { focusWhenReady } from '../../lib/focus';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';
import { useNarrowCard } from '../../lib/tableLayout';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import { ListingPicker, usePickerListings } from '../ingest/ListingPicker';
import { useListingChoice } from '../ingest/useListingChoice';
import { BuyerName } from './BuyerName';
import { expectedAnswer, playgroundHrefAs, STATE_LABELS, STATUS_BADGES } from './buyerStates';

export function TestBuyersPage() {
  const api = useStudioApi();
  const [listingId] = useListingChoice();
  const listings = usePickerListings();
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
      {listings.isSuccess && listings.data.data.length === 0 ? (
        <NoListingState what="Test buyers hold credentials to one of your listings." />
      ) : listingId === null || listing.isPending ? (
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
  // Narrower than this, the table's columns of text wrap word by word: each buyer becomes a block.
  const { setCard, narrow } = useNarrowCard(760);
  const initial = newState ?? states[0]!;
  const refresh = () => queryClient.invalidateQueries({ queryKey: marketplaceKeys.buyers(listing.id) });
  const add = useMutation({
    mutationFn: async () => {
      const wallet = await marketplaceApi.createBuyer();
      await marketplaceApi.setBuyerState(listing.id, wallet.address, initial);
      return wallet;
    },
    onSettled: refresh,
    onSuccess: (wallet) => {
      // Add test buyer was disabled while it ran, which dropped the focus: the new row takes it.
      announce(`Test buyer ${wallet.name} added.`);
      focusWhenReady(() =>
        document.querySelector<HTMLElement>(`[data-buyer="${wallet.address}"] [data-row-focus]`),
      );
    },
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
            <CardTitle>{listing.title}</CardTitle>
            <Text size="sm" c="dimmed">
              {ACCESS_MODEL_LABELS[listing.accessModel]} · {formatListingPrice(listing)} ·{' '}
              {counted(listing.retrievalRateLimit, 'query', 'queries')} / minute per buyer
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
            This listing is a draft: nobody can hold access to it yet, and to everyone but its creator it does
            not exist (a query is 404). Publish it (sign create_listing on the Wallet page) to grant test
            buyers and query as them.
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
        // A table while it fits; in a narrower window each buyer is a block of its own (styles.css,
        // [data-layout='stacked']), so the row actions are in view without scrolling sideways.
        <Table.ScrollContainer
          ref={setCard}
          minWidth={0}
          type="native"
          className="kb-table-wrap"
          data-layout={narrow ? 'stacked' : 'full'}
        >
          <Table verticalSpacing="sm" aria-label="Test buyers" role="table">
            <Table.Thead role="rowgroup">
              <Table.Tr role="row">
                <Table.Th role="columnheader">Buyer</Table.Th>
                <Table.Th role="columnheader">Credential</Table.Th>
                <Table.Th role="columnheader">Terms</Table.Th>
                <Table.Th role="columnheader">A query gets</Table.Th>
                {/* As narrow as its widest button: the room left goes to the columns of text. */}
                <Table.Th role="columnheader" style={{ width: '1%' }}>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody role="rowgroup">
              {buyers.data.map((buyer) => (
                <BuyerRow
                  key={buyer.wallet}
                  buyer={buyer}
                  listing={listing}
                  states={states}
                  draft={draft}
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

/** Why "Set credential" does nothing on a draft: said in its tooltip and its description. */
const NO_CREDENTIAL_ON_DRAFT = 'A draft: nobody can hold access to it yet';

function BuyerRow({
  buyer,
  listing,
  states,
  draft,
  busy,
  onSet,
}: {
  buyer: TestBuyer;
  listing: Listing;
  states: TestBuyerState[];
  /** A draft is 404 to buyers: nothing to grant, nothing to query as them. */
  draft: boolean;
  busy: boolean;
  onSet: (state: TestBuyerState) => void;
}) {
  const c = buyer.credential;
  const badge = STATUS_BADGES[c?.status ?? 'none']!;
  const answer = expectedAnswer(c, draft);
  const terms = !c
    ? 'Revoked or never granted'
    : c.accessModel === 'subscription'
      ? `${c.status === 'expired' ? 'Expired' : 'Expires'} ${formatDateTime(c.expiresAt)}`
      : c.accessModel === 'per_query'
        ? `Balance ${formatSol(c.balance ?? 0)}`
        : 'Until revoked';
  const cannotQuery = !buyer.name
    ? 'The studio does not hold this wallet'
    : draft
      ? 'A draft is 404 to buyers: publish it to query as this buyer'
      : undefined;
  // Every row has the same buttons: each is named with its buyer ("Set credential for buyer-alice").
  const who = buyer.name ?? shortAddress(buyer.wallet, 4, 4);
  const whyNot = useId();
  const whyNoCredential = useId();
  return (
    <Table.Tr data-buyer={buyer.wallet} role="row">
      <Table.Td role="cell">
        <BuyerName name={buyer.name} />
        <Box maw={190}>
          <CopyValue value={buyer.wallet} label="buyer wallet" />
        </Box>
        {c && !c.testGrant && (
          <Text size="xs" c="dimmed">
            Bought access
          </Text>
        )}
      </Table.Td>
      <Table.Td role="cell" data-stack="end">
        <Badge color={badge.color} variant="light" data-testid="buyer-status">
          {badge.label}
        </Badge>
      </Table.Td>
      <Table.Td role="cell" data-label="Terms">
        <Text size="sm">{terms}</Text>
      </Table.Td>
      <Table.Td role="cell" data-label="A query gets" data-stack="end">
        <Text size="sm" ff="monospace" c={answer.code ? 'red' : 'teal'}>
          {answer.status} {answer.code ? <Breakable code={answer.code} /> : 'OK'}
        </Text>
      </Table.Td>
      <Table.Td role="cell" data-stack="wide">
        <Group gap="xs" justify="flex-end" className="kb-row-actions">
          {buyer.name &&
            (draft ? (
              <Tooltip
                label={NO_CREDENTIAL_ON_DRAFT}
                withArrow
                // Shown on focus too: the keyboard reaches the reason the action does nothing.
                events={{ hover: true, focus: true, touch: false }}
              >
                {/* data-disabled, not disabled: a disabled button takes no focus and gets no hover. */}
                <Button
                  size="xs"
                  variant="default"
                  rightSection={<IconChevronDown size={14} />}
                  data-disabled
                  aria-disabled
                  aria-label={`Set credential for ${who}`}
                  aria-describedby={whyNoCredential}
                  onClick={(event) => event.preventDefault()}
                >
                  Set credential
                </Button>
              </Tooltip>
            ) : (
              <Menu position="bottom-end" withinPortal>
                <Menu.Target>
                  <Button
                    size="xs"
                    variant="default"
                    rightSection={<IconChevronDown size={14} />}
                    loading={busy}
                    aria-label={`Set credential for ${who}`}
                    data-row-focus
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
            ))}
          <Tooltip
            label={cannotQuery ?? 'Open the playground with this buyer’s API key'}
            withArrow
            multiline
            maw={260}
            // Shown on focus too: the keyboard reaches the reason a disabled action gives.
            events={{ hover: true, focus: true, touch: false }}
          >
            <Button
              size="xs"
              variant="light"
              component="a"
              href={cannotQuery ? undefined : playgroundHrefAs(listing.id, buyer.wallet)}
              leftSection={<IconPlayerPlay size={14} />}
              aria-label={`Query as this buyer: ${who}`}
              // data-disabled, not disabled: the tooltip saying why still shows on hover. A link
              // without an address is not focusable: role and tabIndex keep it in the Tab order.
              data-disabled={cannotQuery ? true : undefined}
              aria-disabled={cannotQuery ? true : undefined}
              role={cannotQuery ? 'link' : undefined}
              tabIndex={cannotQuery ? 0 : undefined}
              aria-describedby={cannotQuery ? whyNot : undefined}
              onClick={(event) => {
                if (cannotQuery) event.preventDefault();
              }}
            >
              Query as this buyer
            </Button>
          </Tooltip>
          {cannotQuery && (
            <VisuallyHidden id={whyNot} component="span">
              {cannotQuery}
            </VisuallyHidden>
          )}
          {buyer.name && draft && (
            <VisuallyHidden id={whyNoCredential} component="span">
              {NO_CREDENTIAL_ON_DRAFT}
            </VisuallyHidden>
          )}
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

/** An error code that may wrap after its underscores only: `insufficient_` / `balance`, never `balanc` / `e`. */
function Breakable({ code }: { code: string }) {
  const parts = code.split('_');
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 && (
            <>
              _<wbr />
            </>
          )}
        </Fragment>
      ))}
    </>
  );
}
