import type { FileOutcome } from './types';

/** Where a file of an ingestion's outcome came from, among the paths the ingestion was sent. */
export interface OutcomeOrigin {
  /** The sent path it came from; several when the outcome cannot tell which (each it may be from). */
  inputs: string[];
  /** Its path inside the ZIP archive, for an entry of one. */
  entry?: string;
}

export const isArchive = (path: string) => /\.zip$/i.test(path);

/** A path as the server names a source (`options.paths`, src/server/routes/studio/ingest.ts). */
export const asSource = (path: string) =>
  path
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');

/**
 * The origin of each outcome (in order), from the paths the ingestion was sent (in the order sent), or
 * undefined when it cannot be told (no paths: a job this page did not start).
 *
 * An outcome names only a source, and a ZIP's entries are named as in the archive, beside the files
 * sent by themselves; so the origin is worked out from how the server names them
 * (src/core/ingest/sources.ts): a file sent by itself is named by its path, an entry by its path in the
 * archive; of two files given the same name, the first sent takes it and the other is rejected, named by
 * where it came from (`simple.zip/a.csv` for an entry, `a.csv` for a file sent by itself).
 */
export function outcomeOrigins(
  outcomes: readonly FileOutcome[],
  sentPaths: readonly string[] | undefined,
): (OutcomeOrigin | undefined)[] {
  if (!sentPaths) return outcomes.map(() => undefined);
  const sent = sentPaths.map(asSource);
  const archives = sent.filter(isArchive);
  const files = new Set(sent.filter((p) => !isArchive(p)));
  const rowsNamed = new Map<string, FileOutcome[]>();
  for (const o of outcomes) rowsNamed.set(o.source, [...(rowsNamed.get(o.source) ?? []), o]);

  const fromArchive = (source: string): OutcomeOrigin | undefined => {
    // The longest archive path first: `a/b.zip/c.md` is an entry of `a/b.zip`.
    const named = archives.filter((a) => source.startsWith(`${a}/`)).sort((a, b) => b.length - a.length)[0];
    if (named) return { inputs: [named], entry: source.slice(named.length + 1) };
    return archives.length > 0 ? { inputs: archives, entry: source } : undefined;
  };

  return outcomes.map((o) => {
    if (archives.includes(o.source)) return { inputs: [o.source] };
    if (!files.has(o.source)) return fromArchive(o.source);
    const named = rowsNamed.get(o.source)!;
    // The file sent by itself has a row under its own name. A second row of that name is an entry that
    // took the name first, which left the file rejected as a duplicate.
    if (named.length === 1 || archives.length === 0) return { inputs: [o.source] };
    const rejected = named.filter((r) => r.status === 'rejected');
    // Both rejected: either may be the file.
    if (rejected.length !== 1) return { inputs: [o.source, ...archives] };
    return o === rejected[0] ? { inputs: [o.source] } : fromArchive(o.source);
  });
}

/** "simple.zip › stanley-cups.csv" as an outcome row shows it: `from` is left out for a file sent alone. */
export function originLabel(
  origin: OutcomeOrigin | undefined,
  source: string,
): { from?: string; name: string } {
  if (origin?.entry === undefined) return { name: source };
  const from = origin.inputs.length === 1 ? origin.inputs[0] : `one of ${origin.inputs.length} ZIP archives`;
  return { from, name: origin.entry };
}
