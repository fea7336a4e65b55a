import {
  CreateListingSchema,
  UpdateListingSchema,
  type AccessModel,
  type CreateListingInput,
  type Listing,
  type ListingSearchQuery,
  type ListingStatus,
  type UpdateListingInput,
} from '../../shared/listings';
import type { Page } from '../../shared/pagination';
import { Conflict, Forbidden, InvalidInput, ListingNotFound } from '../errors';
import { dimensionsOf, OFFLINE_MODEL } from '../embed/models';
import { newId } from '../ids';
import { parseOrThrow } from '../validation';
import { lamportsToSol, solToLamports, solToLamportsAtMost } from '../money';
import { isWalletAddress } from '../wallets/keypair';

export interface ListingRecord {
  id: string;
  title: string;
  description: string;
  domain: string;
  tags: string[];
  accessModel: AccessModel;
  priceLamports: number;
  subscriptionDays: number | null;
  rating: number;
  ratingCount: number;
  creatorWallet: string;
  status: ListingStatus;
  retrievalRateLimit: number;
  /** Weight of the dense part in hybrid retrieval; null = the measured default. */
  retrievalDenseWeight: number | null;
  embeddingModel: string;
  dimensions: number;
  documentCount: number;
  chunkCount: number;
  pdaAddress: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Search as the repository runs it: prices already in lamports, the sort resolved. */
export interface ListingSearch {
  q?: string;
  domain?: string;
  accessModel?: AccessModel;
  maxPriceLamports?: number;
  minRating?: number;
  sort: 'relevance' | 'rating' | 'price_asc' | 'price_desc' | 'newest';
  limit: number;
  offset: number;
  /** Published listings plus this wallet's drafts; undefined = every listing (the studio's own view). */
  viewerWallet?: string | null;
}

export interface ListingRepository {
  insert(record: ListingRecord): void;
  update(record: ListingRecord): void;
  findById(id: string): ListingRecord | undefined;
  search(search: ListingSearch): Page<ListingRecord>;
  /** Removes the listing with its whole knowledge base (documents, chunks, vectors, uploads) at once. */
  delete(id: string): void;
}

/** Whose eyes: a wallet sees published listings and its own drafts; `studio` sees everything local. */
export type Viewer = { wallet: string } | 'studio';

/** How many wallets hold a credential for a listing (the terms of a sold listing are fixed). */
export type AccessHolderCount = (listingId: string) => number;

/** Whether a listing was created on chain, through the Solana ledger (its terms are fixed there). */
export type CreatedOnChain = (listingId: string) => boolean;

export class ListingService {
  constructor(
    private readonly repo: ListingRepository,
    private readonly now: () => Date = () => new Date(),
    private readonly holdersOf: AccessHolderCount = () => 0,
    private readonly createdOnChain: CreatedOnChain = () => false,
  ) {}

  create(input: CreateListingInput, creatorWallet: string): Listing {
    const parsed = parseOrThrow(CreateListingSchema, input);
    const wallet = parsed.creatorWallet ?? creatorWallet;
    if (!isWalletAddress(wallet))
      throw new InvalidInput(`creatorWallet: '${wallet}' is not a wallet address.`);
    const model = parsed.embeddingModel ?? OFFLINE_MODEL.id;
    const at = this.now().toISOString();
    const record: ListingRecord = {
      id: newId('lst'),
      title: parsed.title,
      description: parsed.description,
      domain: parsed.domain,
      tags: dedupe(parsed.tags),
      accessModel: parsed.accessModel,
      priceLamports: solToLamports(parsed.price),
      subscriptionDays: parsed.subscriptionDays ?? null,
      rating: 0,
      ratingCount: 0,
      creatorWallet: wallet,
      status: 'draft',
      retrievalRateLimit: parsed.retrievalRateLimit,
      retrievalDenseWeight: parsed.retrievalDenseWeight ?? null,
      embeddingModel: model,
      dimensions: dimensionsOf(model),
      documentCount: 0,
      chunkCount: 0,
      pdaAddress: null,
      createdAt: at,
      updatedAt: at,
    };
    checkAccessTerms(record);
    this.repo.insert(record);
    return toListing(record);
  }

