import { Alert, Badge, Button, Group, Loader, Modal, Stack, Table, Text } from '@mantine/core';
import { IconCircleCheck, IconSignature } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { Listing } from '../../../../shared/listings';
import type { ListingTransactionSummary, SubmittedListingTransaction } from '../../../../shared/studio';
import { CopyValue } from '../../components/CopyValue';
import { ACCESS_MODEL_LABELS, formatSol } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import { signAndSubmitListing, type TransactionSigner } from '../../lib/wallet/signListing';
import { EmptyKnowledgeBaseAlert } from '../listings/EmptyKnowledgeBaseAlert';

/**
 * The explicit confirmation before a wallet signs create_listing: every field the signature covers,
 * then the listing PDA and the transaction signature once the studio has verified and recorded it.
 */
export function SignListingModal({
  listing,
  signer,
  onClose,
}: {
  listing: Listing | undefined;
  signer: (() => Promise<TransactionSigner>) | undefined;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const opened = listing !== undefined;
  const prepared = useQuery({
    queryKey: ['create-listing-transaction', listing?.id, listing?.updatedAt],
    queryFn: () => marketplaceApi.prepareListingTransaction(listing!.id),
    enabled: opened,
    staleTime: 0,
    gcTime: 0,
  });
  const sign = useMutation({
    mutationFn: async () =>
      signAndSubmitListing(await signer!(), prepared.data!, (signed) =>
        marketplaceApi.submitListingTransaction(listing!.id, signed),
      ),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.listings });
      await queryClient.invalidateQueries({ queryKey: marketplaceKeys.publicListing(listing!.id) });
      await queryClient.invalidateQueries({ queryKey: ['balance'] });
    },
  });

  function close() {
    sign.reset();
    onClose();
  }

  return (
    <Modal
      opened={opened}
      onClose={close}
      title={sign.data ? 'Listing signed' : 'Confirm: sign create_listing'}
      size="xl"
      centered
      closeOnClickOutside={!sign.isPending}
    >
      {sign.data ? (
        <Signed result={sign.data} onDone={close} />
      ) : prepared.isPending ? (
        <Group gap="sm" py="lg" justify="center">
          <Loader size="sm" />
          <Text size="sm" c="dimmed">
            Building the transaction…
          </Text>
        </Group>
      ) : prepared.isError ? (
        <Alert color="red" variant="light" title="Could not build the transaction" role="alert">
          {errorMessage(prepared.error)}
        </Alert>
      ) : (
        <Stack gap="md">
          <Text size="sm">
            Your wallet signs this transaction. It puts <b>{listing?.title}</b> on the marketplace with these
            terms, which buyers then agree to when they buy access.
          </Text>
          <SummaryTable summary={prepared.data.summary} />
          {listing && <EmptyKnowledgeBaseAlert listing={listing} />}
          {sign.error && (
            <Alert color="red" variant="light" title="Not signed" role="alert">
              {errorMessage(sign.error)}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close} disabled={sign.isPending}>
              Cancel
            </Button>
            <Button
              leftSection={<IconSignature size={16} />}
              loading={sign.isPending}
              disabled={!signer}
              onClick={() => sign.mutate()}
            >
              Sign and publish
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}

function SummaryTable({ summary }: { summary: ListingTransactionSummary }) {
  const rows: [string, ReactNode][] = [
    ['Program', <CopyValue key="p" value={summary.programId} label="program ID" />],
    ['Instruction', <code key="i">{summary.instruction}</code>],
    ['Listing', <code key="l">{summary.listingId}</code>],
    ['Listing PDA', <CopyValue key="pda" value={summary.listingPda} label="listing PDA" />],
    ['Access model', ACCESS_MODEL_LABELS[summary.accessModel]],
    [
      'Price',
      <span key="price" data-testid="sign-price">
        {formatSol(summary.price)} = {summary.priceLamports.toLocaleString('en-US')} lamports
        {summary.accessModel === 'per_query'
          ? ' per query'
          : summary.accessModel === 'subscription'
            ? ' per period'
            : ''}
      </span>,
    ],
    ...(summary.accessModel === 'subscription'
      ? ([['Period', `${summary.subscriptionDays} days`]] as [string, ReactNode][])
      : []),
    ['Fee payer', <CopyValue key="fp" value={summary.feePayer} label="fee payer" />],
    ['Recent blockhash', <CopyValue key="bh" value={summary.recentBlockhash} label="blockhash" />],
    [
      'Goes to',
      summary.ledger === 'solana'
        ? 'The Solana cluster (the fee payer pays the fee and the listing account’s rent)'
        : 'The embedded ledger (no SOL moves; the signature is verified and recorded)',
    ],
  ];
  return (
    <Stack gap="xs">
      <Table withTableBorder withColumnBorders={false} verticalSpacing={6} aria-label="What is signed">
        <Table.Tbody>
          {rows.map(([label, value]) => (
            <Table.Tr key={label}>
              <Table.Th w={150} fz="xs" c="dimmed" fw={600}>
                {label}
              </Table.Th>
              <Table.Td fz="sm">{value}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Text size="xs" fw={600} c="dimmed">
        Accounts
      </Text>
      <Table withTableBorder verticalSpacing={4} fz="xs" aria-label="Accounts">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Address</Table.Th>
            <Table.Th>Access</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {summary.accounts.map((account) => (
            <Table.Tr key={account.name}>
              <Table.Td>
                <code>{account.name}</code>
              </Table.Td>
              <Table.Td>
                <Text size="xs" ff="monospace">
                  {account.address}
                </Text>
              </Table.Td>
              <Table.Td>
                <Group gap={4}>
                  {account.signer && (
                    <Badge size="xs" variant="light" color="indigo">
                      signer
                    </Badge>
                  )}
                  {account.writable && (
                    <Badge size="xs" variant="light" color="orange">
                      writable
                    </Badge>
                  )}
                  {!account.signer && !account.writable && (
                    <Badge size="xs" variant="light" color="gray">
                      read-only
                    </Badge>
                  )}
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function Signed({ result, onDone }: { result: SubmittedListingTransaction; onDone: () => void }) {
  return (
    <Stack gap="md">
      <Alert color="teal" variant="light" icon={<IconCircleCheck size={18} />} title="Published">
        {result.listing.title} is on the marketplace. Buyers can find it and buy access on these terms.
      </Alert>
      <div>
        <Text size="xs" c="dimmed">
          Listing PDA
        </Text>
        <div data-testid="signed-pda">
          <CopyValue value={result.pdaAddress} label="listing PDA" />
        </div>
      </div>
      <div>
        <Text size="xs" c="dimmed">
          Transaction signature
        </Text>
        <div data-testid="signed-signature">
          <CopyValue value={result.signature} label="transaction signature" />
        </div>
      </div>
      <Group justify="flex-end">
        <Button onClick={onDone}>Done</Button>
      </Group>
    </Stack>
  );
}
