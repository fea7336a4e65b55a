import { Button, Group, Input, Loader, Pagination, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconSearch } from '@tabler/icons-react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { hasSearchableWord } from '../../../../shared/searchWords';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { focusWhenReady } from '../../lib/focus';
import { formatCount } from '../../lib/format';
import { ChunkCard } from '../ingest/ChunkCard';
import { CHUNK_PAGE_SIZE, chunkCountLabel, chunkNumberOf, pageOfChunk } from './chunkPages';
import { listChunks } from './documentsApi';

/** The queries of one document's chunks (each search and page is one below it). */
export const chunksKey = (documentId: string) => ['documents', 'chunks', documentId] as const;

/**
 * A document's chunks in order, searchable (full text) and paginated; "Go to chunk" opens the page of a
 * chunk number and puts the focus on that chunk.
 */
export function ChunkList({ documentId }: { documentId: string }) {
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const [page, setPage] = useState(1);
  const offset = (page - 1) * CHUNK_PAGE_SIZE;
  const chunks = useQuery({
    queryKey: [...chunksKey(documentId), { q, offset }],
    // The search is kept with its result: while the next search loads, the previous result stays on
    // screen (keepPreviousData) and its count must not be labelled with the new search.
    queryFn: async () => ({
      q,
      ...(await listChunks(documentId, { q: q || undefined, limit: CHUNK_PAGE_SIZE, offset })),
    }),
    placeholderData: keepPreviousData,
  });
  const total = chunks.data?.pagination.total ?? 0;
  // A search's matches are counted up to a bound (10,000): past it, "10,000+" and as many pages.
  const atLeast = chunks.data?.pagination.totalRelation === 'gte';
  // Punctuation alone (`"`, `^`) has no word to look for: the server finds nothing, the page says why.
  const noWord = Boolean(chunks.data?.q) && !hasSearchableWord(chunks.data?.q ?? '');
  const pages = Math.max(1, Math.ceil(total / CHUNK_PAGE_SIZE));
  const searching = Boolean(chunks.data?.q);

  // The chunk "Go to chunk" asked for, and whether it still has to take the focus (once its page is on
  // screen; not again when the creator comes back to that page).
  const [wanted, setWanted] = useState<number>();
  const focusPending = useRef(false);
  const list = useRef<HTMLDivElement>(null);
  const shown = chunks.isPlaceholderData ? undefined : chunks.data;
  const focusChunk = (chunk: number) =>
    focusWhenReady(() => list.current?.querySelector<HTMLElement>(`[aria-label="Chunk ${chunk}"]`));
  useEffect(() => {
    if (!focusPending.current || wanted === undefined) return;
    if (!shown?.data.some((c) => c.index + 1 === wanted)) return;
    focusPending.current = false;
    return focusChunk(wanted);
  }, [wanted, shown]);
  const goTo = (chunk: number) => {
    setWanted(chunk);
    setPage(pageOfChunk(chunk));
    if (shown?.data.some((c) => c.index + 1 === chunk)) focusChunk(chunk);
    else focusPending.current = true;
  };

  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-start">
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
          // Narrower below 1408 px, so the count and "Go to chunk" stay on its line at 1280.
          w={{ base: '100%', sm: 260, xl: 340 }}
        />
        <Group gap="md" align="flex-start">
          {chunks.isSuccess && !noWord && (
            <Text size="sm" c="dimmed" aria-live="polite" mt={6}>
              {chunkCountLabel(total, { search: searching, atLeast })}
            </Text>
          )}
          {chunks.isSuccess && !searching && pages > 1 && <GoToChunk total={total} onGo={goTo} />}
        </Group>
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
        <Stack gap="xs" aria-label="Chunks" ref={list}>
          {chunks.data.data.map((chunk) => (
            <ChunkCard key={chunk.id} {...chunk} focusTarget={chunk.index + 1 === wanted} />
          ))}
        </Stack>
      )}
      {atLeast && page === pages && (
        <Text size="sm" c="dimmed" ta="center">
          The first {formatCount(total)} matches are paged: add a word to narrow the search.
        </Text>
      )}
      {pages > 1 && (
        <Pagination
          value={page}
          onChange={setPage}
          total={pages}
          size="sm"
          mx="auto"
          getItemProps={(n) => ({ children: formatCount(n) })}
        />
      )}
    </Stack>
  );
}

/**
 * "Go to chunk": a chunk number from 1 to `total`, refused with a message otherwise. Its label stays in
 * view beside the field (a placeholder goes once something is typed), and the refusal runs under the
 * whole line rather than down the narrow field.
 */
function GoToChunk({ total, onGo }: { total: number; onGo: (chunk: number) => void }) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string>();
  const id = useId();
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const outcome = chunkNumberOf(typed, total);
        if ('error' in outcome) {
          setError(outcome.error);
          return;
        }
        setError(undefined);
        onGo(outcome.chunk);
      }}
    >
      {/* The wrapper ties the message to the field (aria-describedby); the label is ours, on the line. */}
      <Input.Wrapper id={id} error={error} inputWrapperOrder={['input', 'error']}>
        <Group gap={8} align="flex-start" wrap="nowrap">
          {/* As tall as a size-sm field (2.25rem): the words stay on its line when a refusal shows. */}
          <Text
            component="label"
            htmlFor={id}
            size="sm"
            fw={500}
            lh="2.25rem"
            style={{ whiteSpace: 'nowrap' }}
          >
            Go to chunk
          </Text>
          <Input
            id={id}
            placeholder={`1–${formatCount(total)}`}
            inputMode="numeric"
            autoComplete="off"
            value={typed}
            onChange={(e) => {
              setTyped(e.currentTarget.value);
              setError(undefined);
            }}
            error={Boolean(error)}
            w={112}
            size="sm"
          />
          <Button type="submit" variant="default" size="sm">
            Go
          </Button>
        </Group>
      </Input.Wrapper>
    </form>
  );
}
