import { describe, expect, it } from 'vitest';
import {
  DOCUMENT_ROWS,
  documentRows,
  filterDocuments,
  inspectHash,
  inspectHashParams,
  missingListingNotice,
  resolveInspectListing,
  wantedDocument,
} from '../../../../src/renderer/src/features/inspect/inspectAddress';

const docs = Array.from({ length: 8_000 }, (_, i) => ({
  id: `doc_${i}`,
  source: `handbook/section-${String(i).padStart(4, '0')}.md`,
}));

describe('Inspect’s address', () => {
  it('names the listing and the document, and reads them back, whatever the file name holds', () => {
    const source = 'policies/leave & pay?#2 — été.md';
    const hash = inspectHash({ listing: 'lst_1', document: source });
    expect(hash).toMatch(/^#\/inspect\?listing=lst_1&document=/);
    expect(inspectHashParams(hash)).toEqual({ listing: 'lst_1', document: source });
    expect(inspectHash({ listing: 'lst_1', document: null })).toBe('#/inspect?listing=lst_1');
    expect(inspectHashParams('#/inspect')).toEqual({ listing: null, document: null });
  });

  it('asks for its document only in the listing it names (or in any, when it names none)', () => {
    expect(wantedDocument({ listing: 'lst_1', document: 'a.md' }, 'lst_1')).toBe('a.md');
    expect(wantedDocument({ listing: 'lst_1', document: 'a.md' }, 'lst_2')).toBeNull();
    expect(wantedDocument({ listing: null, document: 'a.md' }, 'lst_2')).toBe('a.md');
  });
});

describe('the listing Inspect shows', () => {
  const listings = [{ id: 'lst_a' }, { id: 'lst_b' }];

  it('is the one the address names, else the shared choice, else the first', () => {
    expect(resolveInspectListing(listings, { address: 'lst_b', shared: 'lst_a' })).toEqual({
      listingId: 'lst_b',
      missing: null,
    });
    expect(resolveInspectListing(listings, { address: null, shared: 'lst_b' }).listingId).toBe('lst_b');
    expect(resolveInspectListing(listings, { address: null, shared: 'lst_gone' }).listingId).toBe('lst_a');
    expect(resolveInspectListing([], { address: null, shared: null })).toEqual({
      listingId: null,
      missing: null,
    });
  });

  it('is never a listing that no longer exists: the address naming one is reported', () => {
    expect(resolveInspectListing(listings, { address: 'lst_gone', shared: 'lst_b' })).toEqual({
      listingId: 'lst_b',
      missing: 'lst_gone',
    });
    expect(resolveInspectListing(listings, { address: 'lst_gone', shared: 'lst_gone' })).toEqual({
      listingId: 'lst_a',
      missing: 'lst_gone',
    });
    expect(resolveInspectListing([], { address: 'lst_gone', shared: null })).toEqual({
      listingId: null,
      missing: 'lst_gone',
    });
  });

  it('says which listing is shown in place of a missing one, a long id cut', () => {
    expect(missingListingNotice({ listing: 'lst_gone', shown: { id: 'lst_a', title: 'Handbook' } })).toBe(
      'The listing in the address (lst_gone) no longer exists: showing “Handbook” instead.',
    );
    expect(missingListingNotice({ listing: `lst_${'x'.repeat(60)}`, shown: null })).toBe(
      `The listing in the address (lst_${'x'.repeat(35)}…) no longer exists.`,
    );
  });
});

describe('the document list at 8,000 documents', () => {
  it('draws a bounded number of rows, then the selected one when it lies further down', () => {
    const shown = filterDocuments(docs, '');
    expect(shown).toHaveLength(8_000);
    const first = documentRows(shown, DOCUMENT_ROWS, docs[0]);
    expect(first.rows).toHaveLength(DOCUMENT_ROWS);
    expect(first.beyond).toBeUndefined();
    const far = documentRows(shown, DOCUMENT_ROWS, docs[7_000]);
    expect(far.rows).toHaveLength(DOCUMENT_ROWS);
    expect(far.beyond).toBe(docs[7_000]);
    // The selected document filtered out is not drawn.
    expect(
      documentRows(filterDocuments(docs, 'section-01'), DOCUMENT_ROWS, docs[7_000]).beyond,
    ).toBeUndefined();
  });

  it('filters by name, case ignored, and lists every document for a blank filter', () => {
    expect(filterDocuments(docs, '  SECTION-799').map((d) => d.id)).toEqual(
      Array.from({ length: 10 }, (_, i) => `doc_${7990 + i}`),
    );
    expect(filterDocuments(docs, '   ')).toHaveLength(8_000);
  });
});
