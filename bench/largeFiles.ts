import { join } from 'node:path';
import type { DocumentFormat } from '../src/core/ingest/types';
import { openServices } from '../src/db/services';
import { measureCli } from './cliProcess';
import { writeLargeDocument } from './corpus';
import { FIXTURES_DIR } from './fixtures';
import { mb, median, medianRun, perSecond, round, seconds } from './stats';
import type { BenchContext, Check, Suite } from './suite';

const MB = 1024 * 1024;
export const DEFAULT_LARGE_FILE_BYTES = 20 * MB;
/** The per-file limit (spec §8), to which the memory growth is projected. */
const FILE_LIMIT_BYTES = 50 * MB;
/** Below this, the growth of RSS says more about garbage collection than about the file. */
const PROJECTION_MIN_BYTES = 5 * MB;
const FORMATS: DocumentFormat[] = ['markdown', 'html', 'json', 'csv'];
/** A tiny document that still loads the parsers' common code and the offline model. */
const BASELINE_FILE = join(FIXTURES_DIR, 'simple-table.md');

interface CliIngestResult {
  chunks: number;
  durationMs: number;
  documents: { status: string; error?: { message: string } }[];
}

interface LargeFileRun {
  ms: number;
  chunks: number;
  peakRssBytes: number | null;
}

/**
 * One large document per text format, each ingested alone by `kbstudio ingest` in its own process:
 * how memory grows with the size of one file, which streaming an archive does not bound (each
 * document is parsed whole). A process per run, so one run's heap does not inflate the next one's.
 */
export const ingestLargeFilesSuite: Suite = {
  name: 'ingest.large-files',
  description:
    'time and peak RSS of `kbstudio ingest` (child process) for one large document per text format',
  async run(context) {
    const { options } = context;
    const bytes =
      options.largeMb !== undefined
        ? Math.round(options.largeMb * MB)
        : Math.round(DEFAULT_LARGE_FILE_BYTES * options.scale);
    const pool = await context.textPool();
    context.log('ingest.large-files: baseline (a tiny Markdown file)');
    const baseline = await ingestInChild(context, 'baseline', BASELINE_FILE);
    const rows = [];
    for (const format of FORMATS) {
      const dir = context.tempDir(`kbs-bench-large-${format}-`);
      context.log(`ingest.large-files: writing a ${mb(bytes)} MB ${format} file`);
      const file = await writeLargeDocument(dir, format, bytes, context.rng(`large/${format}`), pool);
      const runs: LargeFileRun[] = [];
      for (let i = 0; i < options.repeat; i++) {
        context.log(`  ${format}: run ${i + 1}/${options.repeat}`);
        runs.push(await ingestInChild(context, format, file.path));
      }
      const typical = medianRun(runs);
      const ms = median(runs.map((r) => r.ms));
      const peaks = runs.map((r) => r.peakRssBytes).filter((p): p is number => p !== null);
      const peak = peaks.length > 0 ? median(peaks) : null;
      const growth =
        peak !== null && baseline.peakRssBytes !== null ? Math.max(0, peak - baseline.peakRssBytes) : null;
      rows.push({
        format,
        bytes: file.bytes,
        chunks: typical.chunks,
        ms: Math.round(ms),
        mbPerSecond: perSecond(file.bytes / MB, ms),
        peakRssBytes: peak,
        rssGrowthBytes: growth,
        /** RSS growth over the baseline, per byte of the file. */
        growthPerByte: growth === null ? null : round(growth / file.bytes, 1),
      });
    }
    const worst = rows.reduce((a, b) => ((b.growthPerByte ?? 0) > (a.growthPerByte ?? 0) ? b : a));
    const projected =
      worst.growthPerByte === null
        ? null
        : (baseline.peakRssBytes ?? 0) + worst.growthPerByte * FILE_LIMIT_BYTES;
    const checks: Check[] = [];
    return {
      figures: {
        bytesPerFile: bytes,
        baselinePeakRssBytes: baseline.peakRssBytes,
        files: rows,
        projectedPeakAtFileLimit:
          projected === null ? null : { format: worst.format, bytes: Math.round(projected) },
      },
      tables: [
        {
          title: 'One large document, alone, in a `kbstudio ingest` process',
          columns: ['format', 'MB', 'chunks', 's', 'MB/s', 'peak RSS MB', '+RSS MB', '+RSS / file size'],
          rows: rows.map((r) => [
            r.format,
            mb(r.bytes),
            r.chunks,
            seconds(r.ms),
            r.mbPerSecond,
            r.peakRssBytes === null ? 'n/a' : mb(r.peakRssBytes, 0),
            r.rssGrowthBytes === null ? 'n/a' : mb(r.rssGrowthBytes, 0),
            r.growthPerByte === null ? 'n/a' : `${r.growthPerByte}×`,
          ]),
        },
      ],
      notes: [
        `Peak RSS is the VmHWM of the CLI process; +RSS is over the same process ingesting a tiny Markdown file (${baseline.peakRssBytes === null ? 'n/a' : `${mb(baseline.peakRssBytes, 0)} MB`}: Node, tsx, the parsers and the offline model). Times are the pipeline's own (durationMs), without the process start.`,
        projected === null
          ? 'RSS not measured (no /proc on this platform).'
          : bytes < PROJECTION_MIN_BYTES
            ? 'The files are too small for their RSS growth to say anything; use the default size or --large-mb.'
            : `If memory keeps growing in proportion, one ${mb(FILE_LIMIT_BYTES, 0)} MB ${worst.format} file (the per-file limit) would take the process to about ${mb(projected, 0)} MB.`,
      ],
      checks,
    };
  },
};

async function ingestInChild(context: BenchContext, name: string, path: string): Promise<LargeFileRun> {
  const dataDir = context.tempDir(`kbs-bench-large-data-${name}-`);
  // The listing is created in process (a CLI process less per run); the ingestion runs in the child.
  const services = openServices(dataDir);
  const listingId = services.listings.create(
    { title: name, accessModel: 'one_time', price: 0 },
    services.wallets.defaultWallet().address,
  ).id;
  services.close();
  const { result, rss } = await measureCli<CliIngestResult>(dataDir, [
    'ingest',
    '--listing',
    listingId,
    path,
  ]);
  const rejected = result.documents?.find((d) => d.status === 'rejected');
  if (!result.documents || rejected) {
    throw new Error(`${name}: ${rejected?.error?.message ?? JSON.stringify(result)}`);
  }
  return {
    ms: result.durationMs,
    chunks: result.chunks,
    peakRssBytes: rss.samples.length > 0 ? rss.highWaterMarkBytes : null,
  };
}
