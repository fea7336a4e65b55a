import { join } from 'node:path';
import type { Suite } from './suite';
import { startServerProcess } from './serverProcess';
import { mb, median, medianRun, perSecond, round, seconds } from './stats';
import { ARCHIVE_MIX, writeUploadArchive } from './uploadArchive';
import { measureUpload, type Retrieval, type UploadMeasurement } from './uploadRun';

const MB = 1024 * 1024;
const GB = 1024 * MB;
export const DEFAULT_ARCHIVE_BYTES = GB;
/** The issue's bound on the server's memory while it takes a 1 GB archive. */
export const RSS_LIMIT_BYTES = GB;

export const ingestUploadSuite: Suite = {
  name: 'ingest.upload',
  description:
    'peak RSS of a `kbstudio serve` child process taking a bulk archive (POST /v1/upload over loopback)',
  async run(context) {
    const { options } = context;
    const bytes =
      options.archiveMb !== undefined
        ? Math.round(options.archiveMb * MB)
        : Math.round(DEFAULT_ARCHIVE_BYTES * options.scale);
    const dir = context.tempDir('kbs-bench-upload-');
    context.log(`ingest.upload: writing a ${mb(bytes)} MB archive`);
    const built = performance.now();
    const archive = await writeUploadArchive(
      join(dir, 'bulk.zip'),
      bytes,
      join(dir, 'scratch'),
      context.rng('upload'),
      await context.textPool(),
    );
    const buildMs = performance.now() - built;

    const runs: (UploadMeasurement & { ms: number })[] = [];
    for (let i = 0; i < options.repeat; i++) {
      context.log(
        `  upload: run ${i + 1}/${options.repeat} (${mb(archive.bytes)} MB archive, ${archive.entries} entries)`,
      );
      const server = await startServerProcess(join(dir, `data-${i}`));
      try {
        const measured = await measureUpload(server, archive.path);
        runs.push({ ...measured, ms: measured.sendMs + measured.processMs });
      } catch (err) {
        throw new Error(`${(err as Error).message}\nserver stderr: ${server.stderr().trim() || '(empty)'}`);
      } finally {
        await server.stop();
      }
    }
    const typical = medianRun(runs);
    const ms = median(runs.map((r) => r.ms));
    const hwm = median(runs.map((r) => r.rss.highWaterMarkBytes));
    const measured = typical.rss.samples.length > 0;
    const { samples: _samples, ...rss } = typical.rss;
    const figures = {
      archive: {
        bytes: archive.bytes,
        entries: archive.entries,
        jsonlLines: archive.jsonlLines,
        content: archive.content,
        buildMs: Math.round(buildMs),
      },
      status: typical.status,
      error: typical.error,
      sendMs: typical.sendMs,
      processMs: typical.processMs,
      ms: Math.round(ms),
      mbPerSecond: perSecond(archive.bytes / MB, ms),
      chunks: typical.chunks,
      chunksPerSecond: perSecond(typical.chunks, ms, 0),
      idleRssBytes: typical.idleRssBytes,
      peakRssBytes: hwm,
      rss,
      rssLimitBytes: RSS_LIMIT_BYTES,
      underLimit: measured ? hwm < RSS_LIMIT_BYTES : null,
      peakPhase: typical.peakPhase,
      peakFile: typical.peakFile ?? null,
      phases: typical.phases,
      slowestPollMs: typical.slowestPollMs,
      retrievals: retrievalFigures(typical.retrievals),
      writtenBytes: typical.writtenBytes ?? null,
      runsMs: runs.map((r) => r.ms),
    };
    return {
      figures,
      tables: [
        {
          title: 'Bulk upload',
          columns: [
            'archive MB',
            'entries',
            'chunks',
            'send s',
            'process s',
            'MB/s',
            'chunks/s',
            'idle RSS MB',
            'peak RSS MB',
            'peak during',
            'written MB',
          ],
          rows: [
            [
              mb(archive.bytes),
              archive.entries,
              typical.chunks,
              seconds(typical.sendMs),
              seconds(typical.processMs),
              figures.mbPerSecond,
              figures.chunksPerSecond,
              mb(typical.idleRssBytes, 0),
              measured ? mb(hwm, 0) : 'n/a',
              `${typical.peakPhase}${typical.peakFile ? ` (${typical.peakFile})` : ''}`,
              typical.writtenBytes !== undefined ? mb(typical.writtenBytes, 0) : 'n/a',
            ],
          ],
        },
        {
          title: 'Retrieval during the upload (POST /v1/retrieve on its listing every 2 s)',
          columns: ['retrievals', 'answered 200', 'p50 ms', 'max ms', 'slowest during', 'failed'],
          rows: [
            [
              figures.retrievals.count,
              figures.retrievals.ok,
              figures.retrievals.p50Ms ?? '-',
              figures.retrievals.maxMs ?? '-',
              figures.retrievals.slowestStage ?? '-',
              failedSummary(figures.retrievals.failed),
            ],
          ],
        },
        {
          title: 'Upload phases (from GET /v1/upload/:id, polled every second)',
          columns: ['phase', 's', 'max RSS MB'],
          rows: typical.phases.map((p) => [p.phase, seconds(p.ms), mb(p.maxRssBytes, 0)]),
        },
      ],
      notes: [
        `Archive: ${Math.round(ARCHIVE_MIX.jsonl * 100)}% JSONL pre-built embeddings (stored, ~3 KB lines), ${Math.round(ARCHIVE_MIX.markdown * 100)}% Markdown and ${Math.round(ARCHIVE_MIX.csv * 100)}% CSV from the fixtures (deflated); written in ${seconds(buildMs)} s.`,
        'The body is streamed from disk (hand-built multipart over node:http); RSS is VmRSS of the server process sampled every 100 ms, and VmHWM for the true peak.',
        '"written MB" is what the server wrote to storage from the POST to the end (write_bytes of /proc/<pid>/io: the received archive, its extracted entries, the kept sources, the database and its WAL).',
        `Phases are as the server reported them (progress is saved at most every 250 ms): "extracting" runs from the 202 to the first stage, "unresponsive" covers polls the server answered more than 2 s late (its event loop busy; the slowest took ${seconds(typical.slowestPollMs)} s).`,
      ],
      checks: [
        {
          name: 'upload completed',
          ok: typical.status === 'completed',
          detail: typical.error
            ? `${typical.error.code}: ${typical.error.message}`
            : `${typical.chunks} chunks`,
        },
        {
          name: 'retrieval answered throughout the upload',
          ok: figures.retrievals.ok === figures.retrievals.count,
          detail:
            figures.retrievals.count > 0
              ? `${figures.retrievals.ok} of ${figures.retrievals.count} answered 200; slowest ${figures.retrievals.maxMs} ms`
              : 'none sent: the upload was done before the first',
        },
        {
          name: `server peak RSS under ${mb(RSS_LIMIT_BYTES, 0)} MB`,
          ok: !measured || hwm < RSS_LIMIT_BYTES,
          detail: measured
            ? `${mb(hwm, 0)} MB (VmHWM)`
            : 'not measured: /proc is not available on this platform',
        },
      ],
    };
  },
};

/** The retrievals sent while the upload was processed: how many were answered, how fast. */
function retrievalFigures(retrievals: Retrieval[]) {
  const answered = retrievals.filter((r) => r.status === 200);
  return {
    count: retrievals.length,
    ok: answered.length,
    // None sent (a small upload done before the first poll): no time to report, not NaN.
    p50Ms: retrievals.length > 0 ? round(median(retrievals.map((r) => r.ms)), 1) : null,
    maxMs: retrievals.length > 0 ? round(Math.max(...retrievals.map((r) => r.ms)), 1) : null,
    // The stage the upload was in when the slowest was sent: what held the server then.
    slowestStage: retrievals.reduce<Retrieval | undefined>((a, r) => (a && a.ms >= r.ms ? a : r), undefined)
      ?.stage,
    failed: retrievals.filter((r) => r.status !== 200).map(({ status, stage }) => ({ status, stage })),
  };
}

/** "17 × 500 during reading": the failed retrievals counted by status and stage. */
function failedSummary(failed: { status: number; stage: string }[]): string {
  const counts = new Map<string, number>();
  for (const { status, stage } of failed) {
    const key = `${status} during ${stage}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${n} × ${key}`).join(', ') || '-';
}
