import { Alert, Card, Group, Loader, Select, Stack, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { CardTitle } from '../../components/CardTitle';
import { memo, useEffect } from 'react';
import { errorMessage } from '../../lib/studioApi';
import { FilesChangedError, filesChangedMessage, isReadable } from '../../lib/studioFetch';
import { ChunkCard } from './ChunkCard';
import { previewSummary, sharedPrefix, skippedRowsSummary } from './chunkPreview';
import { isPreviewable } from './fileTypes';
import { previewFile, previewOptions } from './ingestApi';
import type { ChunkPreview, IngestSettings, QueuedFile } from './types';

const PREVIEW_LIMIT = 20;

/** Where the creator chooses the columns a CSV row needs (ChunkingSettingsCard). */
const REQUIRED_COLUMNS_HINT =
  'A row needs every named column unless told otherwise: choose the columns it needs under “Required CSV columns” in Chunking.';

/**
 * What the preview found in the document, above its chunks: how many chunks and tokens, the CSV rows it
 * leaves out and why (a row with an empty required cell is skipped, not chunked), and parser warnings.
 */
export function PreviewFacts({
  preview,
  columnsChosen,
}: {
  preview: Pick<ChunkPreview, 'totalChunks' | 'totalTokens' | 'chunks' | 'skippedRows' | 'warnings'>;
  /** Whether the creator chose the required columns (else the hint says where to). */
  columnsChosen: boolean;
}) {
  const skipped = skippedRowsSummary(preview.skippedRows ?? []);
  return (
    <>
      <Text size="xs" c="dimmed" aria-live="polite">
        {previewSummary(preview.totalChunks, preview.totalTokens, preview.chunks.length)}
      </Text>
      {skipped && (
        <Text size="xs" c="var(--mantine-color-yellow-light-color)" data-testid="skipped-rows">
          {skipped}
          {columnsChosen ? '' : `. ${REQUIRED_COLUMNS_HINT}`}
        </Text>
      )}
      {preview.warnings?.map((w) => (
        <Text key={w} size="xs" c="var(--mantine-color-yellow-light-color)">
          {w}
        </Text>
      ))}
    </>
  );
}

/**
 * How the chosen file would be chunked with the current settings, before anything is stored. Memoized:
 * the page is drawn again at each progress snapshot of a job.
 *
 * A queued file is the file as it was when added (the browser's snapshot): once it changes on disk it can
 * no longer be read, and a preview kept from before would show text that is no longer there. Whether it
 * can still be read is checked whenever the window gets the focus back (the file was likely edited in
 * another app); a file that cannot is said so, and marked in the queue through `onChanged`.
 */
export const PreviewPanel = memo(function PreviewPanel({
  files,
  chosen,
  onChoose,
  settings,
  onChanged,
}: {
  files: QueuedFile[];
  chosen: string | null;
  onChoose: (path: string | null) => void;
  /** Undefined while the settings form holds something the server would refuse: nothing is asked. */
  settings: IngestSettings | undefined;
  /** The file at `path` changed (or was removed) on disk since it was queued. */
  onChanged?: (path: string) => void;
}) {
  const candidates = files.filter((f) => isPreviewable(f.path));
  const file = candidates.find((f) => f.path === chosen) ?? candidates[0];
  const [debounced] = useDebouncedValue(settings, 300);
  const readable = useQuery({
    queryKey: ['queued-file-readable', file?.path, file?.file.size, file?.file.lastModified],
    queryFn: () => isReadable(file!.file),
    enabled: Boolean(file) && !file?.changed,
    refetchOnWindowFocus: 'always',
    staleTime: 0,
    retry: false,
  });
  const changed = Boolean(file?.changed) || readable.data === false;
  const preview = useQuery({
    queryKey: [
      'chunk-preview',
      file?.path,
      file?.file.size,
      file?.file.lastModified,
      file && debounced && previewOptions(file.path, debounced, PREVIEW_LIMIT),
    ],
    queryFn: ({ signal }) => previewFile(file!, debounced!, PREVIEW_LIMIT, signal),
    // Both: the settings as they are now, and as they settled (the debounced ones lag behind).
    enabled: Boolean(file) && !changed && settings !== undefined && debounced !== undefined,
    retry: false,
    staleTime: Infinity,
  });
  const unreadable = changed || preview.error instanceof FilesChangedError;
  const changedPath = unreadable && !file?.changed ? file?.path : undefined;
  useEffect(() => {
    if (changedPath !== undefined) onChanged?.(changedPath);
  }, [changedPath, onChanged]);

  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <CardTitle size="sm">Chunk preview</CardTitle>
          {preview.isFetching && <Loader size={14} aria-label="Updating the preview" />}
        </Group>
        {candidates.length === 0 ? (
          <Text size="sm" c="dimmed">
            Add a document to see how it would be cut into chunks with these settings. Nothing is stored until
            you ingest.
          </Text>
        ) : (
          <>
            <Select
              aria-label="Document to preview"
              data={candidates.map((f) => f.path)}
              value={file?.path ?? null}
              onChange={onChoose}
              allowDeselect={false}
              searchable
            />
            {unreadable && file ? (
              <Alert color="red" variant="light" icon={<IconAlertTriangle size={16} />} role="alert">
                <Text size="sm">{filesChangedMessage([file.path], 'the queue')}</Text>
              </Alert>
            ) : preview.isError ? (
              <Alert color="red" variant="light" icon={<IconAlertTriangle size={16} />} role="alert">
                <Text size="sm">{errorMessage(preview.error)}</Text>
              </Alert>
            ) : preview.data ? (
              <>
                <PreviewFacts
                  preview={preview.data}
                  columnsChosen={debounced?.csvRequiredColumns !== undefined}
                />
                <Stack gap="xs" aria-label="Preview chunks">
                  {preview.data.chunks.map((chunk, i) => (
                    <ChunkCard
                      key={chunk.index}
                      {...chunk}
                      overlap={sharedPrefix(preview.data.chunks[i - 1]?.text, chunk.text)}
                    />
                  ))}
                </Stack>
              </>
            ) : !settings ? null : (
              <Text size="sm" c="dimmed">
                Chunking {file?.path}…
              </Text>
            )}
          </>
        )}
      </Stack>
    </Card>
  );
});
