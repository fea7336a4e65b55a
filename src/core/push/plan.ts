import type { ExistingDocument } from '../ingest/store';
import { FORMAT_BY_EXTENSION } from '../ingest/types';
import type { PushPart } from '../../shared/push';

const MB = 1024 * 1024;

/** Spec §8: bulk uploads are for archives above 500 MB or more than 1,000 files; each part stays within both. */
export interface PartLimits {
  maxBytes: number;
  maxFiles: number;
}

export const BULK_PART_LIMITS: PartLimits = { maxBytes: 500 * MB, maxFiles: 1000 };

export type PartChunking = PushPart['chunking'];

/** A file to send: where its original bytes are kept and its path inside the knowledge base. */
export interface PlannedFile {
  source: string;
  format: string;
  bytes: number;
  path: string;
}

export interface PlannedPart {
  chunking: PartChunking;
  files: PlannedFile[];
  bytes: number;
}

export interface PushPlan {
  parts: PlannedPart[];
  /** Documents whose original bytes are not kept (ingested before sources were kept). */
  missing: { source: string; format: string; bytes: number }[];
}

const DEFAULT_CHUNKING: PartChunking = { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 };

/**
 * Splits a knowledge base into upload parts. One upload carries one chunking `config`, so documents
 * are grouped by the chunking they were ingested with (kept in their metadata); pre-built embeddings
 * (JSONL) are not chunked and go with any group. Each part stays within `limits`; a single file larger
 * than `maxBytes` travels alone.
 */
export function planParts(
  documents: ExistingDocument[],
  locate: (doc: ExistingDocument) => string | undefined,
  limits: PartLimits = BULK_PART_LIMITS,
): PushPlan {
  if (!(limits.maxBytes > 0) || !(limits.maxFiles >= 1)) {
    throw new Error(`Invalid part limits: ${JSON.stringify(limits)}.`);
  }
  const groups = new Map<string, { chunking: PartChunking; files: PlannedFile[] }>();
  const prebuilt: PlannedFile[] = [];
  const missing: PushPlan['missing'] = [];
  for (const doc of documents) {
    const format = formatOf(doc);
    const path = locate(doc);
    if (path === undefined) {
      missing.push({ source: doc.source, format, bytes: doc.bytes });
      continue;
    }
    const file = { source: doc.source, format, bytes: doc.bytes, path };
    if (format === 'jsonl') {
      prebuilt.push(file);
      continue;
    }
    const chunking = chunkingOf(doc.metadata.chunking);
    const key = JSON.stringify(chunking);
    const group = groups.get(key) ?? { chunking, files: [] };
    group.files.push(file);
    groups.set(key, group);
  }
  if (prebuilt.length > 0) {
    const first = groups.values().next().value ?? { chunking: DEFAULT_CHUNKING, files: [] };
    first.files.push(...prebuilt);
    groups.set(JSON.stringify(first.chunking), first);
  }

  const parts: PlannedPart[] = [];
  for (const group of groups.values()) {
    let current: PlannedPart | undefined;
    for (const file of [...group.files].sort((a, b) => a.source.localeCompare(b.source))) {
      const full =
        current &&
        (current.files.length >= limits.maxFiles ||
          (current.files.length > 0 && current.bytes + file.bytes > limits.maxBytes));
      if (!current || full) {
        current = { chunking: group.chunking, files: [], bytes: 0 };
        parts.push(current);
      }
      current.files.push(file);
      current.bytes += file.bytes;
    }
  }
  return { parts, missing };
}

/** The chunking a document was ingested with: `{strategy, chunkSize, chunkOverlap, csvRequiredColumns?}`. */
function chunkingOf(value: unknown): PartChunking {
  const c = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const chunking: PartChunking = {
    strategy: typeof c.strategy === 'string' ? c.strategy : DEFAULT_CHUNKING.strategy,
    chunkSize: typeof c.chunkSize === 'number' ? c.chunkSize : DEFAULT_CHUNKING.chunkSize,
    chunkOverlap: typeof c.chunkOverlap === 'number' ? c.chunkOverlap : DEFAULT_CHUNKING.chunkOverlap,
  };
  if (Array.isArray(c.csvRequiredColumns)) chunking.requiredColumns = c.csvRequiredColumns.map(String);
  return chunking;
}

/** The format as the upload's own report names it (`markdown` for `.md`), or the extension (`jsonl`). */
function formatOf(doc: ExistingDocument): string {
  const dot = doc.source.lastIndexOf('.');
  const extension = dot >= 0 ? doc.source.slice(dot).toLowerCase() : '';
  return FORMAT_BY_EXTENSION[extension] ?? extension.slice(1);
}
