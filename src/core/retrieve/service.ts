import {
  RetrieveRequestSchema,
  type Chunk,
  type RetrievalMode,
  type RetrievalResult,
  type ValidRetrieveRequest,
} from '../../shared/retrieval';
import type { Listing } from '../../shared/listings';
import { yieldToEventLoop } from '../embed/batching';
import { isZeroVector, type Embedder } from '../embed/embedder';
import { EmbeddingModelUnavailable } from '../embed/errors';
import { DomainError, InvalidInput } from '../errors';
import { newId } from '../ids';
import type { QueryCharge } from '../marketplace/credentials';
import type { ListingService } from '../marketplace/listings';
import { parseOrThrow } from '../validation';
import { authorizeRetrieval } from './access';
import { toFieldFilters } from './filters';
import { DensePoolChoice } from './densePoolChoice';
import { CANDIDATES_PER_SEARCH, rankChunks } from './hybrid';
import { lexicalPhrases } from './scoring';
import type { SearchIndex } from './searchIndex';
import type { RetrievalViewer } from './viewer';

export interface RetrievalServiceOptions {
  now?: () => Date;
  /** Who may query a listing, and its per-query charge; the creator-only check of access.ts by default. */
  authorize?: (listing: Listing, viewer: RetrievalViewer) => QueryCharge | undefined;
  /**
   * Waits until a charged query's log row and debit, written before the answer, can wait for the write
   * lock as usual (the store's writable(): not while a commit this thread feeds holds it).
   */
  beforeCharge?: () => Promise<unknown>;
}

/** Where a retrieval's time went, ms (the route reports it in a `Server-Timing` header). */
export interface RetrievalTimings {
  /** Embedding the query with the listing's model (a hosted provider's round trip included). */
  embedMs: number;
  /** Ranking: the dense and/or lexical search, fusion, and reading the chunks. */
  searchMs: number;
}

/** A query that passed validation and the access check, ready to run (the SSE stream starts in between). */
export interface PreparedRetrieval {
  queryId: string;
  listingId: string;
  request: ValidRetrieveRequest;
  /**
   * Runs the search; rejects with the signal's reason once it is aborted (nothing is logged then).
   * `timings`, when given, is filled in.
   */
  run(signal?: AbortSignal, timings?: RetrievalTimings): Promise<RetrievalResult>;
}

export interface DeepSearchOptions {
  mode?: RetrievalMode;
  /** Chunks to return, 1..100 (the API stops at 20). */
  depth?: number;
  filters?: unknown;
}

type SearchParams = Pick<ValidRetrieveRequest, 'query' | 'mode' | 'filters' | 'topK' | 'minScore'>;

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/** From a query to ranked chunks of one listing: validation, access, embedding, search, query log. */
export class RetrievalService {
  private readonly now: () => Date;
  private readonly authorize: (listing: Listing, viewer: RetrievalViewer) => QueryCharge | undefined;
  private readonly beforeCharge: (() => Promise<unknown>) | undefined;
  private readonly densePools = new DensePoolChoice();

  constructor(
    private readonly listings: ListingService,
    private readonly index: SearchIndex,
    private readonly embedderFor: (model: string) => Embedder,
    options: RetrievalServiceOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.authorize = options.authorize ?? ((listing, viewer) => authorizeRetrieval(listing, viewer));
    this.beforeCharge = options.beforeCharge;
  }

  async retrieve(
    request: unknown,
    viewer: RetrievalViewer,
    signal?: AbortSignal,
    timings?: RetrievalTimings,
  ): Promise<RetrievalResult> {
    return this.prepare(request, viewer).run(signal, timings);
  }

  /**
   * Validates the request (DESIGN §2; 400 naming the field), finds the listing (404 for an unknown one
   * or another wallet's draft) and checks access (403), without doing any search work yet.
   */
  prepare(request: unknown, viewer: RetrievalViewer): PreparedRetrieval {
    const started = performance.now();
    const valid = parseOrThrow(RetrieveRequestSchema, request);
    const listing = this.listings.get(
      valid.listingId,
      viewer === 'studio' ? 'studio' : { wallet: viewer.wallet },
    );
    const charge = this.authorize(listing, viewer);
    // A hosted model whose key is not set is known now: refused before a stream opens (a 503, not a 200
    // whose first event is the error), as /v1/retrieve refuses it.
    const embedder =
      valid.mode !== 'lexical' && listing.chunkCount > 0 ? this.queryEmbedder(listing) : undefined;
    const queryId = newId('qry');
    let ran = false;
    return {
      queryId,
      listingId: listing.id,
      request: valid,
      run: async (signal, timings) => {
        if (ran) throw new Error('A prepared retrieval runs once.');
        ran = true;
        const chunks = await this.search(listing, valid, signal, timings, embedder);
        if (charge && this.beforeCharge) {
          await this.beforeCharge();
          signal?.throwIfAborted();
        }
        const latencyMs = round1(performance.now() - started);
        signal?.throwIfAborted();
        this.index.logQuery({
          id: queryId,
          listingId: listing.id,
          apiKeyId: viewer === 'studio' ? null : (viewer.keyId ?? null),
          wallet: viewer === 'studio' ? null : viewer.wallet,
          query: valid.query,
          topK: valid.topK,
          resultCount: chunks.length,
          latencyMs,
          createdAt: this.now().toISOString(),
          filterKeys: Object.keys(valid.filters ?? {}),
          charge,
        });
        return { chunks, listingId: listing.id, queryId, latencyMs };
      },
    };
  }

