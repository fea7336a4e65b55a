import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { PreviewFacts, PreviewPanel } from '../../../src/renderer/src/features/ingest/PreviewPanel';

const render = (node: React.ReactNode) =>
  renderToStaticMarkup(
    <QueryClientProvider client={new QueryClient()}>
      <MantineProvider>{node}</MantineProvider>
    </QueryClientProvider>,
  )
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<!-- -->/g, '');

const preview = {
  totalChunks: 2,
  totalTokens: 26,
  chunks: [
    { index: 0, text: 'name: Ada\nnotes: first', tokenCount: 13, metadata: { row: 1 } },
    { index: 1, text: 'name: Cy\nnotes: third', tokenCount: 13, metadata: { row: 3 } },
  ],
  skippedRows: [
    { row: 2, reason: 'empty required field(s): notes' },
    { row: 4, reason: 'empty required field(s): notes' },
  ],
};

describe('the chunk preview', () => {
  it('says which CSV rows it leaves out and why, and where to choose the required columns', () => {
    const html = render(<PreviewFacts preview={preview} columnsChosen={false} />);
    expect(html).toContain('2 chunks · 26 tokens');
    expect(html).toContain(
      '2 CSV rows skipped: rows 2 and 4 (empty required field(s): notes). A row needs every named column unless told otherwise: choose the columns it needs under “Required CSV columns” in Chunking.',
    );
    // Chosen already: the hint is not repeated.
    const chosen = render(<PreviewFacts preview={preview} columnsChosen />);
    expect(chosen).toContain('2 CSV rows skipped: rows 2 and 4 (empty required field(s): notes)</');
  });

  it('of a file changed on disk says so rather than showing its old text', () => {
    const html = render(
      <PreviewPanel
        files={[{ path: 'handbook/policy.md', file: new File(['old'], 'policy.md'), changed: true }]}
        chosen={null}
        onChoose={() => {}}
        settings={{ strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 }}
      />,
    );
    expect(html).toContain(
      '&#x27;handbook/policy.md&#x27; changed (or was removed) on disk after it was added: remove it from the queue and add it again.',
    );
    expect(html).not.toContain('Chunking handbook/policy.md…');
  });
});
