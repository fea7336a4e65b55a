import { Box, Group, Stack, Text, Tooltip } from '@mantine/core';
import type { EvalRun } from './evalTypes';

const HEIGHT = 140;

/** Scores of the top-10 chunks of every question, in bins of 0.05: relevant stacked over the rest. */
export function ScoreHistogram({ bins }: { bins: EvalRun['report']['distribution'] }) {
  const max = Math.max(1, ...bins.map((b) => b.relevant + b.other));
  return (
    <Stack gap={6}>
      <Group gap={2} align="flex-end" h={HEIGHT} role="img" aria-label="Score distribution" wrap="nowrap">
        {bins.map((bin) => (
          <Tooltip
            key={bin.from}
            label={`${bin.from.toFixed(2)}–${bin.to.toFixed(2)}: ${bin.relevant} relevant, ${bin.other} other`}
            withinPortal
          >
            <Stack gap={0} justify="flex-end" h="100%" style={{ flex: 1 }} data-testid="histogram-bin">
              <Box h={(bin.other / max) * HEIGHT} bg="gray.4" style={{ borderRadius: '2px 2px 0 0' }} />
              <Box h={(bin.relevant / max) * HEIGHT} bg="teal.6" />
            </Stack>
          </Tooltip>
        ))}
      </Group>
      <Group justify="space-between">
        <Text size="xs" c="dimmed">
          0
        </Text>
        <Group gap="md">
          <Legend color="teal.6" label="Relevant" />
          <Legend color="gray.4" label="Not relevant" />
        </Group>
        <Text size="xs" c="dimmed">
          1
        </Text>
      </Group>
    </Stack>
  );
}

function Legend({ color, label }: { color: string; label: string }) {
  return (
    <Group gap={4}>
      <Box w={10} h={10} bg={color} style={{ borderRadius: 2 }} />
      <Text size="xs" c="dimmed">
        {label}
      </Text>
    </Group>
  );
}
