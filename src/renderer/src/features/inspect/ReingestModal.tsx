import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { IconInfoCircle, IconRefresh } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { ErrorState } from '../../components/QueryStates';
import { counted } from '../../lib/format';
import { useJobRun } from '../../lib/useJobRun';
import { ChunkingSettingsCard } from '../ingest/ChunkingSettingsCard';
import { REINGEST_JOBS } from '../ingest/ingestApi';
import { JobPanel } from '../ingest/JobPanel';
import type { ChunkingFormValues, CsvRowsFormValues, IngestJob } from '../ingest/types';
import { reingestDocument, type DocumentSummary } from './documentsApi';
import { chunkingOfDocument, csvRowsOfDocument, reingestPlan, requiredColumnsLabel } from './reingest';

interface ReingestProps {
  document: DocumentSummary;
  onClose: () => void;
  onFinished: (job: IngestJob) => void;
}

/**
 * Confirms re-ingesting one document from its kept original file, with chunking settings that start
 * from the ones it was ingested with; then shows the job's progress and outcome. The modal stays
 * mounted while closed (keep `document` set while it closes), so Mantine returns the focus to the
 * button that opened it; what it shows is mounted afresh at each opening.
 */
export function ReingestModal({
  opened,
  document,
  onClose,
  onFinished,
}: Omit<ReingestProps, 'document'> & { opened: boolean; document: DocumentSummary | undefined }) {
  // A running job holds the dialog open: closing it would hide the job, not stop it.
  const [running, setRunning] = useState(false);
  return (
    <Modal
      opened={opened && document !== undefined}
      onClose={() => !running && onClose()}
      title="Re-ingest document"
      size="lg"
      centered
      closeOnClickOutside={!running}
    >
      {document && (
        <ReingestDialog
          key={document.id}
          document={document}
          onClose={onClose}
          onFinished={onFinished}
          onRunning={setRunning}
        />
      )}
    </Modal>
  );
}

/** What the dialog shows (mounted afresh at each opening): the settings, then the job. */
export function ReingestDialog({
  document,
  onClose,
  onFinished,
  onRunning,
}: ReingestProps & { onRunning: (running: boolean) => void }) {
  const [settings, setSettings] = useState<ChunkingFormValues | null>(() => chunkingOfDocument(document));
  // A CSV document's required columns, from the ones it was ingested with; null for any other document.
  const [csvRows, setCsvRows] = useState<CsvRowsFormValues | null>(() => csvRowsOfDocument(document));
  const { job, error, lost, cancelling, running, run, cancel } = useJobRun<IngestJob>(REINGEST_JOBS);
  const plan = reingestPlan(document, settings, csvRows);
  const kept = csvRowsOfDocument(document);
  useEffect(() => {
    onRunning(running);
    return () => onRunning(false);
  }, [running, onRunning]);

  const start = async () => {
    const final = await run(async () => (await reingestDocument(document.id, plan.body)).job);
    if (final) onFinished(final);
  };

  const outcome = job?.result?.documents[0];
  return (
    <Stack gap="md">
      {!job && (
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          Parse, chunk and embed <b>{document.source}</b> again from the original file the studio kept. Its{' '}
          {counted(document.chunkCount, 'chunk')} {document.chunkCount === 1 ? 'is' : 'are'} replaced when the
          new ones are stored; until then buyers keep finding the current ones.
        </Text>
      )}
      {settings ? (
        <ChunkingSettingsCard
          value={settings}
          onChange={setSettings}
          disabled={running || Boolean(job)}
          csvRows={csvRows ?? undefined}
          onCsvRowsChange={csvRows ? setCsvRows : undefined}
          csvRowsScope="document"
        />
      ) : (
        <Alert variant="light" color="gray" icon={<IconInfoCircle size={16} />}>
          This document was ingested with its own embeddings: it is stored again as it is.
        </Alert>
      )}
      {settings && plan.unchanged && !job && (
        <Text size="xs" c="dimmed" role="note">
          These are the settings it was ingested with{kept ? ` (${requiredColumnsLabel(kept)})` : ''}: unless
          the file’s handling changed, the outcome is “unchanged”.
        </Text>
      )}
      {error !== undefined && (
        <ErrorState
          title={lost ? 'Lost track of the re-ingestion' : 'The document could not be re-ingested'}
          error={error}
        />
      )}
      {job && (
        <JobPanel job={job} onCancel={() => void cancel()} cancelling={cancelling} inspectLink={false} />
      )}
      {outcome?.status === 'unchanged' && (
        <Text size="sm" role="status">
          Nothing changed: the file and its chunking settings are the same as before.
        </Text>
      )}
      <Group justify="flex-end">
        {job && !running ? (
          <Button onClick={onClose}>Close</Button>
        ) : (
          <>
            <Button variant="default" onClick={onClose} disabled={running}>
              Cancel
            </Button>
            <Button
              leftSection={<IconRefresh size={16} />}
              onClick={() => void start()}
              loading={running}
              disabled={Boolean(plan.error)}
            >
              Re-ingest
            </Button>
          </>
        )}
      </Group>
    </Stack>
  );
}
