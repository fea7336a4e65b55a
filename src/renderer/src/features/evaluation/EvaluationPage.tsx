import {
  ActionIcon,
  Badge,
  Button,
  Card,
  Checkbox,
  FileInput,
  Grid,
  Input,
  Group,
  Paper,
  SegmentedControl,
  SimpleGrid,
  Skeleton,
  Stack,
  Table,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
  Tooltip,
  UnstyledButton,
  VisuallyHidden,
} from '@mantine/core';
import { IconArrowsDiff, IconCheck, IconPlayerPlay, IconTrash, IconUpload, IconX } from '@tabler/icons-react';
import { useMutation, useMutationState, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import type { RetrievalMode } from '../../../../shared/retrieval';
import { CardTitle } from '../../components/CardTitle';
import { ConfirmDeleteModal } from '../../components/ConfirmDeleteModal';
import { NoListingState } from '../../components/NoListingState';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { announce } from '../../lib/announce';
import { focusWhenReady } from '../../lib/focus';
import { counted } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { createSessionDraft, useSessionDraft } from '../../lib/sessionDraft';
import { ListingPicker, usePickerListings } from '../ingest/ListingPicker';
import { useListingChoice } from '../ingest/useListingChoice';
import { studioCall } from '../playground/studioCalls';
import { METRICS, parseHandWritten, type EvalRun } from './evalTypes';
import { MissedIds } from './MissedIds';
import { RunComparison } from './RunComparison';
import { formatChunking, formatDenseWeight, toggleCompared } from './runComparison';
import { ScoreBinsList } from './scoreBins';
import { UnknownSourcesAlert } from './UnknownSourcesAlert';

// The chart library is large: loaded with the first run shown, not with the studio.
const ScoreHistogram = lazy(() => import('./ScoreHistogram').then((m) => ({ default: m.ScoreHistogram })));

const fmt = (x: number) => x.toFixed(3);

/** What New run holds: where the questions come from, the files or the lines typed, the mode and name. */
interface RunDraft {
  source: string | null;
  files: File[];
  written: string;
  mode: RetrievalMode;
  name: string;
}

const EMPTY_DRAFT: RunDraft = { source: 'upload', files: [], written: '', mode: 'hybrid', name: '' };

// Kept per listing while the page is open: going to another section and back finds it as it was (File
// objects too; a reload starts over). A listing without one starts from the last one typed, so a
// question set written for one listing is there to run on the next.
const runDrafts = createSessionDraft(EMPTY_DRAFT, { carryOver: true });

/** A run is a mutation of this key: its wait or failure is found again when the page comes back. */
const runKey = (listingId: string) => ['evaluation-run', listingId] as const;

interface RunRequest extends Omit<RunDraft, 'source'> {
  listingId: string;
  source: 'upload' | 'write';
}

export function EvaluationPage() {
  // The picker's own query: one request for both.
  const listings = usePickerListings();
  // The listing the creator works on, as in Ingest, Inspect and Pricing. Until the picker has put a
  // known one there (none chosen yet, or the chosen one deleted), the first, as the picker then does.
  const [chosen] = useListingChoice();
  const all = listings.data?.data ?? [];
  const listingId = all.some((l) => l.id === chosen) ? chosen : (all[0]?.id ?? null);
  const runs = useQuery({
    queryKey: ['evaluations', listingId],
    queryFn: () => studioCall<EvalRun[]>('GET', `/listings/${listingId}/evaluations`),
    enabled: listingId !== null,
  });
  const [selected, setSelected] = useState<string | null>(null);
  const [compared, setCompared] = useState<string[]>([]);
  // Another listing's runs: none of them selected or ticked yet.
  const [runsOf, setRunsOf] = useState(listingId);
  if (runsOf !== listingId) {
    setRunsOf(listingId);
    setSelected(null);
    setCompared([]);
  }
  const shown = runs.data?.find((r) => r.id === selected) ?? runs.data?.[0];
  const comparedRuns = (runs.data ?? []).filter((r) => compared.includes(r.id));

  if (listings.isPending) return <LoadingState label="Loading listings…" />;
  if (listings.isError)
    return (
      <ErrorState
        title="Could not load listings"
        error={listings.error}
        onRetry={() => void listings.refetch()}
      />
    );

  return (
    <>
      <PageHeader
        title="Evaluation"
        description="Score retrieval on a question set: nDCG@10, Recall@k and MRR per run, kept to compare settings side by side."
        actions={<ListingPicker />}
      />
      {listingId === null ? (
        <NoListingState what="Evaluation scores retrieval on a listing’s knowledge base; a BEIR corpus uploaded here fills an empty one." />
      ) : (
        <Grid gap="lg">
          <Grid.Col span={{ base: 12, xl: 4 }}>
            <NewRunCard
              listingId={listingId}
              onDone={(run) => {
                setSelected(run.id);
                // The button was disabled while the run ran: the focus goes to the new run's results,
                // and the live region says its headline metric.
                announce(`Run ${run.name} finished: nDCG@10 ${fmt(run.report.metrics.ndcgAt10)}.`);
                focusWhenReady(
                  () => document.querySelector<HTMLElement>(`[data-run-heading="${CSS.escape(run.id)}"]`),
                  10_000,
                );
              }}
            />
          </Grid.Col>
          <Grid.Col span={{ base: 12, xl: 8 }}>
            {runs.isPending ? (
              <LoadingState label="Loading runs…" />
            ) : runs.isError ? (
              <ErrorState
                title="Could not load runs"
                error={runs.error}
                onRetry={() => void runs.refetch()}
              />
            ) : runs.data.length === 0 ? (
              <Card withBorder padding="xl">
                <CardTitle size="sm" tabIndex={-1} className="kb-focus-target" data-runs-focus>
                  No runs yet
                </CardTitle>
                <Text size="sm" c="dimmed">
                  Upload a question set or write questions, then run them: the metrics and the score
                  distribution show here.
                </Text>
              </Card>
            ) : (
              <Stack gap="lg">
                <RunsTable
                  runs={runs.data}
                  selected={shown?.id}
                  onSelect={setSelected}
                  compared={compared}
                  onToggleCompared={(id) =>
                    setCompared((c) =>
                      toggleCompared(
                        c,
                        id,
                        runs.data.map((r) => r.id),
                      ),
                    )
                  }
                />
                {comparedRuns.length >= 2 && (
                  <RunComparison runs={comparedRuns} onClear={() => setCompared([])} />
                )}
                {shown && <RunDetail run={shown} />}
              </Stack>
            )}
          </Grid.Col>
        </Grid>
      )}
    </>
  );
}

function NewRunCard({ listingId, onDone }: { listingId: string; onDone: (run: EvalRun) => void }) {
  const client = useQueryClient();
  const [draft, setDraft] = useSessionDraft(runDrafts, listingId);
  const { source, files, written, mode, name } = draft;
  const set = <K extends keyof RunDraft>(field: K, value: RunDraft[K]) =>
    setDraft((current) => ({ ...current, [field]: value }));
  const parsed = parseHandWritten(written);
  const run = useMutation({
    mutationKey: runKey(listingId),
    mutationFn: (request: RunRequest) => {
      const path = `/listings/${request.listingId}/evaluations`;
      const runName = request.name.trim();
      if (request.source === 'upload') {
        const form = new FormData();
        for (const file of request.files) form.append('files', file, file.name);
        form.append('mode', request.mode);
        if (runName) form.append('name', runName);
        return studioCall<EvalRun>('POST', path, form);
      }
      return studioCall<EvalRun>('POST', path, {
        mode: request.mode,
        name: runName || undefined,
        questions: parseHandWritten(request.written).questions,
      });
    },
    // Runs after the page was left too: the runs are fresh when it comes back.
    onSuccess: (data, { listingId: ranOn }) => {
      void client.invalidateQueries({ queryKey: ['evaluations', ranOn] });
      void client.invalidateQueries({ queryKey: queryKeys.listings });
    },
  });
  // This listing's last run from this page, whether started before the page was left or just now: its
  // wait (no second run meanwhile) or its failure. One on another listing stays with that listing.
  const latest = useMutationState({
    filters: { mutationKey: runKey(listingId) },
    select: (mutation) => ({
      status: mutation.state.status,
      error: mutation.state.error,
      source: (mutation.state.variables as RunRequest | undefined)?.source,
    }),
  }).at(-1);
  const pending = latest?.status === 'pending';
  const ready =
    source === 'upload' ? files.length > 0 : parsed.questions.length > 0 && parsed.error === undefined;

  return (
    <Card withBorder padding="lg">
      <CardTitle mb="sm">New run</CardTitle>
      <Stack gap="sm">
        <Tabs value={source} onChange={(value) => set('source', value)}>
          <Tabs.List grow>
            <Tabs.Tab value="upload">Upload files</Tabs.Tab>
            <Tabs.Tab value="write">Write questions</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="upload" pt="sm">
            <FileInput
              label="Question set"
              description="BEIR: corpus.jsonl + queries.jsonl + qrels test.tsv (the corpus fills an empty listing). Or one .csv/.jsonl of question, expected_source or expected_text."
              placeholder="Choose files"
              multiple
              clearable
              accept=".jsonl,.json,.tsv,.csv"
              leftSection={<IconUpload size={14} />}
              value={files}
              onChange={(chosen) => set('files', chosen)}
            />
          </Tabs.Panel>
          <Tabs.Panel value="write" pt="sm">
            <Textarea
              label="Questions"
              description='One per line: "question | expected text" or "question | source: file.pdf".'
              placeholder={
                'notice period for tenants | three months\nwho signs the lease | source: lease.pdf'
              }
              autosize
              minRows={5}
              maxRows={12}
              value={written}
              onChange={(e) => set('written', e.currentTarget.value)}
              error={parsed.error}
            />
          </Tabs.Panel>
        </Tabs>
        <div>
          <Input.Label id="eval-mode-label">Mode</Input.Label>
          <SegmentedControl
            aria-labelledby="eval-mode-label"
            fullWidth
            value={mode}
            onChange={(v) => set('mode', v as RetrievalMode)}
            data={[
              { value: 'hybrid', label: 'Hybrid' },
              { value: 'dense', label: 'Dense' },
              { value: 'lexical', label: 'Lexical' },
            ]}
          />
        </div>
        <TextInput
          label="Run name"
          placeholder="optional, e.g. hybrid baseline"
          value={name}
          onChange={(e) => set('name', e.currentTarget.value)}
        />
        {latest?.status === 'error' && <ErrorState title="The run failed" error={latest.error} />}
        <Button
          leftSection={<IconPlayerPlay size={16} />}
          onClick={() =>
            run.mutate(
              { ...draft, listingId, source: source === 'write' ? 'write' : 'upload' },
              // Only while the page stays: the run is shown once it is done. After a visit elsewhere
              // the page shows the newest run anyway.
              { onSuccess: (data) => onDone(data) },
            )
          }
          loading={pending}
          disabled={!ready}
        >
          Run evaluation
        </Button>
        {pending && (
          <Text size="xs" c="dimmed" role="status">
            Running every question
            {latest.source === 'upload' ? ' (a BEIR corpus is ingested first)' : ''}…
          </Text>
        )}
      </Stack>
    </Card>
  );
}

function RunsTable({
  runs,
  selected,
  onSelect,
  compared,
  onToggleCompared,
}: {
  runs: EvalRun[];
  selected: string | undefined;
  onSelect: (id: string) => void;
  compared: string[];
  onToggleCompared: (id: string) => void;
}) {
  const client = useQueryClient();
  // Asked first, as documents, listings and API keys are: a run's report cannot be made again as it was.
  const [confirming, setConfirming] = useState<EvalRun>();
  // Once a run is deleted its Delete button is gone: the dialog gives the focus to the page instead.
  const [deleted, setDeleted] = useState(false);
  const remove = useMutation({
    mutationFn: (run: EvalRun) => studioCall('DELETE', `/listings/${run.listingId}/evaluations/${run.id}`),
    onSuccess: async (_result, run) => {
      setDeleted(true);
      await client.invalidateQueries({ queryKey: ['evaluations'] });
      closeConfirm();
      announce(`Run ${run.name} deleted.`);
      // The runs table (the empty state's title once the last run is gone, else the page's title).
      focusWhenReady(
        () =>
          document.querySelector<HTMLElement>('[data-runs-focus]') ??
          document.querySelector<HTMLElement>('[data-page-title]'),
      );
    },
  });
  function closeConfirm() {
    remove.reset();
    setConfirming(undefined);
  }
  const best = Object.fromEntries(
    METRICS.map(({ key }) => [key, Math.max(...runs.map((r) => r.report.metrics[key]))]),
  );
  return (
    <Card withBorder padding={0}>
      <Group justify="space-between" px="md" py="xs">
        <Text size="xs" c="dimmed">
          {runs.length > 1
            ? 'Tick two or more runs to compare them side by side; choose a run by its name to see its questions.'
            : 'Choose a run by its name to see its questions.'}
        </Text>
        {compared.length === 1 && (
          <Text size="xs" c="dimmed" role="status">
            <IconArrowsDiff size={12} /> Tick one more run to compare.
          </Text>
        )}
      </Group>
      <Table.ScrollContainer minWidth={900}>
        <Table
          highlightOnHover
          aria-label="Evaluation runs"
          verticalSpacing="xs"
          tabIndex={-1}
          className="kb-focus-target"
          data-runs-focus
        >
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={36}>
                <VisuallyHidden>Compare</VisuallyHidden>
              </Table.Th>
              <Table.Th>Run</Table.Th>
              <Table.Th>Settings</Table.Th>
              {METRICS.map((m) => (
                <Table.Th key={m.key} ta="right">
                  {m.label}
                </Table.Th>
              ))}
              <Table.Th ta="right">p50</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {runs.map((run) => (
              // A click anywhere on the row chooses it too; the name is the control keyboards and
              // screen readers use.
              <Table.Tr
                key={run.id}
                onClick={() => onSelect(run.id)}
                bg={run.id === selected ? 'var(--mantine-primary-color-light)' : undefined}
                style={{ cursor: 'pointer' }}
              >
                <Table.Td onClick={(e) => e.stopPropagation()}>
                  <Checkbox
                    aria-label={`Compare ${run.name}`}
                    checked={compared.includes(run.id)}
                    onChange={() => onToggleCompared(run.id)}
                  />
                </Table.Td>
                <Table.Td maw={260}>
                  <UnstyledButton
                    display="block"
                    maw="100%"
                    ta="left"
                    aria-pressed={run.id === selected}
                    onClick={(e) => (e.stopPropagation(), onSelect(run.id))}
                  >
                    <Text span size="sm" fw={500} lineClamp={1} title={run.name}>
                      {run.name}
                    </Text>
                  </UnstyledButton>
                  <Text size="xs" c="dimmed">
                    {new Date(run.createdAt).toLocaleString()} ·{' '}
                    {counted(run.report.metrics.queries, 'question')}
                  </Text>
                </Table.Td>
                <Table.Td maw={280}>
                  <Group gap={6} wrap="nowrap">
                    <Badge variant="light" color="gray" size="sm">
                      {run.report.settings.mode}
                    </Badge>
                    <Text size="xs" c="dimmed" truncate="end">
                      {formatChunking(run.report.settings.chunking)}
                    </Text>
                  </Group>
                  <Text size="xs" c="dimmed" truncate="end" title={run.report.settings.embeddingModel}>
                    {run.report.settings.embeddingModel}
                    {run.report.settings.mode === 'hybrid'
                      ? ` · dense weight ${formatDenseWeight(run.report.settings)}`
                      : ''}
                  </Text>
                </Table.Td>
                {METRICS.map(({ key }) => (
                  <Table.Td
                    key={key}
                    ta="right"
                    ff="monospace"
                    fz="sm"
                    fw={run.report.metrics[key] === best[key] && runs.length > 1 ? 700 : 400}
                  >
                    {fmt(run.report.metrics[key])}
                  </Table.Td>
                ))}
                <Table.Td ta="right" fz="sm" style={{ whiteSpace: 'nowrap' }}>
                  {run.report.metrics.p50LatencyMs.toFixed(1)} ms
                </Table.Td>
                <Table.Td w={40}>
                  <Tooltip label="Delete run">
                    <ActionIcon
                      variant="subtle"
                      color="gray"
                      aria-label={`Delete run ${run.name}`}
                      onClick={(e) => (e.stopPropagation(), setDeleted(false), setConfirming(run))}
                    >
                      <IconTrash size={15} />
                    </ActionIcon>
                  </Tooltip>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <ConfirmDeleteModal
        opened={confirming !== undefined}
        title="Delete evaluation run"
        confirmLabel="Delete run"
        pending={remove.isPending}
        returnFocus={!deleted}
        error={remove.error}
        onConfirm={() => confirming && remove.mutate(confirming)}
        onClose={closeConfirm}
      >
        Delete the run <b>{confirming?.name}</b>? Its metrics and per-question results go with it. This cannot
        be undone.
      </ConfirmDeleteModal>
    </Card>
  );
}

function RunDetail({ run }: { run: EvalRun }) {
  const { metrics, settings, questions, distribution, unknownSources = [] } = run.report;
  const leftOut = unknownSources.filter((u) => !u.scored).length;
  return (
    <Stack gap="md" aria-label={`Run ${run.name}`}>
      <CardTitle
        size="sm"
        tabIndex={-1}
        className="kb-focus-target kb-break"
        data-run-heading={run.id}
        mb={-4}
      >
        Run: {run.name}
      </CardTitle>
      <SimpleGrid cols={{ base: 2, sm: 5 }} spacing="sm">
        {METRICS.map((m) => (
          <Paper key={m.key} withBorder p="sm" radius="md">
            <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
              {m.label}
            </Text>
            <Text fz={22} fw={700} ff="monospace" data-testid={`metric-${m.key}`}>
              {fmt(metrics[m.key])}
            </Text>
          </Paper>
        ))}
        <Paper withBorder p="sm" radius="md">
          <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
            p50 latency
          </Text>
          <Text fz={22} fw={700} ff="monospace">
            {metrics.p50LatencyMs.toFixed(1)}
            <Text span size="xs" c="dimmed">
              {' '}
              ms
            </Text>
          </Text>
        </Paper>
      </SimpleGrid>
      <Text size="xs" c="dimmed">
        {settings.dataset} · {settings.mode}
        {settings.mode === 'hybrid' ? ` (dense weight ${formatDenseWeight(settings)})` : ''} ·{' '}
        {settings.embeddingModel} · {formatChunking(settings.chunking)} ·{' '}
        {counted(settings.chunkCount, 'chunk')} ·{' '}
        {settings.topK ? `top ${settings.topK} per question · ` : ''}
        {counted(metrics.queries, 'question')}
        {metrics.skipped > 0 ? ` (${metrics.skipped} without judgments skipped)` : ''}
        {leftOut > 0 ? ` (${leftOut} left out: expected source not found)` : ''}
      </Text>
      <UnknownSourcesAlert unknown={unknownSources} />
      <Card withBorder padding="md">
        <Title order={3} fz="sm" mb="sm">
          Score distribution of the top 10 chunks
        </Title>
        <Suspense fallback={<Skeleton h={240} />}>
          <ScoreHistogram bins={distribution} />
        </Suspense>
        <ScoreBinsList bins={distribution} />
      </Card>
      <Card withBorder padding={0}>
        <Table.ScrollContainer minWidth={600} maxHeight={420}>
          <Table stickyHeader aria-label="Per-question results" verticalSpacing={6}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Question</Table.Th>
                <Table.Th ta="right">nDCG@10</Table.Th>
                <Table.Th ta="right">RR</Table.Th>
                <Table.Th>Top hits</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {questions.map((q) => (
                <Table.Tr key={q.id}>
                  <Table.Td maw={280}>
                    <Text size="sm" lineClamp={2}>
                      {q.question}
                    </Text>
                    {q.missed.length > 0 && <MissedIds missed={q.missed} />}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace" fz="sm">
                    {fmt(q.ndcg)}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace" fz="sm">
                    {fmt(q.reciprocalRank)}
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      {q.hits.slice(0, 5).map((hit, i) => (
                        // Shown on focus as on hover: each hit is a stop of the Tab order, named by its
                        // id and score; the tooltip (its snippet too) describes it while shown.
                        <Tooltip
                          key={i}
                          label={`${hit.id} · ${hit.score.toFixed(3)}\n${hit.snippet}`}
                          multiline
                          w={320}
                          events={{ hover: true, focus: true, touch: true }}
                        >
                          <Badge
                            component="button"
                            type="button"
                            size="sm"
                            variant="light"
                            color={hit.relevant ? 'teal' : 'gray'}
                            leftSection={hit.relevant ? <IconCheck size={10} /> : <IconX size={10} />}
                            aria-label={`Hit ${i + 1}, ${hit.relevant ? 'relevant' : 'not relevant'}: ${hit.id}, score ${hit.score.toFixed(3)}`}
                            style={{ cursor: 'default' }}
                          >
                            {i + 1}
                          </Badge>
                        </Tooltip>
                      ))}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Card>
    </Stack>
  );
}
