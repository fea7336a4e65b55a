import { CardTitle } from '../../components/CardTitle';
import {
  Alert,
  Badge,
  Button,
  Card,
  Grid,
  Group,
  NumberInput,
  Radio,
  Select,
  Stack,
  Table,
  Text,
  Tooltip,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconDroplet, IconFileImport, IconPlus, IconRefresh, IconSignature } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { maskRpcUrl } from '../../../../shared/maskUrl';
import { TEST_BUYER_PREFIX, type Wallet } from '../../../../shared/studio';
import { EncryptedAtRestBadge } from '../../components/EncryptedAtRestBadge';
import { CopyValue } from '../../components/CopyValue';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { announce } from '../../lib/announce';
import { focusWhenReady } from '../../lib/focus';
import { formatSol, shortAddress } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage, readStudioToken } from '../../lib/studioApi';
import { fetchWithStudioToken } from '../../lib/studioToken';
import { useStudioApi } from '../../lib/studioContext';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import type { TransactionSigner } from '../../lib/wallet/signListing';
import { createStudioWalletTransport, StudioWalletAdapter } from '../../lib/wallet/studioWalletAdapter';
import { ListingPicker } from '../ingest/ListingPicker';
import { useListingChoice } from '../ingest/useListingChoice';
import { BrowserWalletsCard, type ConnectedBrowserWallet } from './BrowserWalletsCard';
import { ImportWalletModal } from './ImportWalletModal';
import { NetworkCard } from './NetworkCard';
import { SignListingModal } from './SignListingModal';

export function WalletPage() {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const wallets = useQuery({ queryKey: queryKeys.wallets, queryFn: () => api.wallets.list() });
  const [chosen, setChosen] = useState<string | null>(null);
  const [importing, importModal] = useDisclosure(false);
  const [browserWallet, setBrowserWallet] = useState<ConnectedBrowserWallet | null>(null);
  const create = useMutation({
    mutationFn: () => api.wallets.create({}),
    onSuccess: async (wallet) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.wallets });
      setChosen(wallet.address);
      // Create wallet was disabled while it ran, which dropped the focus: the new wallet's row takes it.
      announce(`Wallet ${wallet.name} created and shown below.`);
      focusWhenReady(() =>
        document.querySelector<HTMLElement>(`[data-wallet-row="${wallet.address}"] input[type="radio"]`),
      );
    },
  });
  // Test buyers have their own view; here are the creator's wallets.
  const own = (wallets.data ?? []).filter((w) => !w.name.startsWith(TEST_BUYER_PREFIX));
  const selected = own.find((w) => w.address === chosen) ?? own.find((w) => w.isDefault) ?? own[0];

  return (
    <>
      <PageHeader
        title="Wallet"
        description="The wallets that create and sign your listings. Secrets stay in the studio’s server process; this page only ever sees addresses and signatures."
        actions={
          <>
            <Button variant="default" leftSection={<IconFileImport size={16} />} onClick={importModal.open}>
              Import id.json
            </Button>
            <Button
              leftSection={<IconPlus size={16} />}
              loading={create.isPending}
              onClick={() => create.mutate()}
            >
              Create wallet
            </Button>
          </>
        }
      />
      {create.error && (
        <Alert color="red" variant="light" mb="md" role="alert" title="No wallet created">
          {errorMessage(create.error)}
        </Alert>
      )}
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <Stack gap="lg">
            {wallets.isPending ? (
              <LoadingState label="Loading wallets…" />
            ) : wallets.isError ? (
              <ErrorState
                title="Could not load wallets"
                error={wallets.error}
                onRetry={() => void wallets.refetch()}
              />
            ) : own.length === 0 ? (
              <Card withBorder padding="xl">
                <Text fw={600}>No wallet yet</Text>
                <Text size="sm" c="dimmed">
                  Create one, or import the keypair file of a wallet you already use with the Solana CLI.
                </Text>
              </Card>
            ) : (
              <WalletsTable wallets={own} selected={selected?.address} onSelect={setChosen} />
            )}
            {/* Keyed: an airdrop's outcome belongs to the wallet it was asked for. */}
            {selected && <WalletDetails key={selected.address} wallet={selected} />}
            <SignListingCard wallets={own} browserWallet={browserWallet} />
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Stack gap="lg">
            <NetworkCard />
            <BrowserWalletsCard connected={browserWallet} onConnected={setBrowserWallet} />
          </Stack>
        </Grid.Col>
      </Grid>
      <ImportWalletModal
        opened={importing}
        onClose={importModal.close}
        onImported={(w) => setChosen(w.address)}
      />
    </>
  );
}