  update(id: string, patch: UpdateListingInput, viewer: Viewer = 'studio'): Listing {
    const parsed = parseOrThrow(UpdateListingSchema, patch);
    const current = this.ownedRecord(id, viewer);
    const next: ListingRecord = {
      ...current,
      ...definedOnly({
        title: parsed.title,
        description: parsed.description,
        domain: parsed.domain,
        tags: parsed.tags && dedupe(parsed.tags),
        accessModel: parsed.accessModel,
        retrievalRateLimit: parsed.retrievalRateLimit,
      }),
      updatedAt: this.now().toISOString(),
    };
    if (parsed.price !== undefined) next.priceLamports = solToLamports(parsed.price);
    if (parsed.retrievalDenseWeight !== undefined) next.retrievalDenseWeight = parsed.retrievalDenseWeight;
    if (parsed.subscriptionDays !== undefined) next.subscriptionDays = parsed.subscriptionDays;
    if (
      parsed.accessModel &&
      parsed.accessModel !== 'subscription' &&
      parsed.subscriptionDays === undefined
    ) {
      next.subscriptionDays = null;
    }
    if (parsed.embeddingModel !== undefined && parsed.embeddingModel !== current.embeddingModel) {
      if (current.chunkCount > 0) {
        throw new InvalidInput(
          'embeddingModel: this knowledge base already has embedded chunks; create a new listing to change its model.',
        );
      }
      next.embeddingModel = parsed.embeddingModel;
      next.dimensions = dimensionsOf(parsed.embeddingModel);
    }
    checkAccessTerms(next);
    this.checkTermsFixed(current, next);
    this.repo.update(next);
    return toListing(next);
  }

  /**
   * Credentials are held under the listing's terms: a per-query balance is debited its price, a
   * subscription runs its days. Changing them under a holder would charge what they never agreed to
   * (a per-query credential debited a subscription's price on each query), and the program on chain
   * cannot change terms either. So once anyone holds access, the terms stay; the rest may change.
   */
  private checkTermsFixed(current: ListingRecord, next: ListingRecord): void {
    const changed = [
      current.accessModel !== next.accessModel && 'accessModel',
      current.priceLamports !== next.priceLamports && 'price',
      current.subscriptionDays !== next.subscriptionDays && 'subscriptionDays',
    ].filter((field): field is string => field !== false);
    if (changed.length === 0) return;
    // The program has no instruction that changes a listing's terms: buyers would be charged the
    // chain's terms while the studio, the CLI and /v1 showed the new ones.
    if (this.createdOnChain(current.id)) {
      throw new Conflict(
        `${changed.join(', ')}: listing '${current.id}' is on chain${current.pdaAddress ? ` at ${current.pdaAddress}` : ''} with the terms ${termsOf(current)}, and the program on chain cannot change terms. Create a new listing with the new terms.`,
      );
    }
    if (current.status !== 'published') return;
    const holders = this.holdersOf(current.id);
    if (holders === 0) return;
    throw new Conflict(
      `${changed.join(', ')}: listing '${current.id}' has ${holders} credential${holders === 1 ? '' : 's'} held under its current terms (${termsOf(current)}), which cannot change under them. Revoke them first (test buyers included), or create a new listing with the new terms.`,
    );
  }

  /** Flips a draft to published. The wallet-signed `create_listing` instruction is added by the ledger. */
  publish(id: string, viewer: Viewer = 'studio', pdaAddress: string | null = null): Listing {
    const current = this.ownedRecord(id, viewer);
    const next: ListingRecord = {
      ...current,
      status: 'published',
      pdaAddress: pdaAddress ?? current.pdaAddress,
      updatedAt: this.now().toISOString(),
    };
    this.repo.update(next);
    return toListing(next);
  }

