import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  CopyButton,
  Grid,
  Group,
  Highlight,
  Input,
  Kbd,
  NumberInput,
  Progress,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Tabs,
  Text,
  Textarea,
} from '@mantine/core';
import { IconLock, IconPlayerPlay, IconSearch } from '@tabler/icons-react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import { KnowledgeClient, type Chunk } from '../../../../client';
import type { RetrievalMode } from '../../../../shared/retrieval';
import { CardTitle } from '../../components/CardTitle';
import { NoListingState } from '../../components/NoListingState';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { counted } from '../../lib/format';
import { focusFirstInvalid } from '../../lib/focus';
import { createSessionDraft, readDraft, useSessionDraft, writeDraft } from '../../lib/sessionDraft';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import { usePickerListings } from '../ingest/ListingPicker';
import { listingSelectProps } from '../ingest/listingOptions';
import { describeFailure } from './actingAs';
import { actingAsChoice, actingAsName } from './actingAsOptions';
import { FilterEditor } from './FilterEditor';
import { buildFilters, type FilterRow } from './filterRows';
import { clientCodeOf, curlOf, queryTerms, type PlaygroundRequest } from './requestCode';
import { checkMinScore, checkTopK, runRefusal } from './runFields';
import { usePlaygroundChoice } from './usePlaygroundChoice';

interface RunState {
  status: 'idle' | 'running' | 'done' | 'error';
  /** The listing and buyer it was asked as: results of another choice are not shown as this one's. */
  scope?: string;
  request?: PlaygroundRequest;
  /** Whether it was asked as a stream: its badge and request code say how it ran, not how the next will. */
  stream?: boolean;
  chunks: Chunk[];
  latencyMs?: number;
  queryId?: string;
  error?: unknown;
}

const MODES: { value: RetrievalMode; label: string }[] = [
  { value: 'hybrid', label: 'Hybrid' },
  { value: 'dense', label: 'Dense' },
  { value: 'lexical', label: 'Lexical' },
];

const IDLE_RUN: RunState = { status: 'idle', chunks: [] };

/** The form as its fields hold it (numbers as typed: a cleared field stays empty while the user types). */
interface PlaygroundForm {
  query: string;
  topK: number | string;
  minScore: number | string;
  mode: RetrievalMode;
  rows: FilterRow[];
  stream: boolean;
}

const EMPTY_FORM: PlaygroundForm = {
  query: '',
  topK: 5,
  minScore: 0,
  mode: 'hybrid',
  rows: [],
  stream: false,
};

// Kept per listing while the page is open: going to another section and back finds the form as it was
// and the last results. A listing not queried yet starts from the form last used on another.
const forms = createSessionDraft(EMPTY_FORM, { carryOver: true });
const lastRuns = createSessionDraft(IDLE_RUN);

const apiBase = () => `${window.location.origin}/v1`;

