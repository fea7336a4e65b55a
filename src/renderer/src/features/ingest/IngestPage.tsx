import { Alert, Button, Card, Grid, Group, Stack, Text, ThemeIcon } from '@mantine/core';
import { Dropzone } from '@mantine/dropzone';
import {
  IconAlertTriangle,
  IconFileImport,
  IconFolderOpen,
  IconPaperclip,
  IconUpload,
} from '@tabler/icons-react';
import { useQueryClient } from '@tanstack/react-query';
import { CardTitle } from '../../components/CardTitle';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState } from '../../components/QueryStates';
import { announce } from '../../lib/announce';
import { focusWhenReady } from '../../lib/focus';
import { counted } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { afterJobShown, lostNoticeShown, type LostJob } from '../../lib/lostJob';
import { FilesChangedError } from '../../lib/studioFetch';
import { useJobRun } from '../../lib/useJobRun';
import { ChunkingSettingsCard } from './ChunkingSettingsCard';
import { chunkingError } from './chunkPreview';
import { csvRowsError, validIngestSettings } from './csvRows';
import { formatSize } from './formatSize';
import { filesFromDropzone, filesFromInput, mergeQueue } from './dropFiles';
import { unsupportedFiles, unsupportedSummary, unsupportedType } from './fileTypes';
import { useServerLaunch } from '../../lib/useServerLaunch';
import { followJob, INGEST_JOBS, listIngestJobs, startIngest } from './ingestApi';
import { JobPanel } from './JobPanel';
import { LimitNoticeAlert } from './LimitNoticeAlert';
import { jobEndAnnouncement, startErrorAfterQueueChange } from './jobView';
import { ListingPicker } from './ListingPicker';
import { PreviewPanel } from './PreviewPanel';
import { queueAfterIngestion } from './queueAfterIngestion';
import { QueueTable } from './QueueTable';
import { RejectedFilesAlert } from './RejectedFilesAlert';
import { useIngestDraft } from './ingestDraft';
import type { IngestJob, QueuedFile } from './types';
import { useListingChoice } from './useListingChoice';

