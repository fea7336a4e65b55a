import type { RetrievalMode } from '../../../../shared/retrieval';

/** A setting every document shares, `mixed` when they differ, null when none has it. */
export type SharedSetting<T> = T | 'mixed' | null;

export interface RunChunking {
  strategy: SharedSetting<string>;
  chunkSize: SharedSetting<number>;
  chunkOverlap: SharedSetting<number>;
}

/** The stored evaluation run as GET /studio/listings/:id/evaluations returns it. */
export interface EvalRun {
  id: string;
  listingId: string;
  name: string;
  createdAt: string;
  report: {
    settings: {
      mode: RetrievalMode;
      k: number;
      embeddingModel: string;
      documentCount: number;
      chunkCount: number;
      dataset: string;
      /** Recorded since runs keep their settings; older runs lack these. */
      chunking?: RunChunking;
      denseWeight?: number | null;
      topK?: number;
    };
    metrics: {
      ndcgAt10: number;
      recallAt10: number;
      recallAt100: number;
      mrr: number;
      p50LatencyMs: number;
      queries: number;
      skipped: number;
    };
    questions: {
      id: string;
      question: string;
      ndcg: number;
      recallAtK: number;
      reciprocalRank: number;
      latencyMs: number;
      hits: { id: string; score: number; relevant: boolean; snippet: string }[];
      missed: string[];
    }[];
    distribution: { from: number; to: number; relevant: number; other: number }[];
  };
}

export type MetricKey = 'ndcgAt10' | 'recallAt10' | 'recallAt100' | 'mrr';

export const METRICS: { key: MetricKey; label: string }[] = [
  { key: 'ndcgAt10', label: 'nDCG@10' },
  { key: 'recallAt10', label: 'Recall@10' },
  { key: 'recallAt100', label: 'Recall@100' },
  { key: 'mrr', label: 'MRR' },
];

/**
 * Hand-written questions, one per line: `question | expected text`, or `question | source: file.pdf`
 * to expect a chunk of that source. Blank lines are skipped; a line without `|` is refused.
 */
export function parseHandWritten(text: string): {
  questions: { question: string; expectedText?: string; expectedSource?: string }[];
  error?: string;
} {
  const questions: { question: string; expectedText?: string; expectedSource?: string }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const bar = line.indexOf('|');
    const question = bar < 0 ? '' : line.slice(0, bar).trim();
    const expected = bar < 0 ? '' : line.slice(bar + 1).trim();
    if (!question || !expected)
      return { questions, error: `Line ${i + 1}: write "question | expected text" (or "| source: file").` };
    const source = /^source:\s*(.+)$/i.exec(expected);
    questions.push(
      source ? { question, expectedSource: source[1]!.trim() } : { question, expectedText: expected },
    );
  }
  return { questions };
}
