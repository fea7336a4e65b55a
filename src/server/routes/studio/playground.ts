import { z } from 'zod';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

const IdParams = z.object({ id: z.string().min(1).max(100) });
const AsQuery = z.object({ wallet: z.string().min(1).max(100).optional() });
export const PLAYGROUND_KEY_LABEL = 'studio playground';
export const BUYER_KEY_LABEL = 'studio playground (test buyer)';

/**
 * The playground calls /v1/retrieve with the client library, as a buyer's app would, so it needs an
 * API key of the listing's creator, or of the buyer it acts as. Keys are stored only as hashes, so the
 * plaintext is kept in memory: one key per wallet per server process, minted on first use (and again
 * if the creator revoked it), never written anywhere. The first mint of a launch revokes every
 * playground key of earlier launches, whichever wallet it was for: nobody holds their plaintext any
 * more, and each launch left one active per wallet it acted as (listed as live keys in API keys).
 * Playground keys are told apart by the purpose stored with them, not by their label: a key someone
 * made and labelled "studio playground" is theirs and stays live.
 */
export function playgroundRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const keys = new Map<string, { id: string; key: string }>();
  const launchedAt = new Date().toISOString();
  let earlierLaunchesRevoked = false;

  // Only keys older than this launch: another process on the same data directory keeps its own.
  const revokeEarlierLaunches = () => {
    if (earlierLaunchesRevoked) return;
    services.apiKeys.revokeMadeFor('playground', launchedAt);
    earlierLaunchesRevoked = true;
  };

  const keyFor = (wallet: string, label = PLAYGROUND_KEY_LABEL) => {
    const held = keys.get(wallet);
    if (held && services.apiKeys.list(wallet).some((k) => k.id === held.id && !k.revokedAt)) return held;
    const created = services.apiKeys.create(wallet, label, 'playground');
    const minted = { id: created.id, key: created.key };
    keys.set(wallet, minted);
    revokeEarlierLaunches();
    return minted;
  };

  route({
    method: 'get',
    path: '/listings/:id/playground-key',
    summary:
      "An API key for the playground (kept in memory, this launch only): the listing's creator's, or with ?wallet= a buyer wallet's (any the studio holds), so the playground gets exactly what that buyer would",
    tags: ['Studio'],
    params: IdParams,
    query: AsQuery,
    response: { status: 200, description: 'OK' },
    errors: [404],
    handler: ({ params, query }) => {
      const listing = services.listings.get(params.id, 'studio');
      // Acting as another wallet needs one this studio holds: a key acts for its wallet.
      const wallet =
        query.wallet && query.wallet !== listing.creatorWallet
          ? services.wallets.show(query.wallet).address
          : listing.creatorWallet;
      const label = wallet === listing.creatorWallet ? PLAYGROUND_KEY_LABEL : BUYER_KEY_LABEL;
      const { id, key } = keyFor(wallet, label);
      return { data: { listingId: listing.id, keyId: id, apiKey: key, wallet } };
    },
  });
}
