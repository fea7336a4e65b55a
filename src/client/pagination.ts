import { ApiPromise } from './http/apiPromise';
import { envelopeData, jsonCall } from './http/calls';
import type { ApiRequest, RequestOptions, Transport } from './http/request';
import { KnowledgeClientError } from './errors';
import type { Pagination } from './types';

/**
 * One page of a list endpoint. `for await (const item of page)` goes on through the following pages,
 * fetching each when the previous one is used up.
 */
export class Page<T> implements AsyncIterable<T> {
  constructor(
    readonly data: T[],
    readonly pagination: Pagination,
    private readonly fetchAt: (offset: number) => PagePromise<T>,
  ) {}

  /** An empty page never has a next one, so a server that keeps saying `hasMore` cannot loop forever. */
  hasNextPage(): boolean {
    return this.pagination.hasMore && this.data.length > 0;
  }

  nextPage(): PagePromise<T> {
    if (!this.hasNextPage())
      throw new KnowledgeClientError('This is the last page: check hasNextPage() first.');
    return this.fetchAt(this.pagination.offset + this.data.length);
  }

  /** This page and every one after it. */
  async *pages(): AsyncGenerator<Page<T>> {
    yield this;
    let next = this.hasNextPage() ? this.nextPage() : undefined;
    while (next) {
      const page = await next;
      yield page;
      next = page.hasNextPage() ? page.nextPage() : undefined;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }
}

/** A list call: await it for the first page, or iterate it for every item of every page. */
export class PagePromise<T> extends ApiPromise<Page<T>> implements AsyncIterable<T> {
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    yield* await this;
  }
}

/** GET a list endpoint at `query.offset`; later pages keep the query and the page size. */
export function listCall<T>(
  transport: Transport,
  path: string,
  query: ApiRequest['query'],
  options: RequestOptions = {},
): PagePromise<T> {
  const request: ApiRequest = { method: 'GET', path, query };
  const promise = jsonCall(transport, request, options, (body, response) => {
    const data = envelopeData<T[]>(body, response);
    const pagination = (body as { pagination?: Pagination }).pagination ?? {
      total: data.length,
      limit: data.length,
      offset: Number(query?.offset ?? 0),
      hasMore: false,
    };
    return new Page(data, pagination, (offset) =>
      listCall<T>(transport, path, { ...query, limit: pagination.limit, offset }, options),
    );
  });
  return new PagePromise(promise.withResponse());
}