export function PlaygroundPage() {
  const queryClient = useQueryClient();
  // Every listing, as the other pages' pickers offer (not only the 100 newest).
  const listings = usePickerListings();
  // The listing the other views work on (or the one the address names), and, acting as a test buyer,
  // the buyer's wallet: the key is scoped to it, so /v1 answers as it would them.
  const { listingId, actingAs, chooseListing, chooseActingAs } = usePlaygroundChoice(listings.data?.data);
  const listing = listings.data?.data.find((l) => l.id === listingId);
  const buyers = useQuery({
    queryKey: marketplaceKeys.buyers(listingId),
    queryFn: () => marketplaceApi.buyers(listingId!),
    enabled: listingId !== null,
  });
  const actingAsField = actingAsChoice(buyers.data, actingAs, listing?.creatorWallet);
  const key = useQuery({
    queryKey: ['playground-key', listingId, actingAs],
    queryFn: () => marketplaceApi.playgroundKey(listingId!, actingAs ?? undefined),
    enabled: listingId !== null,
    staleTime: Infinity,
  });

  const [form, setForm] = useSessionDraft(forms, listingId);
  const set = <K extends keyof PlaygroundForm>(field: K, value: PlaygroundForm[K]) =>
    setForm((current) => ({ ...current, [field]: value }));
  const { query, topK: topKInput, minScore: minScoreInput, mode, rows, stream } = form;
  // Never clamped behind the creator's back: a value out of range is marked and the query not run.
  const topKCheck = checkTopK(topKInput);
  const minScoreCheck = checkMinScore(minScoreInput);
  const topK = topKCheck.value;
  const minScore = minScoreCheck.value;
  const [run] = useSessionDraft(lastRuns, listingId);
  const abort = useRef<AbortController | null>(null);
  const formElement = useRef<HTMLFormElement>(null);
  const built = useMemo(() => buildFilters(rows), [rows]);
  const refusal = runRefusal({
    topK: topKCheck,
    minScore: minScoreCheck,
    filtersValid: Object.keys(built.errors).length === 0,
  });

  // Results (or an error) belong to the listing and buyer they were asked as: another choice does not
  // show them, and stops a query still running, rather than leaving it to finish under the new choice.
  // Leaving the page stops it too; finished results stay with their listing for its next visit.
  const scope = listingId === null ? undefined : `${listingId} ${actingAs ?? ''}`;
  const shownRun = run.scope === scope ? run : IDLE_RUN;
  useEffect(
    () => () => {
      abort.current?.abort();
      if (readDraft(lastRuns, listingId).status === 'running') writeDraft(lastRuns, listingId, IDLE_RUN);
    },
    [scope, listingId],
  );

  const ready = Boolean(listingId && key.data && query.trim());

  const start = async () => {
    if (!ready || !listingId || !key.data) return;
    if (refusal !== null || topK === undefined || minScore === undefined) {
      // Not run with other numbers than those shown: the focus goes to the first field to fix.
      focusFirstInvalid(formElement.current);
      return;
    }
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    const request: PlaygroundRequest = {
      listingId,
      query: query.trim(),
      topK,
      minScore: minScore > 0 ? minScore : undefined,
      mode,
      filters: built.filters,
    };
    const client = new KnowledgeClient({ baseUrl: apiBase(), apiKey: key.data.apiKey, maxRetries: 0 });
    const params = { ...request, minScore: request.minScore };
    const setRun = (next: Omit<RunState, 'scope' | 'stream'>) => {
      if (!controller.signal.aborted) writeDraft(lastRuns, listingId, { ...next, scope, stream });
    };
    setRun({ status: 'running', request, chunks: [] });
    try {
      if (stream) {
        const chunks = client.retrieveStream(params, { signal: controller.signal });
        const seen: Chunk[] = [];
        for await (const chunk of chunks) {
          seen.push(chunk);
          setRun({ status: 'running', request, chunks: [...seen] });
        }
        setRun({
          status: 'done',
          request,
          chunks: seen,
          latencyMs: chunks.summary?.latencyMs,
          queryId: chunks.summary?.queryId,
        });
      } else {
        const result = await client.retrieve(params, { signal: controller.signal });
        setRun({
          status: 'done',
          request,
          chunks: result.chunks,
          latencyMs: result.latencyMs,
          queryId: result.queryId,
        });
      }
    } catch (error) {
      setRun({ status: 'error', request, chunks: [], error });
    } finally {
      // A buyer's query may have spent their balance (or met its end): "Acting as" shows the status now.
      if (actingAs) void queryClient.invalidateQueries({ queryKey: marketplaceKeys.buyers(listingId) });
    }
  };

  if (listings.isPending) return <LoadingState label="Loading listings…" />;
  if (listings.isError)
    return (
      <ErrorState
        title="Could not load listings"
        error={listings.error}
        onRetry={() => void listings.refetch()}
      />
    );

  // Titles need not be unique: the options, and the field when it must, say the start of the id.
  const listingPicker = listingSelectProps(listings.data.data, listingId);

  return (
    <>
      <PageHeader
        title="Playground"
        description="Try /v1/retrieve on a listing as a buyer's app would: the same ranking, filters and streaming, through the client library."
      />
      {listings.data.data.length === 0 ? (
        <NoListingState what="The playground queries a listing’s knowledge base as a buyer’s app would." />
      ) : (
        <Grid gap="lg">
          <Grid.Col span={{ base: 12, md: 5 }}>
            <Card
              withBorder
              padding="lg"
              component="form"
              ref={formElement}
              onSubmit={(e) => (e.preventDefault(), void start())}
            >
              <Stack gap="sm">
                <Select
                  label="Listing"
                  {...listingPicker}
                  description={
                    listing &&
                    `${counted(listing.chunkCount, 'chunk')} from ${counted(listing.documentCount, 'document')}`
                  }
                  value={listingId}
                  onChange={(value) => value && chooseListing(value)}
                  allowDeselect={false}
                />
                <Select
                  label="Acting as"
                  description="Query as the creator, or as a buyer wallet the studio holds, with that wallet’s own API key"
                  data={actingAsField.data}
                  value={actingAsField.value}
                  onChange={(value) => chooseActingAs(value || null)}
                  allowDeselect={false}
                  data-testid="acting-as"
                />
                {listing && listing.chunkCount === 0 && (
                  <Text size="xs" c="orange">
                    This listing has no chunks yet: ingest documents before querying it.
                  </Text>
                )}
                {key.isError && <ErrorState title="No playground key" error={key.error} />}
                <Textarea
                  label="Query"
                  placeholder="What should the knowledge base answer?"
                  autosize
                  minRows={2}
                  maxRows={6}
                  value={query}
                  onChange={(e) => set('query', e.currentTarget.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) {
                      e.preventDefault();
                      void start();
                    }
                  }}
                  data-autofocus
                />
                <Group grow gap="sm">
                  <NumberInput
                    label="Top k"
                    min={1}
                    max={20}
                    // Decimals are typed (and pasted) as they are, for the field to refuse with its
                    // message: without them, a pasted 1.5 became 1 without a word.
                    allowNegative={false}
                    value={topKInput}
                    onChange={(value) => set('topK', value)}
                    clampBehavior="none"
                    error={topKCheck.error}
                  />
                  <NumberInput
                    label="Min score"
                    min={0}
                    max={1}
                    step={0.05}
                    // No decimalScale: 0.555 cut to 0.55 as typed was a query with another number.
                    allowNegative={false}
                    value={minScoreInput}
                    onChange={(value) => set('minScore', value)}
                    clampBehavior="none"
                    error={minScoreCheck.error}
                  />
                </Group>
                <div>
                  <Input.Label id="mode-label">Mode</Input.Label>
                  <SegmentedControl
                    aria-labelledby="mode-label"
                    fullWidth
                    data={MODES}
                    value={mode}
                    onChange={(v) => set('mode', v as RetrievalMode)}
                  />
                </div>
                <div>
                  <Input.Label>Metadata filters</Input.Label>
                  <FilterEditor rows={rows} errors={built.errors} onChange={(next) => set('rows', next)} />
                </div>
                <Group justify="space-between" mt="xs">
                  <Switch
                    label="Stream chunks as they arrive"
                    checked={stream}
                    onChange={(e) => set('stream', e.currentTarget.checked)}
                  />
                  <Button
                    type="submit"
                    leftSection={<IconPlayerPlay size={16} />}
                    loading={shownRun.status === 'running' && !shownRun.stream}
                    disabled={!ready}
                    aria-describedby={refusal ? 'playground-run-refusal' : undefined}
                  >
                    Run
                  </Button>
                </Group>
                {refusal && (
                  <Text size="xs" c="red" ta="right" id="playground-run-refusal" role="status">
                    {refusal}
                  </Text>
                )}
                <Text size="xs" c="dimmed">
                  <Kbd size="xs">Ctrl</Kbd> + <Kbd size="xs">Enter</Kbd> runs the query.
                </Text>
              </Stack>
            </Card>
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 7 }}>
            <Results
              run={shownRun}
              apiKey={key.data?.apiKey}
              listingEmpty={
                listings.data.data.find((l) => l.id === shownRun.request?.listingId)?.chunkCount === 0
              }
              actingAs={actingAsName(buyers.data, actingAsField.value || null)}
            />
          </Grid.Col>
        </Grid>
      )}
    </>
  );
}