function WalletsTable({
  wallets,
  selected,
  onSelect,
}: {
  wallets: Wallet[];
  selected: string | undefined;
  onSelect: (address: string) => void;
}) {
  return (
    <Table.ScrollContainer minWidth={480} type="native" className="kb-table-wrap">
      <Radio.Group value={selected ?? null} onChange={onSelect} aria-label="Wallet shown below">
        <Table verticalSpacing="sm" highlightOnHover aria-label="Studio wallets">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={40} />
              <Table.Th>Name</Table.Th>
              <Table.Th>Address</Table.Th>
              <Table.Th>Secret at rest</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {wallets.map((w) => (
              <Table.Tr
                key={w.address}
                data-wallet-row={w.address}
                onClick={() => onSelect(w.address)}
                style={{ cursor: 'pointer' }}
              >
                <Table.Td>
                  <Radio value={w.address} aria-label={`Show ${w.name}`} />
                </Table.Td>
                <Table.Td>
                  <Group gap={6}>
                    <Text size="sm" fw={600}>
                      {w.name}
                    </Text>
                    {w.isDefault && (
                      <Badge size="xs" variant="light">
                        default
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <Text size="sm" ff="monospace" title={w.address}>
                    {shortAddress(w.address, 6, 6)}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <EncryptedAtRestBadge encrypted={w.encryptedAtRest} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Radio.Group>
    </Table.ScrollContainer>
  );
}

function WalletDetails({ wallet }: { wallet: Wallet }) {
  const queryClient = useQueryClient();
  const network = useQuery({ queryKey: marketplaceKeys.network, queryFn: marketplaceApi.network });
  const balance = useQuery({
    queryKey: marketplaceKeys.balance(wallet.address),
    queryFn: () => marketplaceApi.balance(wallet.address),
  });
  const [amount, setAmount] = useState<number | string>(1);
  // The network an airdrop was asked on: its outcome is shown only while that network is the one used.
  const rpcUrl = network.data?.rpcUrl ?? '';
  const airdrop = useMutation({
    mutationFn: (_onNetwork: string) => marketplaceApi.airdrop(wallet.address, Number(amount)),
    onSuccess: (result) => queryClient.setQueryData(marketplaceKeys.balance(wallet.address), result.balance),
  });
  const airdropHere = airdrop.variables === rpcUrl;
  const availability = network.data?.airdrop;

  return (
    <Card withBorder padding="lg" aria-label="Wallet details">
      <Group justify="space-between" mb="xs">
        <CardTitle>{wallet.name}</CardTitle>
        <Tooltip label="Read the balance again">
          <Button
            size="compact-xs"
            variant="subtle"
            leftSection={<IconRefresh size={14} />}
            onClick={() => void balance.refetch()}
            loading={balance.isFetching}
          >
            Refresh
          </Button>
        </Tooltip>
      </Group>
      <Stack gap="sm">
        <div>
          <Text size="xs" c="dimmed">
            Address
          </Text>
          <CopyValue value={wallet.address} label="address" />
        </div>
        <div>
          <Text size="xs" c="dimmed">
            Balance
          </Text>
          {balance.isPending ? (
            <Text size="sm" c="dimmed">
              Reading…
            </Text>
          ) : balance.isError ? (
            <Text size="sm" c="red" role="alert">
              {errorMessage(balance.error)}
            </Text>
          ) : (
            <>
              <Text size="xl" fw={700} data-testid="wallet-balance">
                {formatSol(balance.data.sol)}
              </Text>
              <Text size="xs" c="dimmed">
                {balance.data.source === 'rpc'
                  ? `From ${maskRpcUrl(balance.data.rpcUrl ?? '')}`
                  : `The embedded ledger moves no real SOL: this is what the wallet received (${formatSol((balance.data.receivedLamports ?? 0) / 1e9)}) minus what it paid (${formatSol((balance.data.paidLamports ?? 0) / 1e9)}) through it.`}
              </Text>
            </>
          )}
        </div>
        <Group align="flex-end" gap="sm">
          <NumberInput
            label="Airdrop"
            suffix=" SOL"
            min={0.001}
            max={5}
            decimalScale={3}
            w={140}
            value={amount}
            onChange={setAmount}
            disabled={!availability?.available}
          />
          <Tooltip
            label={availability?.reason ?? ''}
            disabled={availability?.available !== false}
            multiline
            w={280}
          >
            <span>
              <Button
                variant="light"
                leftSection={<IconDroplet size={16} />}
                disabled={!availability?.available || !(Number(amount) > 0)}
                loading={airdrop.isPending}
                onClick={() => airdrop.mutate(rpcUrl)}
              >
                Request airdrop
              </Button>
            </span>
          </Tooltip>
        </Group>
        {availability && !availability.available && (
          <Text size="xs" c="dimmed" data-testid="airdrop-reason">
            {availability.reason}
          </Text>
        )}
        {airdropHere && airdrop.error && (
          <Alert color="red" variant="light" role="alert" title="No airdrop">
            {errorMessage(airdrop.error)}
          </Alert>
        )}
        {airdropHere && airdrop.data && (
          <Text size="xs" c="teal">
            Airdrop landed: {shortAddress(airdrop.data.signature, 8, 8)}
          </Text>
        )}
      </Stack>
    </Card>
  );
}

/** Picks a listing and who signs it, then opens the confirmation. */
function SignListingCard({
  wallets,
  browserWallet,
}: {
  wallets: Wallet[];
  browserWallet: ConnectedBrowserWallet | null;
}) {
  const api = useStudioApi();
  const [listingId] = useListingChoice();
  const listing = useQuery({
    queryKey: [...queryKeys.listings, 'one', listingId],
    queryFn: () => api.listings.get(listingId!),
    enabled: listingId !== null,
  });
  const [signing, setSigning] = useState(false);
  const creator = listing.data?.creatorWallet;
  const heldCreator = wallets.find((w) => w.address === creator);
  const options = useMemo(() => {
    const list: { value: string; label: string }[] = [];
    if (heldCreator) list.push({ value: 'studio', label: `KB Studio wallet · ${heldCreator.name}` });
    if (browserWallet) list.push({ value: 'browser', label: `${browserWallet.name} (browser)` });
    return list;
  }, [heldCreator, browserWallet]);
  const [signerChoice, setSignerChoice] = useState<string | null>(null);
  const choice = options.find((o) => o.value === signerChoice)?.value ?? options[0]?.value ?? null;

  const signer = useMemo<(() => Promise<TransactionSigner>) | undefined>(() => {
    if (choice === 'studio' && creator) {
      return async () => {
        const adapter = new StudioWalletAdapter({
          transport: createStudioWalletTransport({
            token: readStudioToken(),
            fetch: fetchWithStudioToken,
          }),
          address: creator,
        });
        await adapter.connect();
        return adapter;
      };
    }
    if (choice === 'browser' && browserWallet) return async () => browserWallet.signer;
    return undefined;
  }, [choice, creator, browserWallet]);

  return (
    <Card withBorder padding="lg" aria-label="Sign a listing">
      <CardTitle mb={4}>Sign create_listing</CardTitle>
      <Text size="sm" c="dimmed" mb="md">
        Puts a listing on the marketplace: its creator’s wallet signs the program’s create_listing instruction
        with the listing’s terms. You see exactly what is signed before anything is.
      </Text>
      <Stack gap="sm">
        <Group align="flex-end" gap="sm" wrap="wrap">
          <ListingPicker label="Listing" />
          <Select
            label="Sign with"
            data={options}
            value={choice}
            onChange={setSignerChoice}
            allowDeselect={false}
            w={280}
            placeholder="No wallet can sign this listing"
            disabled={options.length === 0}
          />
          <Button
            leftSection={<IconSignature size={16} />}
            disabled={!listing.data || !signer}
            onClick={() => setSigning(true)}
          >
            Review and sign…
          </Button>
        </Group>
        {listing.data && (
          <Text size="xs" c="dimmed">
            {listing.data.status === 'published'
              ? `Published${listing.data.pdaAddress ? ` at ${shortAddress(listing.data.pdaAddress, 6, 6)}` : ''}. Signing again records the current terms on the embedded ledger; on Solana it puts the listing on chain if it is not there yet, and sends and records nothing if it is.`
              : 'A draft: signing publishes it.'}{' '}
            Creator: {creator ? shortAddress(creator, 6, 6) : '—'}.
          </Text>
        )}
        {listing.data && options.length === 0 && (
          <Alert color="yellow" variant="light">
            This listing’s creator {creator} is not a wallet this studio holds, and no browser wallet with
            that address is connected, so nothing here can sign for it.
          </Alert>
        )}
        {listing.data && choice === 'browser' && browserWallet && browserWallet.address !== creator && (
          <Alert color="yellow" variant="light">
            {browserWallet.name} is connected as {shortAddress(browserWallet.address, 6, 6)}, not as this
            listing’s creator: the studio will refuse its signature.
          </Alert>
        )}
      </Stack>
      <SignListingModal
        listing={signing ? listing.data : undefined}
        signer={signer}
        onClose={() => setSigning(false)}
      />
    </Card>
  );
}
