import type { Command } from 'commander';
import { MultiBar, type SingleBar } from 'cli-progress';
import { InvalidInput } from '../../core/errors';
import { BULK_PART_LIMITS } from '../../core/push/plan';
import { pushListing } from '../../core/push/push';
import { checkApiKey, normalizeBaseUrl } from '../../core/push/targets';
import { pushTargetsOf } from '../../core/push/wiring';
import { effectiveSettings } from '../../core/settings';
import { remoteOnlyNote, type PushFileReport, type PushReport } from '../../shared/push';
import { numberFlag, withServices } from '../context';
import { abortOnStopSignals, exitCodeOf } from '../interrupt';
import { commandId, table } from '../output';

interface PushFlags {
  listing: string;
  to?: string;
  apiKey?: string;
  remember?: boolean;
  maxPartBytes?: number;
  maxPartFiles?: number;
  newListing?: boolean;
}

/** Wire codes of the push's own failures, with the status each would have as an API error. */
const FAILURE_STATUS: Record<string, number> = {
  unauthorized: 401,
  forbidden: 403,
  remote_listing_not_visible: 403,
  not_a_marketplace_api: 400,
  unsupported_embedding_model: 400,
  remote_unreachable: 503,
  cancelled: 499,
};

export function pushCommand(program: Command): void {
  program
    .command('push')
    .description("bulk upload a listing's knowledge base to a hosted /v1 service")
    .requiredOption('--listing <id>', 'local listing id')
    .option(
      '--to <baseUrl>',
      'the service, e.g. https://api.example.com/v1 (default: the hosted.url setting; a saved key is used)',
    )
    .option('--api-key <key>', 'an API key of the service (kbs_...)')
    .option('--remember', 'save the target and its key for later pushes, once the service accepted the key')
    .option('--max-part-bytes <n>', 'smaller parts than the 500 MB bulk threshold', numberFlag)
    .option('--max-part-files <n>', 'fewer files per part than 1,000', numberFlag)
    .option(
      '--new-listing',
      'make a new draft listing on the service, not the one this listing was pushed to',
    )
    .action((flags: PushFlags, cmd: Command) =>
      withServices(cmd, async ({ services, out }) => {
        const targets = pushTargetsOf(services);
        const to = flags.to ?? effectiveSettings(services.settings.all(), services.environment)['hosted.url'];
        if (!to) {
          throw new InvalidInput(
            "--to: give the service's base URL, e.g. https://api.example.com/v1 (or set hosted.url).",
          );
        }
        const baseUrl = normalizeBaseUrl(to);
        const saved = targets.findByUrl(baseUrl);
        const apiKey = flags.apiKey ?? (saved ? targets.apiKeyOf(saved.id) : undefined);
        if (!apiKey) {
          throw new InvalidInput(
            `--api-key: no key given and none saved for ${baseUrl}; pass --api-key KEY (add --remember to save it).`,
          );
        }
        // Saved once the service accepted the key, not before: a mistyped key, a wrong address or an
        // unknown listing must not replace the key that works (a saved key is never shown again).
        if (flags.remember) checkApiKey(apiKey);
        const remember = flags.remember
          ? () => void targets.save({ baseUrl, apiKey, label: saved?.label ?? undefined })
          : undefined;
        const partLimits = {
          maxBytes: partLimit(flags.maxPartBytes, BULK_PART_LIMITS.maxBytes, '--max-part-bytes'),
          maxFiles: partLimit(flags.maxPartFiles, BULK_PART_LIMITS.maxFiles, '--max-part-files'),
        };
        const bars = !out.json && process.stderr.isTTY ? progressBars() : undefined;
        // As ingest: Ctrl-C (or SIGTERM) cancels, and the exit code says which signal (130, 143).
        const stop = abortOnStopSignals();
        let report: PushReport;
        try {
          report = await pushListing(
            {
              listingId: flags.listing,
              baseUrl,
              apiKey,
              partLimits,
              signal: stop.signal,
              onUpdate: bars?.update,
              newRemoteListing: flags.newListing,
              onKeyAccepted: remember,
            },
            services,
            targets,
          );
        } finally {
          stop.dispose();
          bars?.stop();
        }
        const interruptedBy = stop.interruptedBy();
        process.exitCode =
          report.state === 'cancelled' && interruptedBy
            ? exitCodeOf(interruptedBy)
            : report.state === 'completed' && report.totals.rejected + report.totals.missing === 0
              ? 0
              : 1;
        if (report.error) {
          failWith(report, out.json);
          return;
        }
        out.result(report, () => human(report));
      }),
    );
}

