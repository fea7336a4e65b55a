import { Badge, Button, Card, Group, Table, Text } from '@mantine/core';
import { IconTrophy } from '@tabler/icons-react';
import { CardTitle } from '../../components/CardTitle';
import type { EvalRun } from './evalTypes';
import { compareRuns } from './runComparison';

/** Two or more runs side by side: metrics with the better value highlighted, then their settings. */
export function RunComparison({ runs, onClear }: { runs: EvalRun[]; onClear: () => void }) {
  const rows = compareRuns(runs);
  return (
    <Card withBorder padding={0} aria-label="Run comparison" component="section">
      <Group justify="space-between" px="md" pt="md" pb="xs">
        <div>
          <CardTitle size="sm">Comparing {runs.length} runs</CardTitle>
          <Text size="xs" c="dimmed">
            The better value of each metric is highlighted; settings that differ are marked.
          </Text>
        </div>
        <Button size="xs" variant="subtle" color="gray" onClick={onClear}>
          Clear comparison
        </Button>
      </Group>
      <Table.ScrollContainer minWidth={220 + runs.length * 170}>
        <Table aria-label="Compared runs" verticalSpacing={6} horizontalSpacing="md" withColumnBorders>
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={180} />
              {runs.map((run) => (
                <Table.Th key={run.id} miw={150}>
                  <Text size="sm" fw={600} lineClamp={2} title={run.name}>
                    {run.name}
                  </Text>
                  <Text size="xs" c="dimmed" fw={400}>
                    {new Date(run.createdAt).toLocaleString()}
                  </Text>
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => (
              <Table.Tr key={row.key} data-differs={row.kind === 'setting' && row.differs ? '' : undefined}>
                <Table.Th scope="row" fw={row.kind === 'metric' ? 600 : 500}>
                  <Group gap={6} wrap="nowrap">
                    <Text size="sm" fw="inherit">
                      {row.label}
                    </Text>
                    {row.kind === 'setting' && row.differs && (
                      <Badge size="xs" variant="light" color="yellow">
                        differs
                      </Badge>
                    )}
                  </Group>
                </Table.Th>
                {row.display.map((value, i) => {
                  const best = row.kind === 'metric' && row.best[i];
                  return (
                    <Table.Td
                      key={runs[i]!.id}
                      ff={row.kind === 'metric' ? 'monospace' : undefined}
                      fz="sm"
                      fw={best ? 700 : 400}
                      c={best ? 'var(--mantine-color-teal-light-color)' : undefined}
                      bg={best ? 'var(--mantine-color-teal-light)' : undefined}
                      data-best={best ? '' : undefined}
                      style={{ overflowWrap: 'anywhere' }}
                    >
                      <Group gap={4} wrap="nowrap" justify="space-between">
                        <span>{value}</span>
                        {best && <IconTrophy size={14} aria-label="best" />}
                      </Group>
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Card>
  );
}
