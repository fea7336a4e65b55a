import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ChunkingSettingsCard } from '../../../src/renderer/src/features/ingest/ChunkingSettingsCard';
import {
  csvRequiredColumns,
  csvRowsError,
  DEFAULT_CSV_ROWS,
} from '../../../src/renderer/src/features/ingest/csvRows';
import { DEFAULT_CHUNKING } from '../../../src/renderer/src/features/ingest/ingestDraft';

const render = (node: React.ReactNode) =>
  renderToStaticMarkup(<MantineProvider>{node}</MantineProvider>)
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<!-- -->/g, '');

describe('the CSV row rule', () => {
  it('leaves the default to the server, keeps every row with "none", else sends the columns listed', () => {
    expect(csvRequiredColumns(DEFAULT_CSV_ROWS)).toBeUndefined();
    expect(csvRequiredColumns({ rule: 'none', columns: ['a'] })).toEqual([]);
    expect(csvRequiredColumns({ rule: 'listed', columns: [' Team ', 'Year', 'Team'] })).toEqual([
      'Team',
      'Year',
    ]);
  });

  it('refuses an empty list, as the server would keep every row for it', () => {
    expect(csvRowsError({ rule: 'listed', columns: [] })).toBe(
      'Name at least one column, or choose “Every named column”.',
    );
    expect(csvRequiredColumns({ rule: 'listed', columns: [] })).toBeUndefined();
    expect(csvRowsError({ rule: 'listed', columns: ['x'.repeat(201)] })).toMatch(/at most 200 characters/);
  });
});

describe('ChunkingSettingsCard', () => {
  it('offers the required CSV columns on Ingest, with the columns listed', () => {
    const html = render(
      <ChunkingSettingsCard
        value={DEFAULT_CHUNKING}
        onChange={() => {}}
        csvRows={{ rule: 'listed', columns: ['notes'] }}
        onCsvRowsChange={() => {}}
      />,
    );
    expect(html).toContain('Required CSV columns');
    expect(html).toContain('value="Only the columns listed"');
    expect(html).toContain('Columns a row must fill');
    expect(html).toMatch(/value="notes"|>notes</);
  });

  it('leaves it out where it does not apply (a re-ingestion keeps the document’s own)', () => {
    const html = render(<ChunkingSettingsCard value={DEFAULT_CHUNKING} onChange={() => {}} />);
    expect(html).toContain('Chunk size (tokens)');
    expect(html).not.toContain('Required CSV columns');
  });
});
