export type { EvalRun, RunChunking, SharedSetting } from '../../../../shared/evaluation';

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