export function IngestPage() {
  const [listingId] = useListingChoice();
  const queryClient = useQueryClient();
  // Kept above the sections: leaving Ingest for another view and coming back finds it as it was.
  const {
    queue,
    setQueue,
    settings,
    setSettings,
    csvRows,
    setCsvRows,
    previewPath,
    setPreviewPath,
    sent,
    setSent,
  } = useIngestDraft();
  const {
    job,
    setJob,
    error: startError,
    setError: setStartError,
    lost,
    loseTrack,
    starting,
    cancelling,
    running,
    run,
    cancel,
    dismiss,
  } = useJobRun<IngestJob>(INGEST_JOBS);
  // The job of another listing stays in memory but is not shown for this one.
  const shown = job?.listingId === listingId ? job : undefined;
  // The ingestion this page lost track of: once the studio shows it again (interrupted, after a restart),
  // its report replaces "Lost track of the ingestion", which would contradict it.
  const [lostIngestion, setLostIngestion] = useState<LostJob>();

  const refreshListing = useCallback(() => {
    void queryClient.invalidateQueries({ queryKey: queryKeys.listings });
    // Dropped rather than marked stale: Inspect would first show the cached list, whose replaced
    // documents (a changed file is stored under a new id) it would ask the chunks of, and get 404s.
    queryClient.removeQueries({ queryKey: ['documents'] });
  }, [queryClient]);

  // Back on the page (or reloaded, or the studio started again, even with this page open): show the
  // listing's latest ingestion if it is still running (and follow it) or was interrupted by a stop.
  const serverLaunch = useServerLaunch();
  useEffect(() => {
    if (!listingId) return;
    const controller = new AbortController();
    const show = (found: IngestJob) => {
      if (controller.signal.aborted) return;
      // A job started here meanwhile stays shown.
      setJob((current) => (current?.listingId === listingId && current.id !== found.id ? current : found));
      setLostIngestion((lost) => afterJobShown(lost, found));
    };
    void listIngestJobs(listingId)
      .then(async (jobs) => {
        const latest = jobs[0];
        if (!latest || (latest.state !== 'running' && latest.state !== 'interrupted')) return;
        show(latest);
        if (latest.state !== 'running') return;
        try {
          show(await followJob(latest.id, show, controller.signal));
          refreshListing();
        } catch (err) {
          if (controller.signal.aborted) return;
          setLostIngestion({ id: latest.id, reported: false });
          loseTrack(err);
        }
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [listingId, setJob, loseTrack, refreshListing, serverLaunch]);

  // An error about files of the queue goes out of date with it: "'policy.md' changed" once it was added
  // again, a refusal of the files sent once others are queued.
  useEffect(
    () => setStartError((error: unknown) => startErrorAfterQueueChange(error, queue)),
    [queue, setStartError],
  );

  const openFilePicker = useRef<() => void>(null);
  // The job panel's title: the focus goes there once the job starts (the Ingest button is disabled
  // while it runs, which drops the focus) and, when it was lost meanwhile, once the job ends.
  const jobHeading = useRef<HTMLHeadingElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const settingsError = chunkingError(settings) ?? csvRowsError(csvRows);
  const ingestSettings = useMemo(() => validIngestSettings(settings, csvRows), [settings, csvRows]);

  const add = (files: QueuedFile[]) => setQueue((q) => mergeQueue(q, files));
  const removeFile = useCallback(
    (path: string) => setQueue((q) => q.filter((f) => f.path !== path)),
    [setQueue],
  );
  // The server refuses the whole ingestion for one file of an unsupported type: said before, not after.
  const unsupported = useMemo(() => unsupportedFiles(queue), [queue]);
  const removeUnsupported = () => setQueue((q) => q.filter((f) => unsupportedType(f.path) === undefined));
  /** Marks the queued files (of those given) that changed on disk since they were added. */
  const markChanged = useCallback(
    (paths: readonly string[], among?: readonly QueuedFile[]) => {
      const changed = new Set(paths);
      const sentFiles = among && new Set(among);
      setQueue((q) =>
        q.map((f) =>
          changed.has(f.path) && !f.changed && (!sentFiles || sentFiles.has(f)) ? { ...f, changed: true } : f,
        ),
      );
    },
    [setQueue],
  );
  const markPreviewChanged = useCallback((path: string) => markChanged([path]), [markChanged]);

  const start = async () => {
    if (!listingId || queue.length === 0 || !ingestSettings || unsupported.length > 0) return;
    const files = queue;
    let startedId: string | undefined;
    const final = await run(async () => {
      const started = await startIngest(listingId, files, ingestSettings).catch((err: unknown) => {
        // The browser refuses to send a file changed on disk: its row says so, as the error does.
        if (err instanceof FilesChangedError) markChanged(err.names, files);
        throw err;
      });
      startedId = started.id;
      setSent({ jobId: started.id, paths: files.map((f) => f.path) });
      focusWhenReady(() => jobHeading.current);
      // Marks of an earlier rejection go while the files are tried again.
      const retried = new Set(files);
      setQueue((q) =>
        q.map((f) =>
          f.rejected !== undefined && retried.has(f) ? { ...f, rejected: undefined, clashes: undefined } : f,
        ),
      );
      return started;
    });
    if (!final) {
      // Started, then lost: the studio may report it interrupted once it answers again.
      if (startedId !== undefined) setLostIngestion({ id: startedId, reported: false });
      return;
    }
    // Ingested files leave the queue; rejected ones stay, with the reason, to be tried again.
    const outcomes = final.state === 'done' ? final.result?.documents : undefined;
    if (outcomes) setQueue((q) => queueAfterIngestion(q, files, outcomes));
    refreshListing();
    announce(jobEndAnnouncement(final));
    // Cancel, which had the focus while the job ran, is gone: the outcome's title takes it.
    const active = document.activeElement;
    if (!active || active === document.body) focusWhenReady(() => jobHeading.current);
  };

  const totalBytes = useMemo(() => queue.reduce((n, f) => n + f.file.size, 0), [queue]);
  return (
    <>
      <Dropzone.FullScreen
        active={!running}
        // Invisible until files are dragged over the window: never a stop of the Tab key.
        activateOnKeyboard={false}
        openRef={openFilePicker}
        onDrop={(files) => add(filesFromDropzone(files))}
        aria-label="Drop files to ingest"
      >
        <Group justify="center" mih="calc(100vh - 40px)" style={{ pointerEvents: 'none' }}>
          <Card radius="lg" p="xl" shadow="lg">
            <Group>
              <ThemeIcon size={44} radius="xl" variant="light">
                <IconUpload size={24} />
              </ThemeIcon>
              <div>
                <Text fw={600}>Drop to add to the ingestion</Text>
                <Text size="sm" c="dimmed">
                  Files, folders and ZIP archives
                </Text>
              </div>
            </Group>
          </Card>
        </Group>
      </Dropzone.FullScreen>
      <PageHeader
        title="Ingest"
        description="Drop files, folders or ZIP archives anywhere on this window (PDF, DOCX, HTML, Markdown, JSON, CSV). Check how a document is chunked, then ingest: each file is parsed, chunked, embedded and stored."
        actions={<ListingPicker />}
      />
      <input
        ref={folderInput}
        type="file"
        hidden
        aria-label="Choose a folder"
        {...{ webkitdirectory: '' }}
        onChange={(e) => {
          add(filesFromInput(e.currentTarget.files ?? []));
          e.currentTarget.value = '';
        }}
      />
      <Grid gap="lg">
        <Grid.Col span={{ base: 12, md: 7, xl: 8 }}>
          <Stack gap="md">
            {/* The drop stays open: new versions of documents the knowledge base holds may still fit. */}
            <LimitNoticeAlert listingId={listingId} />
            <Card withBorder radius="md" p="md">
              <Stack gap="sm">
                <Group justify="space-between">
                  <CardTitle size="sm">Files to ingest</CardTitle>
                  <Group gap="xs">
                    <Button
                      size="xs"
                      variant="default"
                      leftSection={<IconPaperclip size={14} />}
                      onClick={() => openFilePicker.current?.()}
                      disabled={running}
                    >
                      Choose files
                    </Button>
                    <Button
                      size="xs"
                      variant="default"
                      leftSection={<IconFolderOpen size={14} />}
                      onClick={() => folderInput.current?.click()}
                      disabled={running}
                    >
                      Choose folder
                    </Button>
                  </Group>
                </Group>
                {queue.length === 0 ? (
                  <Dropzone
                    onDrop={(files) => add(filesFromDropzone(files))}
                    disabled={running}
                    radius="md"
                    aria-label="Drop zone: click to choose files"
                  >
                    <Stack align="center" gap={6} py={32} style={{ pointerEvents: 'none' }}>
                      <ThemeIcon size={48} radius="xl" variant="light">
                        <IconFileImport size={26} />
                      </ThemeIcon>
                      <Text fw={500}>Drop files, folders or ZIP archives here</Text>
                      <Text size="sm" c="dimmed">
                        or anywhere on the window, or click to choose files · up to 50 MB per document
                      </Text>
                    </Stack>
                  </Dropzone>
                ) : (
                  <QueueTable queue={queue} running={running} onRemove={removeFile} />
                )}
                {!running && <RejectedFilesAlert queue={queue} />}
                {unsupported.length > 0 && (
                  <Alert
                    color="red"
                    variant="light"
                    icon={<IconAlertTriangle size={16} />}
                    title={unsupportedSummary(unsupported.length)}
                    role="alert"
                  >
                    <Stack gap="xs" align="flex-start">
                      <Text size="sm">
                        The studio ingests PDF, DOCX, HTML, Markdown, JSON and CSV files, JSONL files of
                        pre-built embeddings and ZIP archives. Remove the other files to ingest the rest.
                      </Text>
                      <Button
                        size="xs"
                        variant="light"
                        color="red"
                        onClick={removeUnsupported}
                        disabled={running}
                      >
                        Remove unsupported files
                      </Button>
                    </Stack>
                  </Alert>
                )}
                <Group justify="space-between">
                  <Text size="xs" c="dimmed">
                    {queue.length > 0
                      ? `${counted(queue.length, 'file')} · ${formatSize(totalBytes)}`
                      : listingId
                        ? 'Nothing queued yet.'
                        : 'Create a listing first: its knowledge base receives the files.'}
                  </Text>
                  <Group gap="xs">
                    {queue.length > 0 && (
                      <Button variant="subtle" color="gray" onClick={() => setQueue([])} disabled={running}>
                        Clear
                      </Button>
                    )}
                    <Button
                      leftSection={<IconUpload size={16} />}
                      onClick={() => void start()}
                      disabled={
                        !listingId ||
                        queue.length === 0 ||
                        unsupported.length > 0 ||
                        Boolean(settingsError) ||
                        running
                      }
                      loading={starting}
                    >
                      Ingest {queue.length > 0 ? counted(queue.length, 'file') : ''}
                    </Button>
                  </Group>
                </Group>
              </Stack>
            </Card>
            {startError !== undefined && (!lost || lostNoticeShown(lost, lostIngestion)) && (
              <ErrorState
                title={lost ? 'Lost track of the ingestion' : 'The ingestion could not run'}
                error={startError}
              />
            )}
            {shown && (
              <JobPanel
                job={shown}
                onCancel={() => void cancel()}
                cancelling={cancelling}
                onDismiss={() => void dismiss(shown)}
                inputs={sent?.jobId === shown.id ? sent.paths : undefined}
                headingRef={jobHeading}
              />
            )}
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 5, xl: 4 }}>
          <Stack gap="md">
            <ChunkingSettingsCard
              value={settings}
              onChange={setSettings}
              csvRows={csvRows}
              onCsvRowsChange={setCsvRows}
              disabled={running}
            />
            <PreviewPanel
              files={queue}
              chosen={previewPath}
              onChoose={setPreviewPath}
              settings={ingestSettings}
              onChanged={markPreviewChanged}
            />
          </Stack>
        </Grid.Col>
      </Grid>
    </>
  );
}
