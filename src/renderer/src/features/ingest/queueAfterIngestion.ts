import { ingestErrorText } from './jobView';
import { asSource, isArchive, originLabel, outcomeOrigins, type OutcomeOrigin } from './outcomeOrigins';
import type { FileOutcome, NameClash, QueuedFile } from './types';

/** Rejected entries of an archive named in its mark; the others are counted. */
const ENTRIES_NAMED = 2;

/**
 * The queue once an ingestion of `sent` has ended with `outcomes`: the files it ingested (or found
 * unchanged) leave it; those it rejected stay, marked with the reason, so that Ingest tries them again
 * once the cause is fixed (a provider key added in Settings) without picking them again. An archive
 * stays while any of its entries was rejected. A file whose outcome cannot be found stays too, unmarked:
 * never dropped unseen. Files queued meanwhile are left as they are.
 *
 * A file rejected because another file of the ingestion took its name is no harmless retry: the other
 * one was stored under that name, and a source name is one document (docs/ingestion.md), so ingesting
 * this one again replaces it. Such rejections are kept in `clashes`, for the page to say so.
 */
export function queueAfterIngestion(
  queue: readonly QueuedFile[],
  sent: readonly QueuedFile[],
  outcomes: readonly FileOutcome[],
): QueuedFile[] {
  const origins = outcomeOrigins(
    outcomes,
    sent.map((f) => f.path),
  );
  const ingested = new Set<string>();
  const rejections = new Map<string, { entry?: string; reason: string }[]>();
  const clashes = new Map<string, NameClash[]>();
  const stored = storedNames(outcomes, origins);
  outcomes.forEach((o, i) => {
    const origin = origins[i];
    if (!origin) return;
    if (o.status !== 'rejected') {
      if (origin.inputs.length === 1 && origin.entry === undefined) ingested.add(origin.inputs[0]!);
      return;
    }
    const reason = rejectionReason(o);
    // The name it would have had: its path in its archive, or the path it was sent under.
    const name = origin.entry ?? o.source;
    const taker = stored.get(name);
    const clash = taker && {
      file: labelOf(origin, o.source),
      storedFrom: labelOf(taker, name),
      name,
    };
    for (const input of origin.inputs) {
      rejections.set(input, [...(rejections.get(input) ?? []), { entry: origin.entry, reason }]);
      if (clash) clashes.set(input, [...(clashes.get(input) ?? []), clash]);
    }
  });
  const sentFiles = new Set(sent.map((f) => f.file));
  return queue.flatMap((f) => {
    if (!sentFiles.has(f.file)) return [f];
    const source = asSource(f.path);
    const rejected = rejections.get(source);
    if (rejected) {
      return [{ ...f, rejected: markOf(rejected, isArchive(source)), clashes: clashes.get(source) }];
    }
    return isArchive(source) || ingested.has(source)
      ? []
      : [{ ...f, rejected: undefined, clashes: undefined }];
  });
}

/** The origin of each name a file of the ingestion was stored under (ingested, or kept unchanged). */
function storedNames(
  outcomes: readonly FileOutcome[],
  origins: readonly (OutcomeOrigin | undefined)[],
): Map<string, OutcomeOrigin> {
  const stored = new Map<string, OutcomeOrigin>();
  outcomes.forEach((o, i) => {
    const origin = origins[i];
    if (o.status !== 'rejected' && origin) stored.set(o.source, origin);
  });
  return stored;
}

/** "x.zip › a.md" for an archive's entry, else the path. */
function labelOf(origin: OutcomeOrigin, source: string): string {
  const { from, name } = originLabel(origin, source);
  return from === undefined ? name : `${from} › ${name}`;
}

/**
 * A rejected file's reason as its queue row shows it, after "Not ingested:": without the name it starts
 * with (`a.pdf: no text …`, the row names the file) nor a "not ingested:" of its own.
 */
function rejectionReason(outcome: FileOutcome): string {
  let text = outcome.error ? ingestErrorText(outcome.error) : 'rejected.';
  if (text.startsWith(`${outcome.source}: `)) text = text.slice(outcome.source.length + 2);
  return text.replace(/^not ingested: /i, '');
}

function markOf(rejected: { entry?: string; reason: string }[], archive: boolean): string {
  if (!archive) return rejected[0]!.reason;
  const named = rejected.slice(0, ENTRIES_NAMED).map((r) => `${r.entry}: ${r.reason}`);
  const more = rejected.length - named.length;
  const count = rejected.length === 1 ? '1 entry' : `${rejected.length} entries`;
  return `${count} not ingested: ${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}
