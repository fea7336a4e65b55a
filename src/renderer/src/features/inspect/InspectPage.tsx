import {
  Alert,
  Badge,
  Button,
  Card,
  Divider,
  EmptyState,
  Grid,
  Group,
  NavLink,
  ScrollArea,
  Stack,
  Text,
  TextInput,
  Tooltip,
} from '@mantine/core';
import { IconFileImport, IconFilter, IconFiles, IconRefresh, IconTrash } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { memo, useDeferredValue, useEffect, useMemo, useRef, useState, type Ref } from 'react';
import { ConfirmDeleteModal } from '../../components/ConfirmDeleteModal';
import { CardTitle } from '../../components/CardTitle';
import { NoListingState } from '../../components/NoListingState';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { announce } from '../../lib/announce';
import { focusWhenReady } from '../../lib/focus';
import { counted } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { sectionHref } from '../../lib/sections';
import { StudioApiError } from '../../lib/studioApi';
import { ListingPicker, usePickerListings } from '../ingest/ListingPicker';
import { ChunkList, chunksKey } from './ChunkList';
import { formatSize } from '../ingest/formatSize';
import {
  deleteDocument,
  documentKey,
  getDocument,
  listDocuments,
  type DocumentListItem,
  type DocumentSummary,
} from './documentsApi';
import { DOCUMENT_ROWS, documentRows, filterDocuments, missingListingNotice } from './inspectAddress';
import { csvRowsOfDocument, requiredColumnsLabel } from './reingest';
import { ReingestModal } from './ReingestModal';
import { useInspectAddress, useInspectChoice } from './useInspectChoice';

