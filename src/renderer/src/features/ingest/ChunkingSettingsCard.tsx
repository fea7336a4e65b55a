import { Card, Divider, NumberInput, SegmentedControl, Select, Stack, TagsInput, Text } from '@mantine/core';
import { CardTitle } from '../../components/CardTitle';
import { chunkingFieldErrors } from './chunkPreview';
import { csvRowsError } from './csvRows';
import type { ChunkingFormValues, ChunkingStrategy, CsvRowRule, CsvRowsFormValues } from './types';

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

const CSV_ROW_RULES: { value: CsvRowRule; label: string }[] = [
  { value: 'named', label: 'Every named column (default)' },
  { value: 'listed', label: 'Only the columns listed' },
  { value: 'none', label: 'None: keep every row' },
];

/**
 * The chunking strategy, size and overlap. A number field may be empty while the user edits it (it is
 * not turned into 0); each field says what is wrong with it, and the caller sends nothing meanwhile.
 * With `csvRows`, also the columns a CSV row must fill to be kept: on Ingest, for every CSV file of the
 * ingestion (`csvRowsScope` 'ingestion'); on Re-ingest, for the CSV document re-ingested ('document').
 */
export function ChunkingSettingsCard({
  value,
  onChange,
  disabled,
  csvRows,
  onCsvRowsChange,
  csvRowsScope = 'ingestion',
}: {
  value: ChunkingFormValues;
  onChange: (next: ChunkingFormValues) => void;
  disabled?: boolean;
  csvRows?: CsvRowsFormValues;
  onCsvRowsChange?: (next: CsvRowsFormValues) => void;
  csvRowsScope?: 'ingestion' | 'document';
}) {
  const hint = STRATEGIES.find((s) => s.value === value.strategy)?.hint;
  const errors = chunkingFieldErrors(value);
  return (
    <Card withBorder radius="md" p="md">
      <Stack gap="sm">
        <CardTitle size="sm">Chunking</CardTitle>
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
        {csvRows && onCsvRowsChange && (
          <CsvRowsFields
            value={csvRows}
            onChange={onCsvRowsChange}
            disabled={disabled}
            scope={csvRowsScope}
          />
        )}
      </Stack>
    </Card>
  );
}

/**
 * Which columns a CSV row must fill to be kept: a row with an empty cell in one of them is skipped (and
 * reported). The server's `csvRequiredColumns`, as `--required-columns` sets it for `kbstudio ingest`.
 */
function CsvRowsFields({
  value,
  onChange,
  disabled,
  scope,
}: {
  value: CsvRowsFormValues;
  onChange: (next: CsvRowsFormValues) => void;
  disabled?: boolean;
  scope: 'ingestion' | 'document';
}) {
  return (
    <>
      <Divider label="CSV rows" labelPosition="left" />
      <Select
        label="Required CSV columns"
        description={`A row with an empty cell in a required column is skipped, and ${
          scope === 'ingestion'
            ? 'the preview and the outcome list it. Applies to every CSV file ingested.'
            : 'the outcome lists it.'
        }`}
        data={CSV_ROW_RULES}
        value={value.rule}
        onChange={(rule) => rule && onChange({ ...value, rule: rule as CsvRowRule })}
        allowDeselect={false}
        disabled={disabled}
      />
      {value.rule === 'listed' && (
        <TagsInput
          label="Columns a row must fill"
          description="Header names as written in the file; a CSV file without one of them is not ingested."
          placeholder="Type a column name, then Enter"
          value={value.columns}
          onChange={(columns) => onChange({ ...value, columns })}
          splitChars={[',']}
          acceptValueOnBlur
          clearable
          disabled={disabled}
          error={csvRowsError(value)}
        />
      )}
    </>
  );
}
