/**
 * Inspect's own address, `#/inspect?listing=lst_…&document=<source>`: the listing and the document
 * shown, kept in step with the choices so that a reload, Back and Forward find them again. The
 * document is named by its source (file name), as the page follows it: a re-ingested document is a
 * new document under the same name.
 */
export interface InspectAddress {
  listing: string | null;
  document: string | null;
}

export function inspectHash({ listing, document }: InspectAddress): string {
  const params = new URLSearchParams();
  if (listing) params.set('listing', listing);
  if (document) params.set('document', document);
  const query = params.toString();
  return query ? `#/inspect?${query}` : '#/inspect';
}

export function inspectHashParams(hash: string): InspectAddress {
  const query = hash.includes('?') ? hash.slice(hash.indexOf('?') + 1) : '';
  const params = new URLSearchParams(query);
  return { listing: params.get('listing') || null, document: params.get('document') || null };
}

/**
 * The document the address asks for in `listingId`: none when it names another listing (the picker
 * has since moved on). An address without a listing names a document of whichever listing is shown.
 */
export function wantedDocument(address: InspectAddress, listingId: string | null): string | null {
  if (address.listing !== null && address.listing !== listingId) return null;
  return address.document;
}

/**
 * The listing Inspect shows, once the listings are loaded: the one the address names, else the one the
 * other views work on, else the first (as the listing picker then chooses). A listing the address names
 * that is not among them (deleted since, or a link from elsewhere) is `missing`: the page says so, and
 * never asks for its documents (the server would answer 404).
 */
export function resolveInspectListing(
  listings: readonly { id: string }[],
  wanted: { address: string | null; shared: string | null },
): { listingId: string | null; missing: string | null } {
  const known = (id: string | null) => id !== null && listings.some((l) => l.id === id);
  if (known(wanted.address)) return { listingId: wanted.address, missing: null };
  return {
    listingId: known(wanted.shared) ? wanted.shared : (listings[0]?.id ?? null),
    missing: wanted.address,
  };
}

/** A listing the address named that does not exist, and the one shown in its place (if any). */
export interface MissingListing {
  listing: string;
  shown: { id: string; title: string } | null;
}

/**
 * "The listing in the address (lst_…) no longer exists: showing “Handbook” instead." A listing id is 20
 * characters; a longer one (a link typed by hand) is cut.
 */
export function missingListingNotice({ listing, shown }: MissingListing): string {
  const named = `The listing in the address (${listing.length > 40 ? `${listing.slice(0, 39)}…` : listing})`;
  return shown
    ? `${named} no longer exists: showing “${shown.title}” instead.`
    : `${named} no longer exists.`;
}

/** How many rows the document list draws at first, and how many more each "Show more" adds. */
export const DOCUMENT_ROWS = 200;

/**
 * The rows the document list draws: the first `limit` of `shown` (the documents whose name matches
 * the filter), plus the selected one when it lies further down, so the document on screen is always
 * in the list. Thousands of rows made every keystroke in the filter take half a second.
 */
export function documentRows<T extends { id: string }>(
  shown: readonly T[],
  limit: number,
  selected: T | undefined,
): { rows: T[]; beyond: T | undefined } {
  const rows = shown.slice(0, limit);
  const beyond =
    selected && !rows.some((d) => d.id === selected.id) && shown.some((d) => d.id === selected.id)
      ? selected
      : undefined;
  return { rows, beyond };
}

/** Documents whose name contains `filter` (case ignored); all of them for a blank filter. */
export function filterDocuments<T extends { source: string }>(docs: readonly T[], filter: string): T[] {
  const needle = filter.trim().toLowerCase();
  if (!needle) return docs.slice();
  return docs.filter((d) => d.source.toLowerCase().includes(needle));
}
