import { InvalidDocument } from '../errors';

/** How long parsing one document may take: a fixed allowance plus an allowance per MB of text. */
export interface ParseBudget {
  baseMs: number;
  msPerMb: number;
}

/**
 * Ordinary Markdown and HTML parse at 0.5–2 MB/s on a busy two-core machine, so a file over this
 * budget (about 4 times the slowest normal rate) is pathological input, refused with a clear error
 * rather than left to block ingestion for minutes.
 */
export const DEFAULT_PARSE_BUDGET: ParseBudget = { baseMs: 20_000, msPerMb: 5_000 };

const MB = 1024 * 1024;

/** One document's deadline: checked between steps, and given as the time limit of a parse in a worker. */
export interface ParseTimer {
  /** Refuses the document once its time is up. */
  check(): void;
  /** Milliseconds left (at least 1). */
  remainingMs(): number;
  /** The document's whole allowance. */
  readonly limitMs: number;
  /** The refusal of a document that ran out of time. */
  tooLong(): InvalidDocument;
}

export function parseTimer(
  source: string,
  what: string,
  chars: number,
  budget: ParseBudget = DEFAULT_PARSE_BUDGET,
): ParseTimer {
  const limitMs = budget.baseMs + (budget.msPerMb * chars) / MB;
  const started = performance.now();
  const tooLong = () => {
    const seconds = Math.round(limitMs / 100) / 10;
    return new InvalidDocument(
      source,
      `reading the ${what} took too long (over ${seconds} s for ${(chars / MB).toFixed(1)} MB of text) and was stopped; its structure may be pathological (thousands of nested or unclosed elements, or of setext headings). Try splitting it into smaller files.`,
    );
  };
  return {
    check() {
      if (performance.now() - started > limitMs) throw tooLong();
    },
    remainingMs: () => Math.max(1, Math.ceil(limitMs - (performance.now() - started))),
    limitMs,
    tooLong,
  };
}

/**
 * A deadline for one document, checked between the steps it is parsed in (a step running on the main
 * thread cannot be interrupted; Markdown is parsed in a worker, which is terminated at the deadline).
 */
export function parseDeadline(
  source: string,
  what: string,
  chars: number,
  budget: ParseBudget = DEFAULT_PARSE_BUDGET,
): () => void {
  return parseTimer(source, what, chars, budget).check;
}