export function InspectPage() {
  // The picker's listings (one query with it): the listing shown is checked against them first.
  const listings = usePickerListings();
  // By source, in the address: a re-ingested document is a new document under the same name.
  const { listingId, wantedSource, chooseDocument, addressVersion, missingListing, dismissMissingListing } =
    useInspectChoice(listings.data?.data);
  const [filter, setFilter] = useState('');
  // The list follows the filter a step behind the field, so typing stays quick with thousands of names.
  const deferredFilter = useDeferredValue(filter);
  const [rowLimit, setRowLimit] = useState(DOCUMENT_ROWS);
  const [filterOfRows, setFilterOfRows] = useState(deferredFilter);
  if (filterOfRows !== deferredFilter) {
    setFilterOfRows(deferredFilter);
    setRowLimit(DOCUMENT_ROWS);
  }
  // "'report.pdf' was already deleted": a deletion that found the document gone (another window).
  const [notice, setNotice] = useState<string>();
  const [noticeListing, setNoticeListing] = useState(listingId);
  if (noticeListing !== listingId) {
    setNoticeListing(listingId);
    setNotice(undefined);
  }
  const [confirming, setConfirming] = useState<DocumentListItem>();
  // Once a document is deleted the focus goes to the list's heading, not back to Delete: that button
  // now deletes the next document, which one more Enter would do without a word.
  const [deleted, setDeleted] = useState(false);
  const documentsHeading = useRef<HTMLHeadingElement>(null);
  // Kept while its dialog closes: the dialog stays mounted, so the focus returns to Re-ingest.
  const [reingesting, setReingesting] = useState<DocumentSummary>();
  const [reingestOpened, setReingestOpened] = useState(false);
  const queryClient = useQueryClient();
  const documentsKey = ['documents', listingId] as const;
  // The list names every document (slim: 30,000 of them are 3.7 MB); the one shown is read whole below.
  const documents = useQuery({
    queryKey: documentsKey,
    queryFn: () => listDocuments(listingId!),
    enabled: Boolean(listingId),
  });

  const all = useMemo(() => documents.data ?? [], [documents.data]);
  const shown = useMemo(() => filterDocuments(all, deferredFilter), [all, deferredFilter]);
  const selected = all.find((d) => d.source === wantedSource) ?? shown[0];
  const { rows, beyond } = useMemo(
    () => documentRows(shown, rowLimit, selected),
    [shown, rowLimit, selected],
  );
  useInspectAddress({
    listingId,
    loaded: documents.isSuccess,
    source: selected?.source ?? null,
    addressVersion,
  });
  // Its metadata (chunking, CSV columns) and whether its original file was kept, for this one only.
  const detail = useQuery({
    queryKey: documentKey(selected?.id ?? ''),
    queryFn: () => getDocument(selected!.id),
    enabled: Boolean(selected),
  });
  const whole = detail.data;
  const sourceKept = whole?.sourceKept === true;

  // After a deletion, the document now selected is scrolled into the list's view.
  const revealSelected = useRef(false);
  const selectedLink = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!revealSelected.current || !selectedLink.current) return;
    revealSelected.current = false;
    selectedLink.current.scrollIntoView({ block: 'nearest' });
  }, [selected?.id]);

  /**
   * The queries of a document that no longer exists are dropped, never refetched (the server would
   * answer 404): only the list is asked again, not everything under ['documents'].
   */
  const dropQueries = (doc: Pick<DocumentListItem, 'id'>) => {
    for (const queryKey of [chunksKey(doc.id), documentKey(doc.id)]) {
      void queryClient.cancelQueries({ queryKey });
      queryClient.removeQueries({ queryKey });
    }
  };

  /** A document gone (deleted here, or found already deleted): out of the list, its neighbour shown. */
  const forget = (doc: DocumentListItem) => {
    setConfirming(undefined);
    setDeleted(true);
    // The list's heading, or the page's when that was the last document.
    focusWhenReady(
      () => documentsHeading.current ?? document.querySelector<HTMLElement>('[data-page-title]'),
    );
    // The next document of the list takes its place (the previous one at the end), in view where
    // the list was scrolled: not the first document, far from where the creator was.
    const at = shown.findIndex((d) => d.id === doc.id);
    const neighbour = at === -1 ? undefined : (shown[at + 1] ?? shown[at - 1]);
    chooseDocument(neighbour?.source);
    revealSelected.current = true;
    // Out of the list at once, so its chunk list is unmounted before anything could ask for it.
    queryClient.setQueryData<DocumentListItem[]>(documentsKey, (docs) =>
      docs?.filter((d) => d.id !== doc.id),
    );
    dropQueries(doc);
    void queryClient.invalidateQueries({ queryKey: documentsKey, exact: true });
    void queryClient.invalidateQueries({ queryKey: queryKeys.listings });
  };

  const remove = useMutation({
    mutationFn: (doc: DocumentListItem) => deleteDocument(doc.id),
    onMutate: () => setNotice(undefined),
    onSuccess: (_result, doc) => {
      forget(doc);
      announce(`${doc.source} deleted.`);
    },
    // Deleted elsewhere (another window, the CLI): what the creator wanted is done. The server names
    // the document by its id; the creator knows it by its file.
    onError: (error, doc) => {
      if (!isGone(error)) return;
      forget(doc);
      setNotice(`'${doc.source}' was already deleted.`);
      announce(`${doc.source} was already deleted.`);
    },
  });

  /** A re-ingested document is stored anew under a new id (unless unchanged): the view follows its name. */
  const reingested = async (doc: DocumentSummary) => {
    chooseDocument(doc.source);
    void queryClient.invalidateQueries({ queryKey: queryKeys.listings });
    await queryClient.invalidateQueries({ queryKey: documentsKey, exact: true });
    const docs = queryClient.getQueryData<DocumentListItem[]>(documentsKey);
    if (!docs?.some((d) => d.id === doc.id)) dropQueries(doc);
    else void queryClient.invalidateQueries({ queryKey: documentKey(doc.id) });
  };

  return (
    <>
      <PageHeader
        title="Inspect"
        description="Browse the documents of a knowledge base and the chunks they were cut into: each chunk’s text, token count and source metadata (page, row, headings, front matter, CSV columns)."
        actions={<ListingPicker />}
      />
      {missingListing && (
        <Alert
          role="status"
          variant="light"
          color="yellow"
          mb="md"
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={dismissMissingListing}
        >
          {missingListingNotice(missingListing)}
        </Alert>
      )}
      {notice && (
        <Alert
          role="status"
          variant="light"
          color="blue"
          mb="md"
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setNotice(undefined)}
        >
          {notice} The list shows the documents as they are now.
        </Alert>
      )}
      {listings.isPending ? (
        <LoadingState label="Loading listings…" />
      ) : listings.isError ? (
        <ErrorState
          title="Could not load the listings"
          error={listings.error}
          onRetry={() => void listings.refetch()}
        />
      ) : listings.data.data.length === 0 ? (
        <NoListingState what="Inspect shows the documents and chunks of a listing’s knowledge base." />
      ) : !listingId || documents.isPending ? (
        <LoadingState label="Loading documents…" />
      ) : documents.isError ? (
        <ErrorState
          title="Could not load the documents"
          error={documents.error}
          onRetry={() => void documents.refetch()}
        />
      ) : all.length === 0 ? (
        <EmptyState
          mt={48}
          icon={<IconFiles size={28} />}
          withIndicatorBackground
          title="This knowledge base is empty"
          description="Ingest documents to see how they are chunked."
        >
          <Button
            component="a"
            href={sectionHref('ingest')}
            leftSection={<IconFileImport size={16} />}
            mt="md"
          >
            Go to Ingest
          </Button>
        </EmptyState>
      ) : (
        <Grid gap="lg">
          <Grid.Col span={{ base: 12, md: 4, xl: 3 }}>
            <Card withBorder radius="md" p="sm">
              <Stack gap="xs">
                <CardTitle size="sm" ref={documentsHeading} tabIndex={-1} className="kb-focus-target" px={4}>
                  Documents
                </CardTitle>
                <TextInput
                  aria-label="Filter documents"
                  placeholder="Filter documents"
                  leftSection={<IconFilter size={16} />}
                  value={filter}
                  onChange={(e) => setFilter(e.currentTarget.value)}
                  size="sm"
                />
                {shown.length > rows.length && (
                  <Text size="xs" c="dimmed" aria-live="polite">
                    Showing {rows.length.toLocaleString('en-US')} of {shown.length.toLocaleString('en-US')}
                    {deferredFilter.trim() ? ' matching' : ''} documents — type to narrow.
                  </Text>
                )}
                <ScrollArea.Autosize mah="calc(100vh - 260px)" type="auto">
                  <DocumentNav
                    rows={rows}
                    beyond={beyond}
                    selectedId={selected?.id}
                    selectedLink={selectedLink}
                    onSelect={chooseDocument}
                  />
                  {shown.length === 0 && (
                    <Text size="sm" c="dimmed" p="xs">
                      No document name contains “{deferredFilter}”.
                    </Text>
                  )}
                  {shown.length > rows.length && (
                    <Button
                      variant="subtle"
                      size="compact-xs"
                      m="xs"
                      onClick={() => setRowLimit((n) => n + DOCUMENT_ROWS)}
                    >
                      Show {Math.min(DOCUMENT_ROWS, shown.length - rows.length).toLocaleString('en-US')} more
                    </Button>
                  )}
                </ScrollArea.Autosize>
              </Stack>
            </Card>
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 8, xl: 9 }}>
            {selected && (
              <Stack gap="md">
                <Card withBorder radius="md" p="md">
                  <Group justify="space-between" wrap="nowrap" align="flex-start">
                    <div style={{ minWidth: 0 }}>
                      <CardTitle style={{ overflowWrap: 'anywhere' }}>{selected.source}</CardTitle>
                      <Group gap="xs" mt={4}>
                        <Badge variant="light">{selected.format}</Badge>
                        <Text size="xs" c="dimmed">
                          {[
                            itemsOf(selected),
                            counted(selected.chunkCount, 'chunk'),
                            whole && formatSize(whole.bytes),
                            whole && chunkingOf(whole),
                          ]
                            .filter(Boolean)
                            .join(' · ')}
                        </Text>
                      </Group>
                      {whole?.sourceKept === false && (
                        <Text size="xs" c="dimmed" mt={6}>
                          Ingested before the studio kept original files: to re-ingest it, drop the file again
                          on Ingest.
                        </Text>
                      )}
                    </div>
                    <Group gap="xs" wrap="nowrap">
                      <Tooltip
                        label="The original file was not kept: drop it again on Ingest"
                        disabled={whole?.sourceKept !== false}
                      >
                        <Button
                          variant="light"
                          size="xs"
                          leftSection={<IconRefresh size={14} />}
                          // data-disabled, not disabled: a disabled button gets no hover, so no tooltip.
                          onClick={() => {
                            if (!whole || !sourceKept) return;
                            setReingesting(whole);
                            setReingestOpened(true);
                          }}
                          // Until the document is read whole, too: the dialog starts from its settings.
                          data-disabled={!sourceKept || undefined}
                          aria-disabled={!sourceKept || undefined}
                          aria-label={`Re-ingest ${selected.source}`}
                        >
                          Re-ingest
                        </Button>
                      </Tooltip>
                      <Button
                        variant="light"
                        color="red"
                        size="xs"
                        leftSection={<IconTrash size={14} />}
                        onClick={() => {
                          setDeleted(false);
                          setConfirming(selected);
                        }}
                        aria-label={`Delete ${selected.source}`}
                      >
                        Delete
                      </Button>
                    </Group>
                  </Group>
                  {detail.isError && (
                    <ErrorState
                      title="Could not load this document"
                      error={detail.error}
                      onRetry={() => void detail.refetch()}
                    />
                  )}
                </Card>
                <ChunkList key={selected.id} documentId={selected.id} />
              </Stack>
            )}
          </Grid.Col>
        </Grid>
      )}
      <ReingestModal
        opened={reingestOpened}
        document={reingesting}
        onClose={() => setReingestOpened(false)}
        onFinished={() => {
          if (reingesting) void reingested(reingesting);
        }}
      />
      <ConfirmDeleteModal
        opened={Boolean(confirming)}
        title="Delete document"
        confirmLabel="Delete document"
        pending={remove.isPending}
        returnFocus={!deleted}
        error={isGone(remove.error) ? null : remove.error}
        onConfirm={() => confirming && remove.mutate(confirming)}
        onClose={() => {
          setConfirming(undefined);
          // A refusal belongs to that attempt: the next dialog opens without it.
          remove.reset();
        }}
      >
        Delete <b>{confirming?.source}</b>
        {confirming && itemsOf(confirming) && ` (${itemsOf(confirming)})`} and its{' '}
        {counted(confirming?.chunkCount ?? 0, 'chunk')} from the knowledge base? Buyers stop finding them at
        once. This cannot be undone.
      </ConfirmDeleteModal>
    </>
  );
}

