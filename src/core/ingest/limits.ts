const MB = 1024 * 1024;
const GB = 1024 * MB;

/** Spec §8 limits, overridable per call (tests lower them). */
export interface IngestLimits {
  /** One document file (JSONL embeddings are streamed and exempt). */
  maxFileBytes: number;
  /** The whole knowledge base's source bytes, for studio/CLI ingestion; bulk uploads are exempt. */
  maxKnowledgeBaseBytes: number | null;
  /** One uploaded archive. */
  maxArchiveBytes: number;
  /** Chunks in one knowledge base. */
  maxChunks: number;
}

export const STUDIO_LIMITS: IngestLimits = {
  maxFileBytes: 50 * MB,
  maxKnowledgeBaseBytes: 500 * MB,
  maxArchiveBytes: 10 * GB,
  maxChunks: 500_000,
};

/** Bulk upload (POST /v1/upload) exists for knowledge bases above the studio's 500 MB. */
export const BULK_LIMITS: IngestLimits = { ...STUDIO_LIMITS, maxKnowledgeBaseBytes: null };
