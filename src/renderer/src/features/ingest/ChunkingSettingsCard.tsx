import { Card, NumberInput, SegmentedControl, Stack, Text } from '@mantine/core';
import type { ChunkingSettings, ChunkingStrategy } from './types';

const STRATEGIES: { value: ChunkingStrategy; label: string; hint: string }[] = [
  {
    value: 'recursive',
    label: 'Recursive',
    hint: 'Splits at paragraphs, then lines, then sentences: a good default.',
  },
  { value: 'sentence', label: 'Sentence', hint: 'Packs whole sentences up to the chunk size.' },
  { value: 'markdown', label: 'Headings', hint: 'Keeps each heading’s section together where it fits.' },
  { value: 'fixed', label: 'Fixed', hint: 'Cuts every N tokens, whatever the text says.' },
];

export function ChunkingSettingsCard({
  value,
  onChange,
  error,
  disabled,
}: {
  value: ChunkingSettings;
  onChange: (next: ChunkingSettings) => void;
  error?: string;
  disabled?: boolean;
}) {
  const hint = STRATEGIES.find((s) => s.value === value.strategy)?.hint;
  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="sm">
        <Text fw={600} size="sm">
          Chunking
        </Text>
        <div>
          <SegmentedControl
            aria-label="Chunking strategy"
            fullWidth
            size="xs"
            disabled={disabled}
            data={STRATEGIES.map(({ value: v, label }) => ({ value: v, label }))}
            value={value.strategy}
            onChange={(strategy) => onChange({ ...value, strategy: strategy as ChunkingStrategy })}
          />
          <Text size="xs" c="dimmed" mt={6}>
            {hint}
          </Text>
        </div>
        <NumberInput
          label="Chunk size (tokens)"
          min={16}
          max={8192}
          step={64}
          disabled={disabled}
          value={value.chunkSize}
          onChange={(v) => onChange({ ...value, chunkSize: Number(v) })}
          allowDecimal={false}
        />
        <NumberInput
          label="Overlap (tokens)"
          min={0}
          max={Math.max(0, value.chunkSize - 1)}
          step={16}
          disabled={disabled}
          value={value.chunkOverlap}
          onChange={(v) => onChange({ ...value, chunkOverlap: Number(v) })}
          allowDecimal={false}
          error={error}
        />
      </Stack>
    </Card>
  );
}