  /**
   * The studio's own deeper search (evaluation runs need 100 results): same validation and ranking as
   * `retrieve`, up to 100 chunks, not written to the query log.
   */
  async deepSearch(
    listingId: string,
    query: string,
    options: DeepSearchOptions = {},
  ): Promise<{ chunks: Chunk[]; latencyMs: number }> {
    const started = performance.now();
    const depth = options.depth ?? CANDIDATES_PER_SEARCH;
    if (!Number.isInteger(depth) || depth < 1 || depth > CANDIDATES_PER_SEARCH) {
      throw new InvalidInput(`depth: expected an integer from 1 to ${CANDIDATES_PER_SEARCH}.`);
    }
    const valid = parseOrThrow(RetrieveRequestSchema, {
      listingId,
      query,
      mode: options.mode,
      filters: options.filters,
    });
    const listing = this.listings.get(listingId, 'studio');
    const chunks = await this.search(listing, { ...valid, topK: depth });
    return { chunks, latencyMs: round1(performance.now() - started) };
  }

  private async search(
    listing: Listing,
    params: SearchParams,
    signal?: AbortSignal,
    timings?: RetrievalTimings,
    embedder?: Embedder,
  ): Promise<Chunk[]> {
    // Nothing to search yet (a new listing, one still in its first ingestion): no chunk, and no query
    // embedded, so the first query on it neither loads the offline model nor calls a hosted provider.
    if (listing.chunkCount === 0) return [];
    const embedding = performance.now();
    // What a server just started is still loading for this search: waited for beside the embedding.
    const ready = this.index.searchReady?.(listing.id, listing.embeddingModel, {
      lexical: params.mode !== 'dense',
      dense: params.mode !== 'lexical',
    });
    const vector =
      params.mode === 'lexical'
        ? null
        : await this.embedQuery(listing, params.query, embedder ?? this.queryEmbedder(listing));
    if (timings) timings.embedMs = performance.now() - embedding;
    if (ready) await ready;
    // The search itself is synchronous SQLite: let a client's disconnect be noticed before it starts.
    await yieldToEventLoop();
    signal?.throwIfAborted();
    const searching = performance.now();
    const ranked = rankChunks(this.index, {
      listingId: listing.id,
      model: listing.embeddingModel,
      mode: params.mode,
      denseWeight: listing.retrievalDenseWeight ?? undefined,
      phrases: lexicalPhrases(params.query),
      vector,
      filters: toFieldFilters(params.filters),
      topK: params.topK,
      minScore: params.minScore,
      firstDensePool: params.mode === 'hybrid' ? this.densePools.firstPool(listing.id) : undefined,
      onDensePool: (widened) => this.densePools.record(listing.id, widened),
    });
    const stored = new Map(this.index.chunks(ranked.map((r) => r.id)).map((c) => [c.id, c]));
    if (timings) timings.searchMs = performance.now() - searching;
    return ranked.map((r) => ({
      text: stored.get(r.id)!.text,
      score: r.score,
      sourceMetadata: stored.get(r.id)!.metadata,
    }));
  }

  /** The listing's embedder; a hosted model without its key throws EmbeddingModelUnavailable. */
  private queryEmbedder(listing: Listing): Embedder {
    try {
      return this.embedderFor(listing.embeddingModel);
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw new EmbeddingModelUnavailable(
        listing.embeddingModel,
        err instanceof Error ? err.message : String(err),
      );
    }
  }

  /** The query's vector under the listing's model, or null when it has no direction (no known word). */
  private async embedQuery(
    listing: Listing,
    query: string,
    embedder: Embedder,
  ): Promise<Float32Array | null> {
    const model = listing.embeddingModel;
    let vector: Float32Array | undefined;
    try {
      [vector] = await embedder.embed([query], 'query');
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw new EmbeddingModelUnavailable(model, err instanceof Error ? err.message : String(err));
    }
    if (!vector || vector.length !== listing.dimensions) {
      throw new EmbeddingModelUnavailable(
        model,
        `it returned no ${listing.dimensions}-dimensional vector for the query.`,
      );
    }
    return isZeroVector(vector) ? null : vector;
  }
}
