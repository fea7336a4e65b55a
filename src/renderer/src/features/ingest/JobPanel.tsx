import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Progress,
  ScrollArea,
  SegmentedControl,
  Stack,
  Table,
  Text,
} from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useMemo, useState, type Ref } from 'react';
import { CardTitle } from '../../components/CardTitle';
import { CancelJobButton } from '../../components/CancelJobButton';
import { counted, formatCount, formatDateTime } from '../../lib/format';
import { sectionHref } from '../../lib/sections';
import { filePercent, ingestErrorText, outcomeCounts, overallPercent, STAGE_LABELS } from './jobView';
import { originLabel, outcomeOrigins } from './outcomeOrigins';
import { ROWS_PER_PAGE, RowPager, usePagedRows } from './pagedRows';
import type { FileOutcome, IngestJob } from './types';

const STATUS_COLOR: Record<FileOutcome['status'], string> = {
  ingested: 'teal',
  unchanged: 'gray',
  rejected: 'red',
};

const TITLES: Record<IngestJob['state'], string> = {
  running: 'Ingesting…',
  done: 'Ingestion finished',
  cancelled: 'Ingestion cancelled',
  failed: 'Ingestion failed',
  interrupted: 'Ingestion interrupted',
};

function title(job: IngestJob): string {
  if (job.state !== 'interrupted') return TITLES[job.state];
  const what = job.kind === 'reingest' ? 'Re-ingestion interrupted' : TITLES.interrupted;
  return `${what} · started ${formatDateTime(job.startedAt)}`;
}

const ALERT_COLORS: Partial<Record<IngestJob['state'], string>> = {
  cancelled: 'gray',
  interrupted: 'yellow',
};

/**
 * A running job's progress, per file and overall, or a finished job's outcome per file; for a job a stop
 * of the studio interrupted, what it was given and what to do, with a way to dismiss the report.
 */
export function JobPanel({
  job,
  onCancel,
  cancelling,
  onDismiss,
  inspectLink = true,
  inputs,
  headingRef,
}: {
  job: IngestJob;
  onCancel: () => void;
  cancelling: boolean;
  /** Forgets an interrupted job's report (offered only for one). */
  onDismiss?: () => void;
  /** Offer to open Inspect once done (not when the panel is shown in Inspect itself). */
  inspectLink?: boolean;
  /**
   * The paths the job was sent, in order, when this page sent them: each outcome row then says where
   * it came from (`simple.zip › a.csv`).
   */
  inputs?: readonly string[];
  /** The panel's title, which takes the focus when the job starts or ends (its buttons come and go). */
  headingRef?: Ref<HTMLHeadingElement>;
}) {
  const running = job.state === 'running';
  const interrupted = job.state === 'interrupted';
  const percent = overallPercent(job);
  const p = job.progress;
  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <CardTitle size="sm" ref={headingRef} tabIndex={-1} className="kb-focus-target">
            {title(job)}
          </CardTitle>
          {running && <CancelJobButton onCancel={onCancel} cancelling={cancelling} />}
          {interrupted && onDismiss && (
            <Button size="xs" variant="subtle" color="gray" onClick={onDismiss}>
              Dismiss
            </Button>
          )}
        </Group>
        {running && (
          <div>
            <Progress value={percent} animated aria-label="Overall progress" />
            <Text size="xs" c="dimmed" mt={4} aria-live="polite">
              {progressLine(p)}
            </Text>
          </div>
        )}
        {job.error && (
          <Alert
            color={ALERT_COLORS[job.state] ?? 'red'}
            variant="light"
            icon={<IconAlertTriangle size={16} />}
            role="alert"
          >
            <Text size="sm">{ingestErrorText(job.error)}</Text>
          </Alert>
        )}
        {job.result ? (
          <Outcomes job={job} inspectLink={inspectLink} inputs={inputs} />
        ) : (
          job.files.length > 0 && <FileProgress job={job} />
        )}
      </Stack>
    </Card>
  );
}

/**
 * What a running job is doing. The job exists once its files are received: before its first progress it
 * is getting them ready (a ZIP's entries are written out first, and said so with their count).
 */
function progressLine(p: IngestJob['progress']): string {
  if (!p) return 'Preparing the files…';
  const { unpacking } = p;
  if (unpacking) {
    return `Unpacking ${unpacking.archive}… ${formatCount(unpacking.filesDone)} of ${counted(unpacking.filesTotal, 'file')}`;
  }
  const doing =
    p.stage === 'storing' ? 'Storing the knowledge base' : `${STAGE_LABELS[p.stage]} ${p.file ?? ''}`;
  return `${doing} · ${formatCount(p.filesDone)} of ${counted(p.filesTotal, 'file')} · ${counted(p.chunks, 'chunk')}`;
}

/** Files in progress shown by name beside a job of more files than a page holds. */
const WORKING_SHOWN = 8;

/**
 * Each file's stage: every file of a job of up to a page of files; of a larger one, the files being
 * worked on (its progress line counts the others), so that drawing a snapshot costs the same for
 * 1,500 files as for 15. An interrupted job's files, a page at a time.
 */
