import { ActionIcon, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { IconTrash } from '@tabler/icons-react';
import { memo } from 'react';
import { unsupportedType } from './fileTypes';
import { formatSize } from './formatSize';
import { RowPager, usePagedRows } from './pagedRows';
import type { QueuedFile } from './types';

/**
 * The queued files, a page at a time in a box of bounded height: the rest of the page (the job's
 * progress, its Cancel button) stays in reach whatever the number of files. Memoized: the page is
 * drawn again at each progress snapshot of a job, the queue only when it changes.
 */
export const QueueTable = memo(function QueueTable({
  queue,
  running,
  onRemove,
}: {
  queue: QueuedFile[];
  running: boolean;
  onRemove: (path: string) => void;
}) {
  const paged = usePagedRows(queue);
  return (
    <Stack gap="xs">
      <ScrollArea.Autosize mah={300} type="auto" offsetScrollbars>
        <Table aria-label="Files to ingest" verticalSpacing={4} highlightOnHover>
          <Table.Tbody>
            {paged.rows.map((f) => {
              const refused = unsupportedType(f.path);
              return (
                <Table.Tr
                  key={f.path}
                  data-unsupported={refused !== undefined || undefined}
                  data-rejected={f.rejected !== undefined || undefined}
                  data-changed={f.changed || undefined}
                >
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>
                    <Text size="sm">{f.path}</Text>
                    {refused !== undefined && (
                      <Text size="xs" c="red" fw={500}>
                        Unsupported type ({refused})
                      </Text>
                    )}
                    {f.changed && (
                      <Text size="xs" c="red" fw={500}>
                        Changed (or removed) on disk after it was added: remove it and add it again
                      </Text>
                    )}
                    {f.rejected !== undefined && (
                      <Text size="xs" c="red">
                        Not ingested: {f.rejected}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td w={90} ta="right">
                    <Text size="xs" c="dimmed">
                      {formatSize(f.file.size)}
                    </Text>
                  </Table.Td>
                  <Table.Td w={40}>
                    <ActionIcon
                      variant="subtle"
                      color="gray"
                      aria-label={`Remove ${f.path}`}
                      disabled={running}
                      onClick={() => onRemove(f.path)}
                    >
                      <IconTrash size={16} />
                    </ActionIcon>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
      <RowPager paged={paged} noun="files" label="Pages of the files to ingest" />
    </Stack>
  );
});
