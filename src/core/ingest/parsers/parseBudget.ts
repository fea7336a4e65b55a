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

/**
 * A deadline for one document, checked between the parts it is parsed in (a part itself cannot be
 * interrupted, but parts are small: see markdownPieces and htmlParts).
 */
export function parseDeadline(
  source: string,
  what: string,
  chars: number,
  budget: ParseBudget = DEFAULT_PARSE_BUDGET,
): () => void {
  const limitMs = budget.baseMs + (budget.msPerMb * chars) / MB;
  const started = performance.now();
  return () => {
    if (performance.now() - started <= limitMs) return;
    const seconds = Math.round(limitMs / 100) / 10;
    throw new InvalidDocument(
      source,
      `reading the ${what} took too long (over ${seconds} s for ${(chars / MB).toFixed(1)} MB of text) and was stopped; its structure may be pathological (thousands of nested or unclosed elements). Try splitting it into smaller files.`,
    );
  };
}
