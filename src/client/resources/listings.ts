import type { ApiPromise } from '../http/apiPromise';
import { envelopeData, jsonCall, resourcePath } from '../http/calls';
import type { RequestOptions, Transport } from '../http/request';
import { listCall, type PagePromise } from '../pagination';
import type { Listing, ListingSearchParams } from '../types';

export class Listings {
  constructor(private readonly transport: Transport) {}

  /**
   * GET /listings: await it for one page (`page.data`, `page.pagination`), or iterate it for every
   * listing of every page: `for await (const listing of client.listings.search({ q: 'law' }))`.
   */
  search(params: ListingSearchParams = {}, options?: RequestOptions): PagePromise<Listing> {
    return listCall<Listing>(this.transport, '/listings', { ...params }, options);
  }

  /** Browsing is a search without `q`; the same call under the name lists usually have. */
  list(params: ListingSearchParams = {}, options?: RequestOptions): PagePromise<Listing> {
    return this.search(params, options);
  }

  /** GET /listings/:id; an unknown listing (or another wallet's draft) is a NotFoundError. */
  get(id: string, options?: RequestOptions): ApiPromise<Listing> {
    return jsonCall(
      this.transport,
      () => ({ method: 'GET', path: resourcePath('/listings', id, 'listings.get: id') }),
      options,
      envelopeData<Listing>,
    );
  }
}
