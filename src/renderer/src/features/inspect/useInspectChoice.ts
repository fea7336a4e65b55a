import { useCallback, useEffect, useState } from 'react';
import { sectionFromHash } from '../../lib/sections';
import { useListingChoice } from '../ingest/useListingChoice';
import { inspectHash, inspectHashParams, wantedDocument, type InspectAddress } from './inspectAddress';

/**
 * The listing Inspect shows and the document chosen in it, kept in the address (as the Playground
 * keeps its listing): a reload, Back or Forward finds the same document. The listing is the one the
 * other views work on (`useListingChoice`), unless the address names one: that one wins and becomes
 * the one they work on. Give what the page shows to `useInspectAddress`.
 */
export function useInspectChoice() {
  const [listingId, setListingId] = useListingChoice();
  const [address, setAddress] = useState(() => inspectHashParams(window.location.hash));
  // Bumped when the address changed under the page (a link to Inspect itself), to write it again.
  const [addressVersion, setAddressVersion] = useState(0);

  // Once per address: another tab choosing another listing is not written back.
  useEffect(() => {
    if (address.listing !== null) setListingId(address.listing);
  }, [address.listing, setListingId]);

  useEffect(() => {
    const onHashChange = () => {
      const hash = window.location.hash;
      if (sectionFromHash(hash) !== 'inspect') return;
      const params = inspectHashParams(hash);
      // `#/inspect` alone (the sidebar, while on Inspect) keeps the choice and is written again.
      if (params.listing !== null || params.document !== null) setAddress(params);
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
