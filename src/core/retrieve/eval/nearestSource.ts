import { distance } from 'fastest-levenshtein';

/**
 * Beyond this many distinct unknown sources, the others get no suggestion: each is compared with every
 * document's names (about 2 ms against 7,000 documents here), on the server's thread.
 */
const MAX_SUGGESTED = 50;

/**
 * Suggests, for expected sources that name no document, the document name the creator most likely
 * meant: the same name in other letter case, the same name with another extension (`lease.docx` for
 * `lease.pdf`), the same file in another folder, or a name a few typing mistakes away (`leese.pdf`).
 * Only names of as many path parts are compared (`lease.pdf` with file names, `policies/lease.pdf` with
 * the last two parts of paths), so a suggestion is written the way the creator wrote the source. None
 * is made when nothing is close.
 *
 * @param names every name a document can be expected by (its source and each end of its path)
 * @returns the suggestion for each unknown source that has one
 */
export function nearestSources(unknown: readonly string[], names: ReadonlySet<string>): Map<string, string> {
  const distinct = [...new Set(unknown)].slice(0, MAX_SUGGESTED);
  const suggestions = new Map<string, string>();
  if (distinct.length === 0) return suggestions;
  const byDepth = new Map<number, Candidate[]>();
  for (const name of names) {
    const candidate = candidateOf(name);
    const list = byDepth.get(candidate.parts);
    if (list) list.push(candidate);
    else byDepth.set(candidate.parts, [candidate]);
  }
  for (const source of distinct) {
    const wanted = candidateOf(source);
    const candidates = byDepth.get(wanted.parts);
    const nearest = candidates && nearestOf(wanted, candidates);
    if (nearest !== undefined) suggestions.set(source, nearest);
  }
  return suggestions;
}

/** A name, and what it is compared by, worked out once (a run may compare thousands of names). */
interface Candidate {
  name: string;
  lower: string;
  /** Without its extension (`lease` for `lease.pdf`, and for `lease`). */
  stem: string;
  /** The last part of its path. */
  file: string;
  parts: number;
}

function candidateOf(name: string): Candidate {
  const lower = name.toLowerCase();
  const base = lower.lastIndexOf('/') + 1;
  const dot = lower.lastIndexOf('.');
  return {
    name,
    lower,
    stem: dot > base ? lower.slice(0, dot) : lower,
    file: lower.slice(base),
    parts: lower.split('/').length,
  };
}

function nearestOf(wanted: Candidate, candidates: readonly Candidate[]): string | undefined {
  // Up to a third of the name's letters, at most 3: 'fqa.md' finds 'faq.md', 'faq.md' finds no 'api.md'.
  const allowed = Math.max(1, Math.min(3, Math.floor(wanted.lower.length / 3)));
  let best: { name: string; rank: number } | undefined;
  for (const { name, lower, stem, file } of candidates) {
    let rank: number;
    if (lower === wanted.lower) rank = 0;
    else if (stem === wanted.stem) rank = 0.5;
    else if (file === wanted.file) rank = 0.75;
    else {
      if (Math.abs(lower.length - wanted.lower.length) > allowed) continue;
      const d = distance(lower, wanted.lower);
      if (d > allowed) continue;
      rank = d;
    }
    // Ties go to the name sorted first, so the same files always get the same suggestion.
    if (!best || rank < best.rank || (rank === best.rank && name < best.name)) best = { name, rank };
  }
  return best?.name;
}
