import type { EvalRun } from './evalTypes';

/**
 * Runs side by side: each metric with the best run(s) marked, then the settings each run was made
 * under, marked where the runs differ (what explains a change in the metrics).
 */

export interface MetricRow {
  kind: 'metric';
  key: string;
  label: string;
  values: number[];
  display: string[];
  /** Per run: whether it holds the best value (none is best when every run has the same value). */
  best: boolean[];
}

export interface SettingRow {
  kind: 'setting';
  key: string;
  label: string;
  display: string[];
  /** Whether the runs differ on this setting. */
  differs: boolean;
}

export type ComparisonRow = MetricRow | SettingRow;

type Metrics = EvalRun['report']['metrics'];

const METRIC_ROWS: { key: keyof Metrics; label: string; better: 'higher' | 'lower'; unit?: string }[] = [
  { key: 'ndcgAt10', label: 'nDCG@10', better: 'higher' },
  { key: 'recallAt10', label: 'Recall@10', better: 'higher' },
  { key: 'recallAt100', label: 'Recall@100', better: 'higher' },
  { key: 'mrr', label: 'MRR', better: 'higher' },
  { key: 'p50LatencyMs', label: 'p50 latency', better: 'lower', unit: ' ms' },
];

const NOT_RECORDED = 'not recorded';

/** "recursive · 512 / 64 tokens", "mixed · mixed / 64 tokens", "pre-built embeddings". */
export function formatChunking(chunking: EvalRun['report']['settings']['chunking']): string {
  if (!chunking || chunking.strategy === null) return NOT_RECORDED;
  if (chunking.strategy === 'pre-built') return 'pre-built embeddings';
  const n = (v: number | 'mixed' | null) => (v === null ? '—' : String(v));
  return `${chunking.strategy} · ${n(chunking.chunkSize)} / ${n(chunking.chunkOverlap)} tokens`;
}

/** The dense weight of a hybrid run; dense and lexical runs have none. */
export function formatDenseWeight(settings: EvalRun['report']['settings']): string {
  if (settings.denseWeight === undefined) return settings.mode === 'hybrid' ? NOT_RECORDED : '—';
  return settings.denseWeight === null ? '—' : settings.denseWeight.toFixed(2);
}

function settingRows(runs: EvalRun[]): SettingRow[] {
  const s = runs.map((r) => r.report.settings);
  const rows: Omit<SettingRow, 'differs'>[] = [
    { kind: 'setting', key: 'mode', label: 'Mode', display: s.map((x) => x.mode) },
    {
      kind: 'setting',
      key: 'embeddingModel',
      label: 'Embedding model',
      display: s.map((x) => x.embeddingModel),
    },
    {
      kind: 'setting',
      key: 'chunkingStrategy',
      label: 'Chunking',
      display: s.map((x) => (x.chunking ? String(x.chunking.strategy ?? '—') : NOT_RECORDED)),
    },
    {
      kind: 'setting',
      key: 'chunkSize',
      label: 'Chunk size',
      display: s.map((x) => (x.chunking ? String(x.chunking.chunkSize ?? '—') : NOT_RECORDED)),
    },
    {
      kind: 'setting',
      key: 'chunkOverlap',
      label: 'Overlap',
      display: s.map((x) => (x.chunking ? String(x.chunking.chunkOverlap ?? '—') : NOT_RECORDED)),
    },
    { kind: 'setting', key: 'denseWeight', label: 'Dense weight', display: s.map(formatDenseWeight) },
    {
      kind: 'setting',
      key: 'topK',
      label: 'Retrieved per question',
      display: s.map((x) => (x.topK === undefined ? NOT_RECORDED : String(x.topK))),
    },
    { kind: 'setting', key: 'chunkCount', label: 'Chunks', display: s.map((x) => String(x.chunkCount)) },
    {
      kind: 'setting',
      key: 'documentCount',
      label: 'Documents',
      display: s.map((x) => String(x.documentCount)),
    },
    { kind: 'setting', key: 'dataset', label: 'Question set', display: s.map((x) => x.dataset) },
    {
      kind: 'setting',
      key: 'queries',
      label: 'Questions',
      display: runs.map((r) => String(r.report.metrics.queries)),
    },
  ];
  return rows.map((row) => ({ ...row, differs: new Set(row.display).size > 1 }));
}

function metricRows(runs: EvalRun[]): MetricRow[] {
  return METRIC_ROWS.map(({ key, label, better, unit }) => {
    const values = runs.map((r) => r.report.metrics[key]);
    const target = better === 'higher' ? Math.max(...values) : Math.min(...values);
    const allSame = values.every((v) => v === values[0]);
    return {
      kind: 'metric',
      key,
      label,
      values,
      display: values.map((v) => (unit ? `${v.toFixed(1)}${unit}` : v.toFixed(3))),
      best: values.map((v) => !allSame && v === target),
    };
  });
}

export function compareRuns(runs: EvalRun[]): ComparisonRow[] {
  if (runs.length === 0) return [];
  return [...metricRows(runs), ...settingRows(runs)];
}

/** Toggles a run in the comparison, keeping the order the runs are listed in. */
export function toggleCompared(compared: string[], id: string, order: string[]): string[] {
  const next = compared.includes(id) ? compared.filter((x) => x !== id) : [...compared, id];
  return order.filter((x) => next.includes(x));
}
