import { Alert, Badge, Button, Card, Group, Progress, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { IconAlertTriangle, IconCircleCheck } from '@tabler/icons-react';
import { CardTitle } from '../../components/CardTitle';
import { CancelJobButton } from '../../components/CancelJobButton';
import { remoteOnlyNote, type PushJob, type PushPart } from '../../../../shared/push';
import { counted, formatCount, formatDateTime } from '../../lib/format';
import { formatSize } from '../ingest/formatSize';
import {
  failureTitle,
  FILE_STATUS_COLOR,
  FILE_STATUS_LABEL,
  PART_STATE_LABEL,
  partCutShort,
  partPercents,
  reportFiles,
} from './pushView';

const TITLES: Record<PushJob['state'], string> = {
  running: 'Pushing…',
  completed: 'Push finished',
  cancelled: 'Push cancelled',
  failed: 'Push failed',
  interrupted: 'Push interrupted',
};

const ALERT_COLORS: Partial<Record<PushJob['state'], string>> = {
  cancelled: 'gray',
  interrupted: 'yellow',
};

/**
 * A push in progress (packing and sending per part), then the remote's report per file; for a push a
 * stop of the studio interrupted, its plan and what to do, with a way to dismiss the report.
 */
export function PushPanel({
  job,
  onCancel,
  cancelling,
  onDismiss,
  onPushToNewListing,
}: {
  job: PushJob;
  onCancel: () => void;
  cancelling: boolean;
  /** Forgets an interrupted push's report (offered only for one). */
  onDismiss?: () => void;
  /** Pushes again to a new remote listing (offered when the key cannot see the remembered one). */
  onPushToNewListing?: () => void;
}) {
  const running = job.state === 'running';
  const interrupted = job.state === 'interrupted';
  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="md">
        <Group justify="space-between" wrap="nowrap">
          <div style={{ minWidth: 0, flex: 1 }}>
            <CardTitle size="sm">
              {TITLES[job.state]}
              {interrupted && ` · started ${formatDateTime(job.startedAt)}`}
            </CardTitle>
            <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              To {job.target}
              {job.remoteListingId ? ` · remote listing ${job.remoteListingId}` : ''} ·{' '}
              {/* An interrupted push's parts are known once one of them had ended: its files always are. */}
              {job.parts.length === 0 ? '' : `${counted(job.parts.length, 'part')}, `}
              {counted(job.totals.files, 'file')}, {formatSize(job.totals.bytes)}
            </Text>
          </div>
          {running && <CancelJobButton onCancel={onCancel} cancelling={cancelling} />}
          {interrupted && onDismiss && (
            <Button size="xs" variant="subtle" color="gray" onClick={onDismiss} style={{ flexShrink: 0 }}>
              Dismiss
            </Button>
          )}
        </Group>
        {job.error && (
          <Alert
            color={ALERT_COLORS[job.state] ?? 'red'}
            variant="light"
            icon={<IconAlertTriangle size={16} />}
            title={failureTitle(job.error.code)}
            role="alert"
          >
            <Stack gap="xs" align="flex-start">
              <Text size="sm">{job.error.message}</Text>
              {job.error.code === 'remote_listing_not_visible' && onPushToNewListing && (
                <Button size="xs" variant="light" onClick={onPushToNewListing}>
                  Push to a new listing there
                </Button>
              )}
            </Stack>
          </Alert>
        )}
        <Stack gap="xs" aria-label="Parts">
          {job.parts.map((part) => (
            <PartRow
              key={part.index}
              part={part}
              count={job.parts.length}
              repeatsJobError={part.error?.message === job.error?.message}
            />
          ))}
        </Stack>
        {/* File lists of an interrupted push are not kept; what became of its files is. */}
        {interrupted && <TotalsBadges job={job} />}
        {!running && !interrupted && <Report job={job} />}
      </Stack>
    </Card>
  );
}