function Results({
  run,
  apiKey,
  listingEmpty,
  actingAs,
}: {
  run: RunState;
  apiKey: string | undefined;
  /** The queried listing has no chunks: nothing could match, whatever the query. */
  listingEmpty: boolean;
  actingAs: string | null;
}) {
  if (run.status === 'idle') {
    return (
      <Card withBorder padding="xl" h="100%">
        <Stack align="center" gap={6} py="xl">
          <IconSearch size={28} stroke={1.4} color="var(--mantine-color-dimmed)" />
          <Text fw={600}>No results yet</Text>
          <Text size="sm" c="dimmed" ta="center" maw={360}>
            Write a query and run it: the ranked chunks, their scores and the exact request show here.
          </Text>
        </Stack>
      </Card>
    );
  }
  const terms = queryTerms(run.request?.query ?? '');
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <CardTitle>Results</CardTitle>
        <Group gap={6}>
          {run.status === 'running' && (
            <Badge variant="light" color="blue">
              {run.stream ? `Streaming… ${run.chunks.length}` : 'Searching…'}
            </Badge>
          )}
          {run.status === 'done' && (
            <>
              <Badge variant="light" color="gray">
                {counted(run.chunks.length, 'chunk')}
              </Badge>
              {run.latencyMs !== undefined && (
                <Badge variant="light" color="teal" aria-label="Latency">
                  {run.latencyMs} ms
                </Badge>
              )}
            </>
          )}
        </Group>
      </Group>
      {actingAs && (
        <Text size="xs" c="dimmed">
          Acting as buyer <b>{actingAs}</b>, with an API key scoped to that wallet.
        </Text>
      )}
      {run.status === 'error' && <QueryFailureCard error={run.error} />}
      {run.status === 'done' && run.chunks.length === 0 && (
        <Card withBorder padding="lg">
          <Text size="sm" c="dimmed">
            {listingEmpty
              ? 'The knowledge base of this listing is empty: ingest documents first, then query it.'
              : 'No chunk matched. Lower the minimum score, loosen the filters or try other words.'}
          </Text>
        </Card>
      )}
      {run.chunks.length > 0 && (
        <Stack gap="sm" aria-label="Ranked chunks" role="list">
          {run.chunks.map((chunk, i) => (
            <ChunkCard key={i} rank={i + 1} chunk={chunk} terms={terms} />
          ))}
        </Stack>
      )}
      {run.request && <RequestCode request={run.request} stream={run.stream ?? false} apiKey={apiKey} />}
    </Stack>
  );
}