/** The document no longer exists: the server answered 404. */
function isGone(error: unknown): boolean {
  return error instanceof StudioApiError && error.status === 404;
}

/**
 * The document list's rows, drawn again only when they change (not at each keystroke in the filter):
 * `beyond` is the selected document when it lies past the rows drawn.
 */
const DocumentNav = memo(function DocumentNav({
  rows,
  beyond,
  selectedId,
  selectedLink,
  onSelect,
}: {
  rows: DocumentListItem[];
  beyond: DocumentListItem | undefined;
  selectedId: string | undefined;
  selectedLink: Ref<HTMLButtonElement>;
  onSelect: (source: string) => void;
}) {
  const row = (doc: DocumentListItem) => (
    <NavLink
      key={doc.id}
      component="button"
      active={doc.id === selectedId}
      ref={doc.id === selectedId ? selectedLink : undefined}
      onClick={() => onSelect(doc.source)}
      label={
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          {doc.source}
        </Text>
      }
      description={[doc.format.toUpperCase(), itemsOf(doc), counted(doc.chunkCount, 'chunk')]
        .filter(Boolean)
        .join(' · ')}
      variant="light"
      style={{ borderRadius: 'var(--mantine-radius-sm)' }}
    />
  );
  return (
    <Stack gap={2} component="nav" aria-label="Documents">
      {rows.map(row)}
      {beyond && (
        <>
          <Divider label="Selected" labelPosition="left" my={4} />
          {row(beyond)}
        </>
      )}
    </Stack>
  );
});

/**
 * "200 documents": a JSON array file, each of whose items is one document for the API (spec §2). The
 * studio keeps, re-ingests and deletes the file as a whole. Undefined for any other file.
 */
function itemsOf(doc: Pick<DocumentListItem, 'format' | 'documentCount'>): string | undefined {
  return doc.format === 'json' && doc.documentCount !== 1
    ? counted(doc.documentCount, 'document')
    : undefined;
}

/** "recursive, 512 tokens, 64 overlap", and a CSV document's required columns (which Re-ingest keeps). */
function chunkingOf(doc: DocumentSummary): string {
  const c = doc.metadata.chunking as
    { strategy?: string; chunkSize?: number; chunkOverlap?: number } | undefined;
  if (!c?.strategy) return 'pre-built embeddings';
  const rows = csvRowsOfDocument(doc);
  return `${c.strategy}, ${c.chunkSize} tokens, ${c.chunkOverlap} overlap${rows ? `, ${requiredColumnsLabel(rows)}` : ''}`;
}