function PartRow({
  part,
  count,
  repeatsJobError,
}: {
  part: PushPart;
  count: number;
  repeatsJobError: boolean;
}) {
  const p = partPercents(part);
  const active = part.state === 'packing' || part.state === 'sending' || part.state === 'processing';
  // A part a stop of the studio cut short (an interrupted push's report), or one the service was still
  // processing when the push stopped: not the part's own failure, and the next push tells what it holds.
  const cutShort = partCutShort(part);
  const failed = part.state === 'failed' && !cutShort ? failedPhase(part) : undefined;
  const color = (phase: Phase) =>
    failed === phase ? 'red' : part.state === 'completed' ? 'teal' : undefined;
  return (
    <div role="group" aria-label={`Part ${part.index} of ${count}`}>
      <Group justify="space-between" gap="xs" mb={4} wrap="nowrap">
        <Text size="sm" fw={500}>
          Part {part.index} of {count}
          <Text span size="xs" c="dimmed">
            {' '}
            · {counted(part.fileCount, 'file')}, {formatSize(part.bytes)}
            {part.archiveBytes !== null ? ` → ${formatSize(part.archiveBytes)} ZIP` : ''}
            {part.attempts > 1 ? ` · attempt ${part.attempts}` : ''}
          </Text>
        </Text>
        <Badge
          size="sm"
          variant="light"
          color={
            cutShort
              ? 'yellow'
              : failed
                ? 'red'
                : part.state === 'completed'
                  ? 'teal'
                  : active
                    ? 'blue'
                    : 'gray'
          }
        >
          {cutShort === 'interrupted'
            ? 'Interrupted'
            : cutShort === 'unconfirmed'
              ? 'Unconfirmed'
              : PART_STATE_LABEL[part.state]}
        </Badge>
      </Group>
      <Group gap="xs" grow wrap="nowrap">
        <PhaseBar
          label="Packing"
          value={p.packing}
          color={color('packing')}
          animated={part.state === 'packing'}
        />
        <PhaseBar
          label="Sending"
          value={p.sending}
          color={color('sending')}
          animated={part.state === 'sending'}
        />
        <PhaseBar
          label="Remote"
          value={p.remote}
          color={color('remote')}
          animated={part.state === 'processing'}
        />
      </Group>
      {part.error && part.state !== 'completed' && !repeatsJobError && (
        <Text size="xs" c={part.state === 'failed' && !cutShort ? 'red' : 'yellow.8'} mt={4}>
          {part.error.message}
        </Text>
      )}
    </div>
  );
}

type Phase = 'packing' | 'sending' | 'remote';

/** Where a failed part stopped: on the remote once it had an upload id, else while sending or packing. */
function failedPhase(part: PushPart): Phase {
  if (part.uploadId !== null) return 'remote';
  return part.archiveBytes !== null ? 'sending' : 'packing';
}

function PhaseBar({
  label,
  value,
  color,
  animated,
}: {
  label: string;
  value: number;
  color?: string;
  animated: boolean;
}) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Progress value={value} color={color} animated={animated} size="sm" aria-label={label} />
    </div>
  );
}

/** What became of the push's files: each counted in one outcome. */
function TotalsBadges({ job }: { job: PushJob }) {
  const t = job.totals;
  return (
    <Group gap="xs">
      {job.state === 'completed' && t.rejected === 0 && t.missing === 0 && (
        <IconCircleCheck size={18} color="var(--mantine-color-teal-6)" aria-hidden />
      )}
      <Badge color="teal" variant="light">
        {formatCount(t.accepted)} accepted
      </Badge>
      <Badge color="gray" variant="light">
        {formatCount(t.unchanged)} unchanged
      </Badge>
      <Badge color="red" variant="light">
        {formatCount(t.rejected)} rejected
      </Badge>
      {t.not_stored > 0 && (
        <Badge color="orange" variant="light">
          {formatCount(t.not_stored)} not stored
        </Badge>
      )}
      {t.unconfirmed > 0 && (
        <Badge color="yellow" variant="light">
          {formatCount(t.unconfirmed)} unconfirmed
        </Badge>
      )}
      {t.missing > 0 && (
        <Badge color="yellow" variant="light">
          {formatCount(t.missing)} missing
        </Badge>
      )}
      {job.remoteChunkCount !== null && (
        <Text size="xs" c="dimmed">
          The remote knowledge base holds {counted(job.remoteDocumentCount ?? 0, 'document')},{' '}
          {counted(job.remoteChunkCount, 'chunk')}.
        </Text>
      )}
    </Group>
  );
}

function Report({ job }: { job: PushJob }) {
  const files = reportFiles(job);
  const remoteOnly = remoteOnlyNote(job);
  return (
    <Stack gap="sm">
      <TotalsBadges job={job} />
      {remoteOnly && (
        <Alert
          color="yellow"
          variant="light"
          icon={<IconAlertTriangle size={16} />}
          title="Documents only on the service"
        >
          <Text size="sm">{remoteOnly}</Text>
        </Alert>
      )}
      <ScrollArea.Autosize mah={420} type="auto">
        <Table aria-label="Push report" verticalSpacing={6} striped stickyHeader>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>File</Table.Th>
              <Table.Th w={60}>Part</Table.Th>
              <Table.Th w={140}>Remote</Table.Th>
              <Table.Th w={80} ta="right">
                Chunks
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {files.map((f) => (
              <Table.Tr key={f.source}>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>
                  <Text size="sm">{f.source}</Text>
                  {f.error && (
                    <Text size="xs" c={f.status === 'rejected' ? 'red' : 'dimmed'}>
                      {f.error.message}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm" c="dimmed">
                    {f.part ?? '—'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Badge color={FILE_STATUS_COLOR[f.status]} variant="light">
                    {FILE_STATUS_LABEL[f.status]}
                  </Badge>
                </Table.Td>
                <Table.Td ta="right">{formatCount(f.chunks)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
    </Stack>
  );
}