function FileProgress({ job }: { job: IngestJob }) {
  const interrupted = job.state === 'interrupted';
  const paged = usePagedRows(job.files);
  const working =
    !interrupted && job.files.length > ROWS_PER_PAGE
      ? job.files.filter((f) => f.stage !== 'processed' && f.stage !== 'done').slice(-WORKING_SHOWN)
      : undefined;
  const rows = working ?? paged.rows;
  return (
    <>
      {working && working.length > 0 && (
        <Text size="xs" c="dimmed">
          In progress:
        </Text>
      )}
      {rows.length > 0 && (
        <Table aria-label="File progress" verticalSpacing={6}>
          <Table.Tbody>
            {rows.map((f) => (
              <Table.Tr key={f.source}>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>
                  <Text size="sm">{f.source}</Text>
                </Table.Td>
                <Table.Td w={110}>
                  <Text size="xs" c="dimmed">
                    {STAGE_LABELS[f.stage]}
                  </Text>
                </Table.Td>
                {!interrupted && (
                  <Table.Td w={160}>
                    <Progress value={filePercent(f.stage)} size="sm" aria-label={`Progress of ${f.source}`} />
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {!working && <RowPager paged={paged} noun="files" label="Pages of the files of the ingestion" />}
    </>
  );
}

type OutcomeFilter = 'all' | FileOutcome['status'];

function Outcomes({
  job,
  inspectLink,
  inputs,
}: {
  job: IngestJob;
  inspectLink: boolean;
  inputs: readonly string[] | undefined;
}) {
  const result = job.result!;
  const counts = outcomeCounts(result.documents);
  const [filter, setFilter] = useState<OutcomeFilter>('all');
  const rows = useMemo(() => {
    const origins = outcomeOrigins(result.documents, inputs);
    return result.documents
      .map((outcome, i) => ({ outcome, label: originLabel(origins[i], outcome.source), key: i }))
      .filter((r) => filter === 'all' || r.outcome.status === filter);
  }, [result.documents, inputs, filter]);
  const statuses = (['rejected', 'ingested', 'unchanged'] as const).filter((s) => counts[s] > 0);
  return (
    <>
      <Group gap="xs">
        <Badge color="teal" variant="light">
          {formatCount(counts.ingested)} ingested
        </Badge>
        <Badge color="gray" variant="light">
          {formatCount(counts.unchanged)} unchanged
        </Badge>
        {/* Red only when a file was rejected: "0 rejected" is no alarm. */}
        <Badge color={counts.rejected > 0 ? 'red' : 'gray'} variant="light" data-testid="rejected-count">
          {formatCount(counts.rejected)} rejected
        </Badge>
        <Text size="xs" c="dimmed">
          The knowledge base now holds {counted(result.documentCount, 'document')},{' '}
          {counted(result.chunkCount, 'chunk')} ({(result.durationMs / 1000).toFixed(1)} s).
        </Text>
        {inspectLink && result.documentCount > 0 && (
          <Button component="a" href={sectionHref('inspect')} size="xs" variant="subtle" ml="auto">
            Inspect chunks
          </Button>
        )}
      </Group>
      {result.documents.length > ROWS_PER_PAGE && statuses.length > 1 && (
        <SegmentedControl
          size="xs"
          aria-label="Show files"
          value={filter}
          onChange={(value) => setFilter(value as OutcomeFilter)}
          data={[
            { value: 'all', label: `All (${formatCount(result.documents.length)})` },
            ...statuses.map((s) => ({ value: s, label: `${STATUS_NAMES[s]} (${formatCount(counts[s])})` })),
          ]}
        />
      )}
      {/* Keyed by the filter: another filter starts at its first page. */}
      <OutcomeTable key={filter} rows={rows} />
    </>
  );
}

const STATUS_NAMES: Record<FileOutcome['status'], string> = {
  ingested: 'Ingested',
  unchanged: 'Unchanged',
  rejected: 'Rejected',
};

interface OutcomeRow {
  outcome: FileOutcome;
  label: { from?: string; name: string };
  key: number;
}

function OutcomeTable({ rows }: { rows: OutcomeRow[] }) {
  const paged = usePagedRows(rows);
  return (
    <>
      <ScrollArea.Autosize mah={560} type="auto" offsetScrollbars>
        <Table aria-label="Ingestion outcome" verticalSpacing={6} striped stickyHeader>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>File</Table.Th>
              <Table.Th w={110}>Outcome</Table.Th>
              <Table.Th w={80} ta="right">
                Chunks
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {paged.rows.map(({ outcome: o, label, key }) => (
              <Table.Tr key={key}>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>
                  <Text size="sm">
                    {label.from !== undefined && (
                      <Text span inherit c="dimmed">
                        {label.from} ›{' '}
                      </Text>
                    )}
                    {label.name}
                  </Text>
                  {o.error && (
                    <Text size="xs" c="red">
                      {ingestErrorText(o.error)}
                    </Text>
                  )}
                  {o.documents !== undefined && (
                    <Text size="xs" c="dimmed">
                      {counted(o.documents, 'document')}, one per JSON item
                    </Text>
                  )}
                  {o.skippedRows && o.skippedRows.length > 0 && (
                    <Text size="xs" c="var(--mantine-color-yellow-light-color)">
                      {counted(o.skippedRows.length, 'CSV row')} skipped:{' '}
                      {o.skippedRows
                        .slice(0, 5)
                        .map((r) => `row ${r.row} (${r.reason})`)
                        .join('; ')}
                      {o.skippedRows.length > 5 ? '; …' : ''}
                    </Text>
                  )}
                  {o.warnings?.map((w) => (
                    <Text key={w} size="xs" c="dimmed">
                      {w}
                    </Text>
                  ))}
                </Table.Td>
                <Table.Td>
                  <Badge color={STATUS_COLOR[o.status]} variant="light">
                    {o.status}
                  </Badge>
                </Table.Td>
                <Table.Td ta="right">{formatCount(o.chunks)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
      <RowPager paged={paged} noun="files" label="Pages of the ingestion outcome" />
    </>
  );
}
