import { ApiPromise } from './http/apiPromise';
import { envelopeData, invalidResponse, jsonCall } from './http/calls';
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
    /** The offset this page was asked for: the next one follows it, whatever the server echoed. */
    private readonly offset: number = pagination.offset,
  ) {}

  /**
   * An empty page never has a next one, nor does a page that reaches `total`, so a server that keeps
   * saying `hasMore` cannot loop forever.
   */
  hasNextPage(): boolean {
    return this.pagination.hasMore && this.data.length > 0 && this.nextOffset() < this.pagination.total;
  }

  nextPage(): PagePromise<T> {
    if (!this.hasNextPage())
      throw new KnowledgeClientError('This is the last page: check hasNextPage() first.');
    return this.fetchAt(this.nextOffset());
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

  private nextOffset(): number {
    return this.offset + this.data.length;
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
  const offset = Number(query?.offset ?? 0);
  const promise = jsonCall(transport, request, options, (body, response) => {
    const data = envelopeData<T[]>(body, response);
    const pagination = (body as { pagination?: Pagination }).pagination ?? {
      total: data.length,
      limit: data.length,
      offset,
      hasMore: false,
    };
    // A server that ignores `offset` answers the same page again and again: iterating would never end.
    if (pagination.offset !== offset) {
      throw invalidResponse(
        response,
        `Asked ${path} for offset ${offset}, got the page at offset ${String(pagination.offset)}: the server does not page as asked.`,
      );
    }
    return new Page(
      data,
      pagination,
      (next) => listCall<T>(transport, path, { ...query, limit: pagination.limit, offset: next }, options),
      offset,
    );
  });
  return new PagePromise(promise.withResponse());
}
