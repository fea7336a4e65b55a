import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DocumentSummary } from '../../../../src/renderer/src/features/inspect/documentsApi';
import { ReingestDialog } from '../../../../src/renderer/src/features/inspect/ReingestModal';

const document = (format: string, chunking: Record<string, unknown>): DocumentSummary => ({
  id: 'doc_1',
  listingId: 'lst_1',
  source: `notes.${format}`,
  format,
  bytes: 100,
  chunkCount: 2,
  documentCount: 1,
  contentHash: 'x',
  sourceKept: true,
  metadata: { chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64, ...chunking } },
  createdAt: '2025-01-01T00:00:00Z',
  updatedAt: '2025-01-01T00:00:00Z',
});

const render = (doc: DocumentSummary) =>
  renderToStaticMarkup(
    <MantineProvider>
      <QueryClientProvider client={new QueryClient()}>
        <ReingestDialog document={doc} onClose={() => {}} onFinished={() => {}} onRunning={() => {}} />
      </QueryClientProvider>
    </MantineProvider>,
  )
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<!-- -->/g, '');

describe('the Re-ingest dialog of a CSV document', () => {
  it('says which columns a row had to fill, and offers to change them, starting from them', () => {
    const html = render(document('csv', { csvRequiredColumns: ['notes'] }));
    expect(html).toContain(
      'These are the settings it was ingested with (required columns: notes): unless the file’s handling changed',
    );
    expect(html).toContain('Required CSV columns');
    expect(html).toContain('value="Only the columns listed"');
    expect(html).toMatch(/Columns a row must fill[\s\S]*notes/);
    // Of this document, not of every CSV file of an ingestion.
    expect(html).not.toContain('Applies to every CSV file ingested');
  });

  it('starts from every named column, or none, as the document was ingested', () => {
    const named = render(document('csv', {}));
    expect(named).toContain('(required columns: every named column)');
    expect(named).toContain('value="Every named column (default)"');
    const none = render(document('csv', { csvRequiredColumns: [] }));
    expect(none).toContain('(required columns: none)');
    expect(none).toContain('value="None: keep every row"');
  });

  it('offers no CSV columns for another document', () => {
    const html = render(document('markdown', {}));
    expect(html).not.toContain('Required CSV columns');
    expect(html).not.toContain('required columns');
  });
});
