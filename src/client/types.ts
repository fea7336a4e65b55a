/**
 * The shapes of the API, as the client library names them (camelCase, spec §2). Resource types come
 * from the wire contract in src/shared (types only: the client ships no zod).
 */
import type { CredentialStatus } from '../shared/credentials';
import type { AccessModel, ListingSearchQuery } from '../shared/listings';

export type { Chunk, Filters, RetrievalDone, RetrievalMode, RetrievalResult } from '../shared/retrieval';
export type { RetrieveRequest as RetrieveParams } from '../shared/retrieval';
export type { AccessModel, Listing, ListingStatus } from '../shared/listings';
export type { Credential, CredentialStatus, CredentialVerification } from '../shared/credentials';
export type { Upload, UploadStatus } from '../shared/uploads';
export type { Pagination } from '../shared/pagination';

export type ListingSort = NonNullable<ListingSearchQuery['sort']>;

/** GET /listings. Every field is optional; `sort` defaults to `relevance` with `q`, else `newest`. */
export interface ListingSearchParams {
  /** Full-text query over title, description, domain and tags. */
  q?: string;
  domain?: string;
  accessModel?: AccessModel;
  /** Maximum price in SOL, inclusive. */
  maxPrice?: number;
  /** Minimum average rating, inclusive, 0..5. */
  minRating?: number;
  sort?: ListingSort;
  /** Results per page, 1..100 (default 20). */
  limit?: number;
  offset?: number;
}

/** GET /credentials. */
export interface CredentialListParams {
  status?: CredentialStatus;
  limit?: number;
  offset?: number;
}

/** The `config` of an upload; sent with the spec's snake_case keys (`embedding_model`, ...). */
export interface UploadConfig {
  /** `recursive` (default), `fixed`, `sentence` or `markdown`. */
  chunking?: 'recursive' | 'fixed' | 'sentence' | 'markdown';
  /** A model of the spec §2 table, or the studio's offline default. Default: the listing's model. */
  embeddingModel?: string;
  /** The listing to add to; without it a new draft listing is created. */
  listingId?: string;
  /** Tokens per chunk (cl100k), default 512. */
  chunkSize?: number;
  /** Tokens shared by neighbouring chunks, default 64. */
  chunkOverlap?: number;
  /** CSV columns whose empty cells skip a row (default: every named column). */
  requiredColumns?: string[];
}

/**
 * A file to upload: a `File` (its name is sent), or any Blob with a name. A plain Blob is sent as
 * `upload.zip`. In Node, `await fs.openAsBlob(path)` gives a Blob read from disk as it is sent.
 */
export type UploadFile = Blob | { name: string; data: Blob | ArrayBuffer | Uint8Array };
