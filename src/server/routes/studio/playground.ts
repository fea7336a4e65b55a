import { z } from 'zod';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

const IdParams = z.object({ id: z.string().min(1).max(100) });
export const PLAYGROUND_KEY_LABEL = 'studio playground';

/**
 * The playground calls /v1/retrieve with the client library, as a buyer's app would, so it needs an
 * API key of the listing's creator. Keys are stored only as hashes, so the plaintext is kept in
 * memory: one key per creator wallet per server process, minted on first use (and again if the
 * creator revoked it), never written anywhere.
 */
export function playgroundRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const keys = new Map<string, { id: string; key: string }>();

  const keyFor = (wallet: string) => {
    const held = keys.get(wallet);
    const active = held && services.apiKeys.list(wallet).some((k) => k.id === held.id && !k.revokedAt);
    if (held && active) return held;
    const created = services.apiKeys.create(wallet, PLAYGROUND_KEY_LABEL);
    const minted = { id: created.id, key: created.key };
    keys.set(wallet, minted);
    return minted;
  };

  route({
    method: 'get',
    path: '/listings/:id/playground-key',
    summary: "An API key of the listing's creator for the playground (kept in memory, this launch only)",
    tags: ['Studio'],
    params: IdParams,
    response: { status: 200, description: 'OK' },
    errors: [404],
    handler: ({ params }) => {
      const listing = services.listings.get(params.id, 'studio');
      const { id, key } = keyFor(listing.creatorWallet);
      return { data: { listingId: listing.id, keyId: id, apiKey: key, wallet: listing.creatorWallet } };
    },
  });
}
