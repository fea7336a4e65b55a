import { ActionIcon, Button, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { FILTER_OPS, newFilterRow, type FilterOp, type FilterRow } from './filterRows';

const PLACEHOLDER: Record<FilterOp, string> = {
  '=': 'value',
  '≠': 'value',
  '>': 'number or text',
  '≥': 'number or text',
  '<': 'number or text',
  '≤': 'number or text',
  in: 'a, b, c',
  'not in': 'a, b, c',
  exists: 'true',
};

/** Metadata filters as rows of key, operator and value; rows on one key are ANDed. */
export function FilterEditor({
  rows,
  errors,
  onChange,
}: {
  rows: FilterRow[];
  errors: Record<string, string>;
  onChange: (rows: FilterRow[]) => void;
}) {
  const update = (id: string, patch: Partial<FilterRow>) =>
    onChange(rows.map((row) => (row.id === id ? { ...row, ...patch } : row)));
  return (
    <Stack gap={6} role="group" aria-label="Metadata filters">
      {rows.length === 0 && (
        <Text size="xs" c="dimmed">
          No filters: every chunk of the listing can match.
        </Text>
      )}
      {rows.map((row, index) => (
        <Group key={row.id} gap={6} wrap="nowrap" align="flex-start">
          <TextInput
            size="xs"
            placeholder="key, e.g. source"
            aria-label={`Filter ${index + 1} key`}
            value={row.key}
            onChange={(e) => update(row.id, { key: e.currentTarget.value })}
            error={errors[row.id]}
            style={{ flex: 1.2 }}
          />
          <Select
            size="xs"
            aria-label={`Filter ${index + 1} operator`}
            data={[...FILTER_OPS]}
            value={row.op}
            allowDeselect={false}
            onChange={(op) => op && update(row.id, { op: op as FilterOp })}
            w={86}
            comboboxProps={{ withinPortal: true }}
          />
          <TextInput
            size="xs"
            placeholder={PLACEHOLDER[row.op]}
            aria-label={`Filter ${index + 1} value`}
            value={row.value}
            onChange={(e) => update(row.id, { value: e.currentTarget.value })}
            style={{ flex: 1 }}
          />
          <ActionIcon
            variant="subtle"
            color="gray"
            aria-label={`Remove filter ${index + 1}`}
            onClick={() => onChange(rows.filter((r) => r.id !== row.id))}
            mt={2}
          >
            <IconTrash size={15} />
          </ActionIcon>
        </Group>
      ))}
      <Button
        size="compact-xs"
        variant="subtle"
        leftSection={<IconPlus size={13} />}
        onClick={() => onChange([...rows, newFilterRow()])}
        style={{ alignSelf: 'flex-start' }}
      >
        Add filter
      </Button>
    </Stack>
  );
}
