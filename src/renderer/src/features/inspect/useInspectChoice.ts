import { useCallback, useEffect, useState } from 'react';
import type { Listing } from '../../../../shared/listings';
import { sectionFromHash } from '../../lib/sections';
import { useListingChoice } from '../ingest/useListingChoice';
import {
  inspectHash,
  inspectHashParams,
  resolveInspectListing,
  wantedDocument,
  type InspectAddress,
  type MissingListing,
} from './inspectAddress';

/**
 * The listing Inspect shows and the document chosen in it, kept in the address (as the Playground
 * keeps its listing): a reload, Back or Forward finds the same document. The listing is the one the
 * other views work on (`useListingChoice`), unless the address names one: that one wins and becomes
 * the one they work on. Nothing is shown before `listings` are loaded, so a listing that no longer
 * exists is never asked for: the address naming one gives `missing`, and the one shown instead.
 * Give what the page shows to `useInspectAddress`.
 */
export function useInspectChoice(listings: readonly Pick<Listing, 'id' | 'title'>[] | undefined) {
  const [shared, setShared] = useListingChoice();
  const [address, setAddress] = useState(() => inspectHashParams(window.location.hash));
  // The listing of the address, until it is the shared choice (or found not to exist): once per
  // address, so another tab choosing another listing is not written back.
  const [fromAddress, setFromAddress] = useState(address.listing);
  const [missing, setMissing] = useState<MissingListing | null>(null);
  // Bumped when the address changed under the page (a link to Inspect itself), to write it again.
  const [addressVersion, setAddressVersion] = useState(0);

  const choice = listings ? resolveInspectListing(listings, { address: fromAddress, shared }) : null;
  const listingId = choice?.listingId ?? null;
  if (choice && fromAddress !== null && (choice.missing !== null || shared === fromAddress)) {
    setFromAddress(null);
    if (choice.missing !== null) {
      setMissing({
        listing: choice.missing,
        shown: listings?.find((l) => l.id === choice.listingId) ?? null,
      });
    }
  }
  // Said of the listing shown in its place: choosing another one ends it.
  if (missing && listingId !== null && missing.shown?.id !== listingId) setMissing(null);

  useEffect(() => {
    if (fromAddress !== null && listingId === fromAddress) setShared(listingId);
  }, [fromAddress, listingId, setShared]);

  useEffect(() => {
    const onHashChange = () => {
      const hash = window.location.hash;
      if (sectionFromHash(hash) !== 'inspect') return;
      const params = inspectHashParams(hash);
      // `#/inspect` alone (the sidebar, while on Inspect) keeps the choice and is written again.
      if (params.listing !== null || params.document !== null) {
        setAddress(params);
        setFromAddress(params.listing);
      }
      setAddressVersion((v) => v + 1);
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);

  const chooseDocument = useCallback(
    (document: string | undefined) =>
      setAddress((a): InspectAddress => ({ listing: listingId ?? a.listing, document: document ?? null })),
    [listingId],
  );

  return {
    listingId,
    /** The document the address asks for in the listing shown (by source), if any. */
    wantedSource: wantedDocument(address, listingId),
    chooseDocument,
    addressVersion,
    /** The address named a listing that does not exist: shown until dismissed or another is chosen. */
    missingListing: missing,
    dismissMissingListing: useCallback(() => setMissing(null), []),
  };
}

/**
 * Writes what the page shows into the address once its documents are loaded: the wanted document, or
 * the first when that one no longer exists (so the address stops naming it, and nothing asks for it
 * again). Replaced in place, so that no history entry is added.
 */
export function useInspectAddress(shown: {
  listingId: string | null;
  loaded: boolean;
  source: string | null;
  addressVersion: number;
}) {
  const { listingId, loaded, source, addressVersion } = shown;
  useEffect(() => {
    if (!listingId || !loaded || sectionFromHash(window.location.hash) !== 'inspect') return;
    const hash = inspectHash({ listing: listingId, document: source });
    if (window.location.hash !== hash) window.history.replaceState(window.history.state, '', hash);
  }, [listingId, loaded, source, addressVersion]);
}
