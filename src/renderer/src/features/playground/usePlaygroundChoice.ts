import { useEffect, useState } from 'react';
import type { Listing } from '../../../../shared/listings';
import { sectionFromHash } from '../../lib/sections';
import { useListingChoice } from '../ingest/useListingChoice';
import { playgroundHashParams } from './actingAs';
import { playgroundHash, resolvePlaygroundListing } from './playgroundAddress';

/**
 * The listing the playground queries and the test buyer it acts as. The listing is the one the other
 * views work on (`useListingChoice`), unless the address names one (a link from Test buyers, or a
 * reload): that one wins, and becomes the one they work on. The address follows every choice,
 * replaced in place so that no history entry is added, and a reload finds the same choices.
 */
export function usePlaygroundChoice(listings: readonly Pick<Listing, 'id' | 'chunkCount'>[] | undefined) {
  const [shared, setShared] = useListingChoice();
  // What the address says (as the page was opened, or as it was since chosen): `as` is the wallet of a
  // test buyer, for the listing it names (for whichever is shown when it names none).
  const [address, setAddress] = useState(() => playgroundHashParams(window.location.hash));
  // Bumped when the address changed under the page (a link to the playground itself), to write it again.
  const [addressVersion, setAddressVersion] = useState(0);

  const listingId = listings
    ? resolvePlaygroundListing(listings, { address: address.listing, shared })
    : null;
  const fromAddress = listingId !== null && listingId === address.listing;
  const actingAs = listingId !== null && (address.listing === null || fromAddress) ? address.as : null;

  // The listing the address names becomes the shared choice, once per address: another tab choosing
  // another listing is not written back, so two open playgrounds do not take turns.
  useEffect(() => {
    if (fromAddress) setShared(listingId);
  }, [fromAddress, listingId, setShared]);
  // None chosen yet (or it was deleted): the one shown is the choice, as the other views' picker does.
  useEffect(() => {
    if (listingId !== null && !fromAddress && listingId !== shared) setShared(listingId);
  }, [listingId, fromAddress, shared, setShared]);

  useEffect(() => {
    const onHashChange = () => {
      const hash = window.location.hash;
      if (sectionFromHash(hash) !== 'playground') return;
      const params = playgroundHashParams(hash);
      if (params.listing !== null) setAddress(params);
      setAddressVersion((v) => v + 1);
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);

  useEffect(() => {
    if (listingId === null || sectionFromHash(window.location.hash) !== 'playground') return;
    const hash = playgroundHash(listingId, actingAs);
    if (window.location.hash !== hash) window.history.replaceState(window.history.state, '', hash);
  }, [listingId, actingAs, addressVersion]);

  return {
    listingId,
    actingAs,
    chooseListing: (id: string) => {
      setAddress({ listing: id, as: null });
      setShared(id);
    },
    chooseActingAs: (wallet: string | null) => {
      if (listingId !== null) setAddress({ listing: listingId, as: wallet });
    },
  };
}
