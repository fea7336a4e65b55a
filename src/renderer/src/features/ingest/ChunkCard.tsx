import { Badge, Group, Paper, Spoiler, Text } from '@mantine/core';
import { counted, formatCount } from '../../lib/format';
import { metadataItems } from './chunkPreview';

/**
 * One chunk: its position, token count, sourceMetadata and text (the overlap with the previous one
 * dimmed). `focusTarget`: the chunk takes the focus next (Inspect's "Go to chunk"), so it can be focused.
 */
export function ChunkCard({
  index,
  text,
  tokenCount,
  metadata,
  overlap = 0,
  focusTarget = false,
}: {
  index: number;
  text: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
  overlap?: number;
  focusTarget?: boolean;
}) {
  const items = metadataItems(metadata);
  return (
    <Paper
      withBorder
      radius="md"
      p="sm"
      component="article"
      aria-label={`Chunk ${index + 1}`}
      tabIndex={focusTarget ? -1 : undefined}
      className={focusTarget ? 'kb-focus-target' : undefined}
    >
      <Group justify="space-between" gap="xs" mb={6} wrap="nowrap" align="flex-start">
        <Group gap={6} wrap="wrap">
          <Text size="xs" fw={600} c="dimmed">
            #{formatCount(index + 1)}
          </Text>
          {items.map((item) => (
            <Badge
              key={item.key}
              size="sm"
              variant="light"
              color={item.key === 'page' || item.key === 'row' ? 'indigo' : 'gray'}
              tt="none"
              maw={360}
              title={`${item.label}: ${item.value}`}
            >
              {item.label}: {item.value}
            </Badge>
          ))}
        </Group>
        <Badge size="sm" variant="outline" color="gray" tt="none" style={{ flex: 'none' }}>
          {counted(tokenCount, 'token')}
        </Badge>
      </Group>
      <Spoiler
        maxHeight={96}
        showLabel="Show all"
        hideLabel="Show less"
        // Every collapsed chunk has one: each is named with its chunk.
        showAriaLabel={`Show all of chunk ${index + 1}`}
        hideAriaLabel={`Show less of chunk ${index + 1}`}
        styles={{ control: { fontSize: 'var(--mantine-font-size-xs)' } }}
      >
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
          {overlap > 0 && (
            <Text span c="dimmed" title="Shared with the previous chunk (overlap)">
              {text.slice(0, overlap)}
            </Text>
          )}
          {text.slice(overlap)}
        </Text>
      </Spoiler>
    </Paper>
  );
}