/** The error exactly as a buyer's app receives it: HTTP status, code, message, Retry-After. */
function QueryFailureCard({ error }: { error: unknown }) {
  const failure = describeFailure(error);
  return (
    <Alert
      color={failure.status === 429 ? 'orange' : 'red'}
      variant="light"
      icon={<IconLock size={18} />}
      role="alert"
      data-testid="query-failure"
      title={
        <Group gap={8}>
          {failure.status !== null && (
            <Badge
              color={failure.status === 429 ? 'orange' : 'red'}
              variant="filled"
              data-testid="failure-status"
            >
              {failure.status}
            </Badge>
          )}
          {failure.code && (
            <Code fz="sm" data-testid="failure-code">
              {failure.code}
            </Code>
          )}
          {failure.status === null && <span>The query failed</span>}
        </Group>
      }
    >
      <Stack gap={4}>
        <Text size="sm">{failure.message}</Text>
        {failure.meaning && (
          <Text size="sm" c="dimmed">
            {failure.meaning}
          </Text>
        )}
        {failure.retryAfter !== null && (
          <Text size="sm" fw={600}>
            Retry-After: {failure.retryAfter} s
          </Text>
        )}
        {failure.requestId && (
          <Text size="xs" c="dimmed">
            Request id: {failure.requestId}
          </Text>
        )}
      </Stack>
    </Alert>
  );
}

