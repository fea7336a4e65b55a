import { ingestErrorText } from './jobView';
import { asSource, isArchive, outcomeOrigins } from './outcomeOrigins';
import type { FileOutcome, QueuedFile } from './types';

/** Rejected entries of an archive named in its mark; the others are counted. */
const ENTRIES_NAMED = 2;

/**
 * The queue once an ingestion of `sent` has ended with `outcomes`: the files it ingested (or found
 * unchanged) leave it; those it rejected stay, marked with the reason, so that Ingest tries them again
 * once the cause is fixed (a provider key added in Settings) without picking them again. An archive
 * stays while any of its entries was rejected. A file whose outcome cannot be found stays too, unmarked:
 * never dropped unseen. Files queued meanwhile are left as they are.
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
  outcomes.forEach((o, i) => {
    const origin = origins[i];
    if (!origin) return;
    if (o.status !== 'rejected') {
      if (origin.inputs.length === 1 && origin.entry === undefined) ingested.add(origin.inputs[0]!);
      return;
    }
    const reason = rejectionReason(o);
    for (const input of origin.inputs) {
      rejections.set(input, [...(rejections.get(input) ?? []), { entry: origin.entry, reason }]);
    }
  });
  const sentFiles = new Set(sent.map((f) => f.file));
  return queue.flatMap((f) => {
    if (!sentFiles.has(f.file)) return [f];
    const source = asSource(f.path);
    const rejected = rejections.get(source);
    if (rejected) return [{ ...f, rejected: markOf(rejected, isArchive(source)) }];
    return isArchive(source) || ingested.has(source) ? [] : [{ ...f, rejected: undefined }];
  });
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