function partLimit(value: number | undefined, max: number, flag: string): number {
  if (value === undefined) return max;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidInput(`${flag}: a whole number from 1 to ${max}.`);
  }
  return value;
}

/** A push that stopped (authentication, unreachable host): the §2 error body, with the report in `details`. */
function failWith(report: PushReport, json: boolean): void {
  const error = report.error!;
  if (json) {
    const status = FAILURE_STATUS[error.code] ?? 500;
    const body = { error: { ...error, status, requestId: commandId(), details: { report } } };
    process.stdout.write(`${JSON.stringify(body)}\n`);
  } else {
    process.stderr.write(`kbstudio: ${error.message}\n`);
    const sent = report.parts.filter((p) => p.state === 'completed').length;
    if (sent > 0)
      process.stderr.write(`${sent} of ${report.parts.length} parts were accepted before that.\n`);
  }
}

function human(report: PushReport): string {
  const files: PushFileReport[] = [...report.parts.flatMap((p) => p.files), ...report.missing];
  const t = report.totals;
  const parts = report.parts
    .map(
      (p) =>
        `part ${p.index}/${report.parts.length}: ${p.state}, ${p.fileCount} ${p.fileCount === 1 ? 'file' : 'files'}, ${formatBytes(p.archiveBytes ?? p.bytes)}` +
        (p.attempts > 1 ? `, ${p.attempts} attempts` : '') +
        (p.state === 'failed' && p.error ? ` (${p.error.message})` : ''),
    )
    .join('\n');
  return [
    table(
      ['SOURCE', 'STATUS', 'CHUNKS', 'NOTES'],
      files.map((f) => [f.source, f.status, f.chunks, f.error?.message ?? '']),
    ),
    '',
    parts,
    `\nPushed to ${report.target}, listing ${report.remoteListingId ?? '(none)'}: ${t.accepted} accepted, ${t.unchanged} unchanged, ${t.rejected} rejected, ${t.not_stored} not stored, ${t.missing} missing` +
      (t.unconfirmed > 0
        ? `, ${t.unconfirmed} unconfirmed (sent, still being processed by the service: push again to check).`
        : '.') +
      (report.remoteChunkCount === null
        ? ''
        : ` The remote knowledge base holds ${report.remoteDocumentCount} documents, ${report.remoteChunkCount} chunks.`),
    ...[remoteOnlyNote(report)].filter((note) => note !== undefined),
  ].join('\n');
}

/** One bar per part, moving through packing (source bytes) and sending (archive bytes). */
function progressBars() {
  const multi = new MultiBar({
    format: 'part {part} {stage} |{bar}| {percentage}% | {detail}',
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: true,
  });
  const bars = new Map<number, SingleBar>();
  return {
    update: (report: PushReport) => {
      for (const part of report.parts) {
        if (part.state === 'waiting') continue;
        let bar = bars.get(part.index);
        if (!bar) {
          bar = multi.create(100, 0, {});
          bars.set(part.index, bar);
        }
        const [value, detail] = barOf(part);
        bar.update(value, {
          part: `${part.index}/${report.parts.length}`,
          stage: part.state.padEnd(10),
          detail,
        });
      }
    },
    stop: () => multi.stop(),
  };
}

function barOf(part: PushReport['parts'][number]): [number, string] {
  const pct = (done: number, total: number) => (total > 0 ? Math.round((100 * done) / total) : 0);
  switch (part.state) {
    case 'packing':
      return [pct(part.packing.bytesDone, part.bytes), `${part.packing.filesDone}/${part.fileCount} files`];
    case 'sending':
      return [pct(part.sending.loaded, part.sending.total), `${formatBytes(part.sending.loaded)} sent`];
    case 'processing':
      return [
        pct(part.remote?.filesDone ?? 0, part.remote?.filesTotal ?? 0),
        `remote ${part.remote?.stage ?? 'queued'}`,
      ];
    default:
      return [100, part.error?.message ?? ''];
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
