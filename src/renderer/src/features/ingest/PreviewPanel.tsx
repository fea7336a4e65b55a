import { Alert, Card, Group, Loader, Select, Stack, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { memo } from 'react';
import { errorMessage } from '../../lib/studioApi';
import { ChunkCard } from './ChunkCard';
import { previewSummary, sharedPrefix } from './chunkPreview';
import { isPreviewable } from './fileTypes';
import { previewFile } from './ingestApi';
import type { ChunkingSettings, QueuedFile } from './types';

const PREVIEW_LIMIT = 20;

/**
 * How the chosen file would be chunked with the current settings, before anything is stored. Memoized:
 * the page is drawn again at each progress snapshot of a job.
 */
export const PreviewPanel = memo(function PreviewPanel({
  files,
  chosen,
  onChoose,
  settings,
}: {
  files: QueuedFile[];
  chosen: string | null;
  onChoose: (path: string | null) => void;
  /** Undefined while the settings form holds something the server would refuse: nothing is asked. */
  settings: ChunkingSettings | undefined;
}) {
  const candidates = files.filter((f) => isPreviewable(f.path));
  const file = candidates.find((f) => f.path === chosen) ?? candidates[0];
  const [debounced] = useDebouncedValue(settings, 300);
  const preview = useQuery({
    queryKey: ['chunk-preview', file?.path, file?.file.size, file?.file.lastModified, debounced],
    queryFn: ({ signal }) => previewFile(file!, debounced!, PREVIEW_LIMIT, signal),
    // Both: the settings as they are now, and as they settled (the debounced ones lag behind).
    enabled: Boolean(file) && settings !== undefined && debounced !== undefined,
    retry: false,
    staleTime: Infinity,
  });

  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <Text fw={600} size="sm">
            Chunk preview
          </Text>
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
            {preview.isError ? (
              <Alert color="red" variant="light" icon={<IconAlertTriangle size={16} />} role="alert">
                <Text size="sm">{errorMessage(preview.error)}</Text>
              </Alert>
            ) : preview.data ? (
              <>
                <Text size="xs" c="dimmed" aria-live="polite">
                  {previewSummary(
                    preview.data.totalChunks,
                    preview.data.totalTokens,
                    preview.data.chunks.length,
                  )}
                </Text>
                {preview.data.warnings?.map((w) => (
                  <Text key={w} size="xs" c="var(--mantine-color-yellow-light-color)">
                    {w}
                  </Text>
                ))}
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
