import { studioFetch, studioJson } from '../../lib/studioFetch';
import type { IngestJob } from '../ingest/types';
import type { ReingestBody } from './reingest';

/** A document as the list names it (`GET /studio/listings/:id/documents`); `getDocument` reads it whole. */
export interface DocumentListItem {
  id: string;
  source: string;
  format: string;
  chunkCount: number;
  /** 1, or the items of a JSON array file: each is one document for the API (spec §2). */
  documentCount: number;
}

/** A document whole (`GET /studio/documents/:id`). */
export interface DocumentSummary {
  id: string;
  listingId: string;
  source: string;
  format: string;
  bytes: number;
  chunkCount: number;
  /** 1, or the items of a JSON array file: each is one document for the API (spec §2). */
  documentCount: number;
  contentHash: string;
  /** Whether the studio kept the original file, so the document can be re-ingested. */
  sourceKept: boolean;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface StoredChunk {
  id: number;
  index: number;
  text: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
}

export interface ChunkPage {
  data: StoredChunk[];
  pagination: {
    total: number;
    limit: number;
    offset: number;
    hasMore: boolean;
    /** `gte`: the matches of a search were counted up to `total`, and more match. */
    totalRelation: 'eq' | 'gte';
  };
}

export const listDocuments = (listingId: string) =>
  studioJson<DocumentListItem[]>(`/listings/${encodeURIComponent(listingId)}/documents`);

/** The query of one document's whole record. */
export const documentKey = (documentId: string) => ['documents', 'document', documentId] as const;

export const getDocument = (documentId: string) =>
  studioJson<DocumentSummary>(`/documents/${encodeURIComponent(documentId)}`);

export async function listChunks(
  documentId: string,
  query: { q?: string; limit: number; offset: number },
): Promise<ChunkPage> {
  const params = new URLSearchParams({ limit: String(query.limit), offset: String(query.offset) });
  if (query.q) params.set('q', query.q);
  const res = await studioFetch(`/documents/${encodeURIComponent(documentId)}/chunks?${params}`);
  return (await res.json()) as ChunkPage;
}

export const deleteDocument = (documentId: string) =>
  studioJson<{ documentCount: number; chunkCount: number }>(`/documents/${encodeURIComponent(documentId)}`, {
    method: 'DELETE',
  });

/** Starts re-ingesting a document from its kept original file; follow the job like any ingestion. */
export const reingestDocument = (documentId: string, settings: ReingestBody) =>
  studioJson<{ jobId: string; job: IngestJob }>(`/documents/${encodeURIComponent(documentId)}/reingest`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(settings),
  });
