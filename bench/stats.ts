const MB = 1024 * 1024;

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The run whose wall time is the median one (lower middle for an even count), to report its details. */
export function medianRun<T extends { ms: number }>(runs: T[]): T {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  return sorted[(sorted.length - 1) >> 1]!;
}

export const round = (value: number, digits = 2): number => Number(value.toFixed(digits));
export const mb = (bytes: number, digits = 1): number => round(bytes / MB, digits);
export const perSecond = (count: number, ms: number, digits = 2): number =>
  ms > 0 ? round((count * 1000) / ms, digits) : 0;
export const seconds = (ms: number): number => round(ms / 1000, 1);

export interface Latencies {
  p50Ms: number;
  p95Ms: number;
}

/** The value at quantile `p` (nearest rank): 0.5 the median, 0.95 the 95th percentile. */
export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] ?? NaN;
};

export const latencies = (ms: number[]): Latencies => ({
  p50Ms: round(percentile(ms, 0.5), 2),
  p95Ms: round(percentile(ms, 0.95), 2),
});
