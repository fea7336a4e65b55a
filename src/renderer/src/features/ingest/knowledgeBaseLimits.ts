import type { StudioInfo } from '../../../../shared/studio';
import { formatCount } from '../../lib/format';
import { formatSize } from './formatSize';

/** One knowledge base's size, as `GET /studio/knowledge-bases` gives it. */
export interface KnowledgeBaseSize {
  listingId: string;
  documentCount: number;
  chunkCount: number;
  bytes: number;
}

export type IngestLimits = StudioInfo['ingestLimits'];

export interface LimitNotice {
  title: string;
  /** Paragraphs: what the knowledge base holds against the limit, what a drop does, what to do instead. */
  paragraphs: string[];
}

/** As the server's messages say sizes: "500 MB", not "500.0 MB" ("2.10 GB" stays). */
const size = (bytes: number) => formatSize(bytes).replace(/\.0+ /, ' ');

/**
 * What the Ingest page says before a drop when the chosen listing's knowledge base is at or past the
 * studio's limits (one built by a bulk upload can be): the server refuses such an ingestion at once
 * (core/ingest/limitsAhead.ts), except for new versions of documents the knowledge base holds, which may
 * still fit. Nothing when it is within them, or its size is not known yet.
 */
export function limitNotice(
  kb: KnowledgeBaseSize | undefined,
  limits: IngestLimits,
): LimitNotice | undefined {
  if (!kb) return undefined;
  const maxBytes = limits.maxKnowledgeBaseBytes;
  const tooLarge = maxBytes !== null && kb.bytes >= maxBytes;
  const full = kb.chunkCount >= limits.maxChunks;
  if (!tooLarge && !full) return undefined;
  const chunks = formatCount(limits.maxChunks);
  const paragraphs: string[] = [];
  if (tooLarge) {
    paragraphs.push(
      `It holds ${size(kb.bytes)} of documents; the studio ingests into a knowledge base of up to ${size(maxBytes)} (so does kbstudio ingest). A drop is refused at once, before anything is read, unless its files are new versions of documents it holds that bring it back to ${size(maxBytes)} or less.`,
    );
  }
  if (full) {
    paragraphs.push(
      `It holds ${formatCount(kb.chunkCount)} chunks; a knowledge base may hold ${chunks}, bulk uploads included. A new document is refused at once; a new version of a document it holds can still replace it. To make room, delete documents in Inspect, or put new documents in another listing.`,
    );
  }
  if (tooLarge && !full) {
    paragraphs.push(
      `To add documents, send them as a bulk upload: POST /v1/upload with this listing's id as listing_id in its config, with an API key of the listing's wallet (API keys). Bulk uploads take a knowledge base of any size in bytes (up to ${size(limits.maxArchiveBytes)} per archive, and ${chunks} chunks).`,
    );
  }
  return {
    title:
      tooLarge && full
        ? "This knowledge base is past the studio's limits"
        : tooLarge
          ? 'This knowledge base is too large for ingestion from the studio'
          : `This knowledge base holds the most chunks it may (${chunks})`,
    paragraphs,
  };
}
