import { z } from 'zod';
import { ListingIdSchema, ListingSchema, ListingSearchQuerySchema } from '../../../shared/listings';
import { PaginationSchema, paginationOf } from '../../../shared/pagination';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

const ListingPageSchema = z
  .object({ data: z.array(ListingSchema), pagination: PaginationSchema })
  .meta({ id: 'ListingPage' });
const ListingEnvelopeSchema = z.object({ data: ListingSchema }).meta({ id: 'ListingEnvelope' });

export function listingRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  route({
    method: 'get',
    path: '/listings',
    summary: 'Search and browse listings',
    description:
      "Published listings, plus the caller's own drafts. `q` is full-text (every word must match, as a prefix) over title, description, domain and tags. Query parameters may also be given in snake_case (`access_model`, `max_price`, `min_rating`).",
    tags: ['Listings'],
    query: ListingSearchQuerySchema,
    response: { status: 200, description: 'A page of listings.', schema: ListingPageSchema },
    handler: ({ req, query }) => {
      const page = services.listings.search(query, { wallet: req.principal!.wallet });
      return { data: page.items, pagination: paginationOf(page) };
    },
  });

  route({
    method: 'get',
    path: '/listings/:id',
    summary: 'Get a listing by ID',
    tags: ['Listings'],
    params: z.object({ id: ListingIdSchema }),
    response: { status: 200, description: 'The listing.', schema: ListingEnvelopeSchema },
    errors: [404],
    handler: ({ req, params }) => ({
      data: services.listings.get(params.id, { wallet: req.principal!.wallet }),
    }),
  });
}
