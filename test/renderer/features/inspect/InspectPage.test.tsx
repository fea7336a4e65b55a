import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Listing } from '../../../../src/shared/listings';
import { InspectPage } from '../../../../src/renderer/src/features/inspect/InspectPage';
import {
  documentKey,
  type DocumentListItem,
  type DocumentSummary,
} from '../../../../src/renderer/src/features/inspect/documentsApi';
import { queryKeys } from '../../../../src/renderer/src/lib/queryClient';
import type { StudioApi } from '../../../../src/renderer/src/lib/studioApi';
import { StudioApiProvider } from '../../../../src/renderer/src/lib/studioContext';

const GONE = 'lst_gone0123456789ab';
const listing = (id: string, title: string) => ({ id, title, documentCount: 1, chunkCount: 3 }) as Listing;

const document = (l: Listing): DocumentSummary => ({
  id: `doc_${l.id}`,
  listingId: l.id,
  source: `${l.title.toLowerCase()}.md`,
  format: 'markdown',
  bytes: 100,
  chunkCount: 3,
  documentCount: 1,
  contentHash: 'x',
  sourceKept: true,
  metadata: { chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 } },
  createdAt: '2025-01-01T00:00:00Z',
  updatedAt: '2025-01-01T00:00:00Z',
});

/** The page as the browser opens `hash`, with `workListing` the choice the other views kept. */
function render(
  hash: string,
  workListing: string | null,
  listings: Listing[],
  documentsOf: (l: Listing) => DocumentSummary[] = (l) => [document(l)],
) {
  const stored = new Map([['kbstudio.workListing', JSON.stringify(workListing)]]);
  vi.stubGlobal('window', {
    location: { hash },
    localStorage: { getItem: (k: string) => stored.get(k) ?? null, setItem: () => {} },
    addEventListener: () => {},
    removeEventListener: () => {},
  });
  const client = new QueryClient();
  client.setQueryData([...queryKeys.listings, { picker: true }], {
    data: listings,
    pagination: { total: listings.length, limit: listings.length, offset: 0, hasMore: false },
  });
  // The list names the documents; the one shown is read whole.
  for (const l of listings) {
    const docs = documentsOf(l);
    client.setQueryData<DocumentListItem[]>(
      ['documents', l.id],
      docs.map(({ id, source, format, chunkCount, documentCount }) => ({
        id,
        source,
        format,
        chunkCount,
        documentCount,
      })),
    );
    for (const doc of docs) client.setQueryData(documentKey(doc.id), doc);
  }
  const html = renderToStaticMarkup(
    <MantineProvider>
      <QueryClientProvider client={client}>
        <StudioApiProvider api={{} as StudioApi}>
          <InspectPage />
        </StudioApiProvider>
      </QueryClientProvider>
    </MantineProvider>,
  );
  // Only the listings that exist have their documents here: a query for any other is the page's.
  const documentsAsked = client
    .getQueryCache()
    .findAll({ queryKey: ['documents'] })
    .map((q) => q.queryKey[1]);
  return { html, documentsAsked };
}

afterEach(() => vi.unstubAllGlobals());

describe('Inspect opened at an address naming a listing that no longer exists', () => {
  it('never asks for its documents, shows another listing and says so', () => {
    const { html, documentsAsked } = render(`#/inspect?listing=${GONE}&document=a.md`, GONE, [
      listing('lst_handbook01234567', 'Handbook'),
      listing('lst_contracts0123456', 'Contracts'),
    ]);
    expect(documentsAsked).not.toContain(GONE);
    expect(html).toContain(
      `The listing in the address (${GONE}) no longer exists: showing “Handbook” instead.`,
    );
    expect(html).toContain('aria-label="Dismiss"');
    expect(html).toContain('handbook.md');
  });

  it('shows the listing the other views work on in its place, when that one exists', () => {
    const { html, documentsAsked } = render(`#/inspect?listing=${GONE}`, 'lst_contracts0123456', [
      listing('lst_handbook01234567', 'Handbook'),
      listing('lst_contracts0123456', 'Contracts'),
    ]);
    expect(documentsAsked).not.toContain(GONE);
    expect(html).toContain('no longer exists: showing “Contracts” instead.');
    expect(html).toContain('contracts.md');
  });

  it('says nothing of a listing the address names that exists', () => {
    const { html } = render('#/inspect?listing=lst_contracts0123456', 'lst_handbook01234567', [
      listing('lst_handbook01234567', 'Handbook'),
      listing('lst_contracts0123456', 'Contracts'),
    ]);
    expect(html).not.toContain('no longer exists');
    expect(html).toContain('contracts.md');
    expect(html).not.toContain('handbook.md');
  });
});

describe("Inspect's document line", () => {
  it('names the columns a CSV document required, which Re-ingest keeps', () => {
    const handbook = listing('lst_handbook01234567', 'Handbook');
    const csv = (chunking: Record<string, unknown>): DocumentSummary => ({
      ...document(handbook),
      source: 'notes.csv',
      format: 'csv',
      metadata: { chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64, ...chunking } },
    });
    const line = (chunking: Record<string, unknown>) =>
      render('#/inspect', handbook.id, [handbook], () => [csv(chunking)]).html.replace(/<!-- -->/g, '');
    expect(line({ csvRequiredColumns: ['notes', 'title'] })).toContain(
      'recursive, 512 tokens, 64 overlap, required columns: notes, title',
    );
    expect(line({})).toContain('64 overlap, required columns: every named column');
    expect(line({ csvRequiredColumns: [] })).toContain('64 overlap, required columns: none');
    // Another document has no such columns.
    expect(render('#/inspect', handbook.id, [handbook]).html).not.toContain('required columns');
  });
});
