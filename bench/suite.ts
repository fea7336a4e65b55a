import type { TextPool } from './fixtures';
import type { Rng } from './prng';

export interface BenchOptions {
  /** Multiplies every default size (corpora, archive). */
  scale: number;
  /** Tiny sizes, for CI: everything runs in seconds. */
  smoke: boolean;
  /** Runs per measurement; medians are reported. */
  repeat: number;
  seed: number;
  /** Explicit sizes in MB, overriding the scaled defaults. */
  formatMb?: number;
  mixedMb?: number;
  archiveMb?: number;
  largeMb?: number;
  /** Knowledge-base sizes (chunks) of the dense retrieval suite, overriding the scaled defaults. */
  vectors?: number[];
  /** Vector dimensions of the dense retrieval suite (default 1024, 1536, 3072). */
  dims?: number[];
  /**
   * The dense retrieval suite's vectors: seeded clusters (default), or each chunk's and query's text
   * embedded by the offline model and projected to the dimensions (dense and full-text parts that agree).
   */
  denseVectors?: 'clustered' | 'text';
}

export interface BenchContext {
  options: BenchOptions;
  /** A progress line on stderr (stdout carries only the results). */
  log(message: string): void;
  /** A temporary folder, removed when the benchmark ends. */
  tempDir(prefix: string): string;
  /** The fixtures' words and sentences, loaded once. */
  textPool(): Promise<TextPool>;
  /** A generator seeded from --seed and the name, so each suite's data is reproducible on its own. */
  rng(name: string): Rng;
  /** Runs `work` once per benchmark process (warm-ups shared by suites). */
  once(key: string, work: () => Promise<void>): Promise<void>;
}

export interface Table {
  title: string;
  columns: string[];
  rows: (string | number)[][];
}

/** A pass/fail statement the benchmark exits non-zero on, e.g. "peak RSS under 1 GB". */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface SuiteResult {
  /** Every figure, for --json. */
  figures: Record<string, unknown>;
  tables: Table[];
  notes: string[];
  checks: Check[];
}

export interface Suite {
  /** Dotted name; `--only ingest` runs every suite whose name starts with `ingest`. */
  name: string;
  description: string;
  run(context: BenchContext): Promise<SuiteResult>;
}
