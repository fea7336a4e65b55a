import { describe, expect, it } from 'vitest';
import { readAllListings } from '../../../src/renderer/src/features/ingest/ListingPicker';
import type { StudioApi } from '../../../src/renderer/src/lib/studioApi';
import type { Listing } from '../../../src/shared/listings';

type List = StudioApi['listings']['list'];

const listing = (i: number) => ({ id: `lst_${i}`, title: `Listing ${i}`, documentCount: 0 }) as Listing;

/** A server holding `all` listings, newest first, answering at most 100 a page as GET /studio/listings does. */
function serverOf(all: Listing[], asked: { limit?: number; offset?: number }[] = []): List {
  return async (query = {}) => {
    asked.push(query);
    const limit = Math.min(query.limit ?? 20, 100);
    const offset = query.offset ?? 0;
    const data = all.slice(offset, offset + limit);
    return {
      data,
      pagination: { total: all.length, limit, offset, hasMore: offset + data.length < all.length },
    };
  };
}

describe('the listings a picker offers', () => {
  it('reads every page: with 105 listings, the 5 oldest are offered too', async () => {
    const all = Array.from({ length: 105 }, (_, i) => listing(i));
    const asked: { limit?: number; offset?: number }[] = [];
    const page = await readAllListings(serverOf(all, asked));
    expect(page.data.map((l) => l.id)).toEqual(all.map((l) => l.id));
    expect(page.pagination).toMatchObject({ total: 105, hasMore: false });
    expect(asked).toEqual([
      { limit: 100, offset: 0 },
      { limit: 100, offset: 100 },
    ]);
  });

  it('keeps a listing once when a new one shifts it into the next page', async () => {
    const all = Array.from({ length: 150 }, (_, i) => listing(i));
    const list = serverOf(all);
    let calls = 0;
    const page = await readAllListings(async (query) => {
      // A listing is created between the two pages: every listing moves one place down.
      if (calls++ === 1) all.unshift(listing(999));
      return list(query);
    });
    expect(page.data).toHaveLength(150);
    expect(new Set(page.data.map((l) => l.id)).size).toBe(150);
  });

  it('stops at an empty page, even if the server says there is more', async () => {
    const page = await readAllListings(async () => ({
      data: [],
      pagination: { total: 5, limit: 100, offset: 0, hasMore: true },
    }));
    expect(page.data).toEqual([]);
  });
});