function ChunkCard({ rank, chunk, terms }: { rank: number; chunk: Chunk; terms: string[] }) {
  const source = typeof chunk.sourceMetadata.source === 'string' ? chunk.sourceMetadata.source : undefined;
  return (
    <Card withBorder padding="sm" role="listitem" aria-label={`Result ${rank}`}>
      <Group justify="space-between" gap="sm" wrap="nowrap" mb={6}>
        <Group gap={8} wrap="nowrap" miw={0}>
          <Badge variant="filled" color="gray" size="sm" circle>
            {rank}
          </Badge>
          {source && (
            <Text size="xs" c="dimmed" truncate maw={320} title={source}>
              {source}
            </Text>
          )}
        </Group>
        <Group gap={8} wrap="nowrap" w={170}>
          <Progress value={chunk.score * 100} size="sm" style={{ flex: 1 }} aria-hidden />
          <Text size="xs" ff="monospace" fw={600} data-testid="chunk-score">
            {chunk.score.toFixed(3)}
          </Text>
        </Group>
      </Group>
      <Highlight highlight={terms} wholeWord size="sm" lineClamp={5} style={{ whiteSpace: 'pre-wrap' }}>
        {chunk.text}
      </Highlight>
    </Card>
  );
}

function RequestCode({
  request,
  stream,
  apiKey,
}: {
  request: PlaygroundRequest;
  stream: boolean;
  apiKey: string | undefined;
}) {
  const [tab, setTab] = useState<string | null>('curl');
  const base = apiBase();
  const shown = tab === 'client' ? clientCodeOf(request, base, stream) : curlOf(request, base, stream);
  return (
    <Card withBorder padding="sm">
      <Tabs value={tab} onChange={setTab}>
        <Group justify="space-between" wrap="nowrap">
          <Tabs.List>
            <Tabs.Tab value="curl">curl</Tabs.Tab>
            <Tabs.Tab value="client">TypeScript client</Tabs.Tab>
          </Tabs.List>
          <Group gap={6} wrap="nowrap">
            {tab === 'curl' && apiKey && (
              <CopyButton value={curlOf(request, base, stream, apiKey)}>
                {({ copied, copy }) => (
                  <Button size="compact-xs" variant="subtle" onClick={copy}>
                    {copied ? 'Copied' : 'Copy with key'}
                  </Button>
                )}
              </CopyButton>
            )}
            <CopyButton value={shown}>
              {({ copied, copy }) => (
                <Button size="compact-xs" variant="light" onClick={copy}>
                  {copied ? 'Copied' : 'Copy'}
                </Button>
              )}
            </CopyButton>
          </Group>
        </Group>
      </Tabs>
      {/* Lines wrap at spaces and after punctuation; only a token longer than the line is cut inside. */}
      <Code
        block
        fz="xs"
        mt="xs"
        style={{ whiteSpace: 'pre-wrap', wordBreak: 'normal', overflowWrap: 'anywhere' }}
        data-testid="request-code"
      >
        <WrapAfterPunctuation text={shown} />
      </Code>
    </Card>
  );
}

/**
 * Code with a break opportunity after each `,` `/` `:` `{` and `&`: a long JSON body or URL wraps
 * between its parts ("query":"…) rather than inside a word ("quer" / "y"). Copying takes the text
 * itself, without anything added.
 */
function WrapAfterPunctuation({ text }: { text: string }) {
  const parts = text.split(/(?<=[,/:{&])/);
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 && <wbr />}
        </Fragment>
      ))}
    </>
  );
}
