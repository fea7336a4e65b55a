import type { RetrievalMode } from './retrieval';

/**
 * Evaluation runs as the studio stores them and `GET /studio/listings/:id/evaluations` returns them:
 * the settings a run was made under, its metrics, per-question hits and misses, and the score
 * distribution of its top chunks.
 */

/** A setting every document shares, `mixed` when documents differ, null when none has it. */
export type SharedSetting<T> = T | 'mixed' | null;

export interface RunChunking {
  /** The chunking strategy; `pre-built` for documents ingested with their own embeddings (JSONL). */
  strategy: SharedSetting<string>;
  chunkSize: SharedSetting<number>;
  chunkOverlap: SharedSetting<number>;
}

export interface RunSettings {
  mode: RetrievalMode;
  /** Cut-off of nDCG and recall, and of the hits kept per question: 10. */
  k: number;
  embeddingModel: string;
  documentCount: number;
  chunkCount: number;
  dataset: string;
  /** The knowledge base's chunking at run time (runs stored before it was recorded lack it). */
  chunking?: RunChunking;
  /** Weight of the dense part in hybrid mode; null in dense or lexical mode. */
  denseWeight?: number | null;
  /** Chunks retrieved per question (the metrics look at the first k, recall@100 at all of them). */
  topK?: number;
}

export interface RetrievedHit {
  id: string;
  score: number;
  relevant: boolean;
  snippet: string;
}

export interface QuestionResult {
  id: string;
  question: string;
  ndcg: number;
  recallAtK: number;
  reciprocalRank: number;
  latencyMs: number;
  /** The first k results (by matched id), each with its best chunk's score. */
  hits: RetrievedHit[];
  /** Relevant ids not found in the first k. */
  missed: string[];
}

/** Scores of the top-k chunks of every question, counted in bins of 0.05, apart for hits and misses. */
export interface ScoreBin {
  from: number;
  to: number;
  relevant: number;
  other: number;
}

/**
 * An expected source (hand-written or question-file sets) that names no document of the listing: a
 * typo, or a file not ingested. Its question is left out of the metrics unless it also has an
 * expected text, which it is then scored by alone.
 */
export interface UnknownSource {
  /** The question's id in the run (`q3`). */
  id: string;
  question: string;
  source: string;
  /** True when the question was scored by its expected text; false when it was left out. */
  scored: boolean;
  /** The document name it most likely meant (other letter case, extension or a typo), when one is close. */
  suggestion?: string;
}

export interface EvalRunReport {
  settings: RunSettings;
  metrics: {
    ndcgAt10: number;
    recallAt10: number;
    recallAt100: number;
    mrr: number;
    p50LatencyMs: number;
    queries: number;
    skipped: number;
  };
  questions: QuestionResult[];
  distribution: ScoreBin[];
  /** Expected sources matching no document (runs stored before they were checked lack it). */
  unknownSources?: UnknownSource[];
}

export interface EvalRun {
  id: string;
  listingId: string;
  name: string;
  createdAt: string;
  report: EvalRunReport;
}
