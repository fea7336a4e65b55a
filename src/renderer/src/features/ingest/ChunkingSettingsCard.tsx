import { Card, NumberInput, SegmentedControl, Stack, Text } from '@mantine/core';
import { chunkingFieldErrors } from './chunkPreview';
import type { ChunkingFormValues, ChunkingStrategy } from './types';

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

/**
 * The chunking strategy, size and overlap. A number field may be empty while the user edits it (it is
 * not turned into 0); each field says what is wrong with it, and the caller sends nothing meanwhile.
 */
export function ChunkingSettingsCard({
  value,
  onChange,
  disabled,
}: {
  value: ChunkingFormValues;
  onChange: (next: ChunkingFormValues) => void;
  disabled?: boolean;
}) {
  const hint = STRATEGIES.find((s) => s.value === value.strategy)?.hint;
  const errors = chunkingFieldErrors(value);
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
          onChange={(v) => onChange({ ...value, chunkSize: v })}
          allowDecimal={false}
          allowNegative={false}
          error={errors.chunkSize}
        />
        <NumberInput
          label="Overlap (tokens)"
          min={0}
          max={typeof value.chunkSize === 'number' ? Math.max(0, value.chunkSize - 1) : undefined}
          step={16}
          disabled={disabled}
          value={value.chunkOverlap}
          onChange={(v) => onChange({ ...value, chunkOverlap: v })}
          allowDecimal={false}
          allowNegative={false}
          error={errors.chunkOverlap}
        />
      </Stack>
    </Card>
  );
}
