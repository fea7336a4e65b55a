import { Group, Loader, Pagination, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconSearch } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { hasSearchableWord } from '../../../../shared/searchWords';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { ChunkCard } from '../ingest/ChunkCard';
import { listChunks, type DocumentSummary } from './documentsApi';

const PAGE_SIZE = 20;

/** The queries of one document's chunks (each search and page is one below it). */
export const chunksKey = (documentId: string) => ['documents', 'chunks', documentId] as const;

/** A document's chunks in order, searchable (full text) and paginated. */
export function ChunkList({ document }: { document: DocumentSummary }) {
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const [page, setPage] = useState(1);
  const offset = (page - 1) * PAGE_SIZE;
  const chunks = useQuery({
    queryKey: [...chunksKey(document.id), { q, offset }],
    // The search is kept with its result: while the next search loads, the previous result stays on
    // screen (keepPreviousData) and its count must not be labelled with the new search.
    queryFn: async () => ({
      q,
      ...(await listChunks(document.id, { q: q || undefined, limit: PAGE_SIZE, offset })),
    }),
    placeholderData: keepPreviousData,
  });
  const total = chunks.data?.pagination.total ?? 0;
  // Punctuation alone (`"`, `^`) has no word to look for: the server finds nothing, the page says why.
  const noWord = Boolean(chunks.data?.q) && !hasSearchableWord(chunks.data?.q ?? '');
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));

  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <TextInput
          aria-label="Search chunks"
          placeholder="Search this document’s chunks"
          leftSection={<IconSearch size={16} />}
          rightSection={chunks.isFetching && !chunks.isPending ? <Loader size={14} /> : undefined}
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            setPage(1);
          }}
          w={340}
        />
        {chunks.isSuccess && !noWord && (
          <Text size="sm" c="dimmed" aria-live="polite">
            {chunks.data.q
              ? `${total} matching ${total === 1 ? 'chunk' : 'chunks'}`
              : `${total} ${total === 1 ? 'chunk' : 'chunks'}`}
          </Text>
        )}
      </Group>
      {chunks.isPending ? (
        <LoadingState label="Loading chunks…" />
      ) : chunks.isError ? (
        <ErrorState
          title="Could not load the chunks"
          error={chunks.error}
          onRetry={() => void chunks.refetch()}
        />
      ) : chunks.data.data.length === 0 ? (
        <Text c="dimmed" size="sm" ta="center" py="xl">
          {noWord
            ? `“${chunks.data.q}” has no word to search for: type a word (letters or digits).`
            : chunks.data.q
              ? `No chunk of this document contains “${chunks.data.q}”.`
              : 'This document has no chunks.'}
        </Text>
      ) : (
        <Stack gap="xs" aria-label="Chunks">
          {chunks.data.data.map((chunk) => (
            <ChunkCard key={chunk.id} {...chunk} />
          ))}
        </Stack>
      )}
      {pages > 1 && <Pagination value={page} onChange={setPage} total={pages} size="sm" mx="auto" />}
    </Stack>
  );
}