  /** Deletes a draft and its knowledge base. A published listing may have buyers, so it stays. */
  delete(id: string, viewer: Viewer = 'studio'): void {
    this.checkDeletable(id, viewer);
    this.repo.delete(id);
  }

  /**
   * Throws what `delete` would refuse with (no such listing for `viewer`, or a published one), for a
   * caller that deletes the draft itself (the studio, off its thread: SqliteKnowledgeBaseStore).
   */
  checkDeletable(id: string, viewer: Viewer = 'studio'): void {
    const current = this.ownedRecord(id, viewer);
    if (current.status !== 'draft') {
      throw new Conflict(`Listing '${id}' is published and may have buyers; only drafts can be deleted.`);
    }
  }

  get(id: string, viewer: Viewer): Listing {
    return toListing(this.visibleRecord(id, viewer));
  }

  search(query: ListingSearchQuery, viewer: Viewer): Page<Listing> {
    const q = query.q?.trim() || undefined;
    const page = this.repo.search({
      q,
      domain: query.domain?.trim() || undefined,
      accessModel: query.accessModel,
      maxPriceLamports: query.maxPrice === undefined ? undefined : solToLamportsAtMost(query.maxPrice),
      minRating: query.minRating,
      sort: query.sort ?? (q ? 'relevance' : 'newest'),
      limit: query.limit,
      offset: query.offset,
      viewerWallet: viewer === 'studio' ? undefined : viewer.wallet,
    });
    return { ...page, items: page.items.map(toListing) };
  }

  private visibleRecord(id: string, viewer: Viewer): ListingRecord {
    const record = this.repo.findById(id);
    // A draft someone else owns is reported as missing, so its existence does not leak.
    if (
      !record ||
      (viewer !== 'studio' && record.status === 'draft' && record.creatorWallet !== viewer.wallet)
    ) {
      throw new ListingNotFound(id);
    }
    return record;
  }

  private ownedRecord(id: string, viewer: Viewer): ListingRecord {
    const record = this.visibleRecord(id, viewer);
    if (viewer !== 'studio' && record.creatorWallet !== viewer.wallet) {
      throw new Forbidden(`Only the creator of listing '${id}' may change it.`);
    }
    return record;
  }
}

export function toListing(r: ListingRecord): Listing {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    domain: r.domain,
    tags: r.tags,
    accessModel: r.accessModel,
    price: lamportsToSol(r.priceLamports),
    subscriptionDays: r.subscriptionDays,
    rating: r.rating,
    ratingCount: r.ratingCount,
    creatorWallet: r.creatorWallet,
    status: r.status,
    retrievalRateLimit: r.retrievalRateLimit,
    retrievalDenseWeight: r.retrievalDenseWeight,
    embeddingModel: r.embeddingModel,
    dimensions: r.dimensions,
    documentCount: r.documentCount,
    chunkCount: r.chunkCount,
    pdaAddress: r.pdaAddress,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function termsOf(r: ListingRecord): string {
  const price = `${lamportsToSol(r.priceLamports)} SOL`;
  if (r.accessModel === 'subscription') return `subscription, ${price} per ${r.subscriptionDays} days`;
  return r.accessModel === 'per_query' ? `per_query, ${price} per query` : `one_time, ${price}`;
}

function checkAccessTerms(r: ListingRecord): void {
  if (r.accessModel === 'subscription' && !r.subscriptionDays) {
    throw new InvalidInput(
      'subscriptionDays: a subscription listing needs its period length in days (1..3650).',
    );
  }
  if (r.accessModel !== 'subscription' && r.subscriptionDays !== null) {
    throw new InvalidInput(
      `subscriptionDays: only subscription listings have a period; this one is ${r.accessModel}.`,
    );
  }
  if (r.accessModel === 'per_query' && r.priceLamports <= 0) {
    throw new InvalidInput('price: a per_query listing needs a price above 0 SOL per query.');
  }
}

const dedupe = (tags: string[]): string[] => [...new Set(tags.map((t) => t.toLowerCase()))];

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
