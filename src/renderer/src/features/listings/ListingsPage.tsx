import { Button, EmptyState, Group, Loader, Pagination, Text, TextInput } from '@mantine/core';
import { useDebouncedValue, useDisclosure } from '@mantine/hooks';
import { IconDatabase, IconPlus, IconSearch } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { Listing } from '../../../../shared/listings';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { announce } from '../../lib/announce';
import { focusWhenReady } from '../../lib/focus';
import { formatCount } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { studioJson } from '../../lib/studioFetch';
import { DeleteListingModal } from './DeleteListingModal';
import { ListingsTable } from './ListingsTable';
import { NewListingModal } from './NewListingModal';
import { PublishListingModal } from './PublishListingModal';

const PAGE_SIZE = 25;

export function ListingsPage() {
  const api = useStudioApi();
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const [page, setPage] = useState(1);
  const [creating, createModal] = useDisclosure(false);
  const [publishing, setPublishing] = useState<Listing>();
  // Kept while its dialog closes: the dialog stays mounted, so the focus returns to its Edit button.
  const [editing, setEditing] = useState<Listing>();
  const [editOpened, setEditOpened] = useState(false);
  const [deleting, setDeleting] = useState<Listing>();

  const offset = (page - 1) * PAGE_SIZE;
  const listings = useQuery({
    queryKey: [...queryKeys.listings, { q, offset }],
    queryFn: () => api.listings.list({ q: q || undefined, limit: PAGE_SIZE, offset }),
    placeholderData: keepPreviousData,
  });

  // Sizes come from the studio (the public listing has no size); the table waits for neither.
  const sizes = useQuery({
    queryKey: [...queryKeys.listings, 'sizes'],
    queryFn: () => studioJson<{ listingId: string; bytes: number }[]>('/knowledge-bases'),
  });
  const bytes = useMemo(
    () => (sizes.data ? new Map(sizes.data.map((s) => [s.listingId, s.bytes])) : undefined),
    [sizes.data],
  );

  const total = listings.data?.pagination.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));

  return (
    <>
      <PageHeader
        title="Listings"
        description="The knowledge bases on this machine, drafts included. A listing sets what buyers pay and how; publish it when its knowledge base is ready."
        actions={
          <Button leftSection={<IconPlus size={16} />} onClick={createModal.open}>
            New listing
          </Button>
        }
      />
      <Group mb="md" justify="space-between">
        <TextInput
          aria-label="Search listings"
          placeholder="Search title, description, domain, tags"
          leftSection={<IconSearch size={16} />}
          rightSection={listings.isFetching && !listings.isPending ? <Loader size={14} /> : undefined}
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            setPage(1);
          }}
          w={380}
        />
        {listings.isSuccess && total > 0 && (
          <Text size="sm" c="dimmed">
            {formatCount(total)} {total === 1 ? 'listing' : 'listings'}
          </Text>
        )}
      </Group>

      {listings.isPending ? (
        <LoadingState label="Loading listings…" />
      ) : listings.isError ? (
        <ErrorState
          title="Could not load the listings"
          error={listings.error}
          onRetry={() => void listings.refetch()}
        />
      ) : listings.data.data.length === 0 ? (
        q ? (
          <EmptyState
            mt={48}
            icon={<IconSearch size={28} />}
            withIndicatorBackground
            title="No matching listings"
            description={`Nothing matches “${q}”. Search looks at titles, descriptions, domains and tags.`}
          />
        ) : (
          <EmptyState
            mt={48}
            icon={<IconDatabase size={28} />}
            variant="light"
            title="No listings yet"
            description="Create a listing to describe a knowledge base and set its price. It stays a private draft until you publish it."
          >
            <EmptyState.Actions>
              <Button leftSection={<IconPlus size={16} />} onClick={createModal.open}>
                New listing
              </Button>
            </EmptyState.Actions>
          </EmptyState>
        )
      ) : (
        <>
          <ListingsTable
            listings={listings.data.data}
            onPublish={setPublishing}
            onEdit={(listing) => {
              setEditing(listing);
              setEditOpened(true);
            }}
            onDelete={setDeleting}
            sizes={bytes}
          />
          {pages > 1 && (
            <Group justify="flex-end" mt="md">
              <Pagination total={pages} value={page} onChange={setPage} size="sm" />
            </Group>
          )}
        </>
      )}

      <NewListingModal
        opened={creating}
        onClose={createModal.close}
        onCreated={() => {
          setSearch('');
          setPage(1);
        }}
      />
      <NewListingModal opened={editOpened} listing={editing} onClose={() => setEditOpened(false)} />
      <PublishListingModal listing={publishing} onClose={() => setPublishing(undefined)} />
      <DeleteListingModal
        listing={deleting}
        onClose={() => setDeleting(undefined)}
        onDeleted={(listing) => {
          announce(`Listing ${listing.title} deleted.`);
          // Its row and Delete button are gone: the table takes the focus (the page's title once empty).
          focusWhenReady(
            () =>
              document.querySelector<HTMLElement>('[data-listings-table]') ??
              document.querySelector<HTMLElement>('[data-page-title]'),
          );
        }}
      />
    </>
  );
}
