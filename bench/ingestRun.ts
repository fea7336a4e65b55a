import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { STUDIO_LIMITS, type IngestLimits } from '../src/core/ingest/limits';
import type { IngestProgress, IngestResult } from '../src/core/ingest/pipeline';
import type { IngestInput } from '../src/core/ingest/sources';
import { openServices, type StudioServices } from '../src/db/services';
import type { IngestCommand } from '../src/core/ingest/service';
import { runFollowedJob } from './studioJob';
import { mainThreadCpuMs, processCpuMs } from './threadCpu';

export interface IngestMeasurement {
  ms: number;
  files: number;
  chunks: number;
  rejected: { source: string; code: string; message: string }[];
  /** Wall time per pipeline stage (ms), from the progress events; `collecting` is before the first event. */
  stages: Record<string, number>;
  /** Until the commit's worker had also checkpointed (after the ingestion was done), from the start. */
  settledMs: number;
  /** The longest the event loop of the ingesting thread was held at once (ms): how long a server would not answer. */
  longestStallMs: number;
  /**
   * CPU time until the ingestion returned (ms): of every thread of the process (parsers, the commit,
   * V8's and libuv's threads), and of the ingesting thread alone (null off Linux).
   */
  cpuMs: number;
  mainCpuMs: number | null;
  /** How long the commit held the database's write lock (the server's other writes wait), ms; null without a commit. */
  writeLockMs: number | null;
}

/** A fresh data directory with one draft listing on the offline model. */
export class ScratchStudio {
  readonly services: StudioServices;
  private readonly dir: string;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'kbs-bench-data-'));
    // KBSTUDIO_EMBED_THREAD=1 or 0 chooses the embedding thread, as for `kbstudio serve`.
    this.services = openServices(this.dir, {
      environment: { KBSTUDIO_EMBED_THREAD: process.env.KBSTUDIO_EMBED_THREAD },
    });
  }

  newListing(title = 'Benchmark'): string {
    const wallet = this.services.wallets.defaultWallet().address;
    return this.services.listings.create({ title, accessModel: 'one_time', price: 0 }, wallet).id;
  }

  /** After the commit workers' checkpoints: the next measurement does not share the cores with them. */
  async close(): Promise<void> {
    await this.services.knowledgeBase.settled();
    this.services.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Ingests the inputs into a listing of the studio (a new one unless given; non-atomic, studio limits
 * unless given) and times it: as `kbstudio ingest` runs it, or `asStudioJob` as the studio runs a drop
 * (its job queue, followed by a page's event stream: runFollowedJob).
 */
export async function measureIngestion(
  studio: ScratchStudio,
  inputs: IngestInput[],
  limits: IngestLimits = STUDIO_LIMITS,
  asStudioJob = false,
  listingId = studio.newListing(),
): Promise<IngestMeasurement> {
  const stages: Record<string, number> = {};
  const started = performance.now();
  const cpuBefore = processCpuMs();
  const mainBefore = mainThreadCpuMs();
  let stage = 'collecting';
  let since = started;
  const onProgress = (p: IngestProgress) => {
    const now = performance.now();
    stages[stage] = (stages[stage] ?? 0) + now - since;
    stage = p.stage;
    since = now;
  };
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  let result: IngestResult;
  const run = (command: IngestCommand) =>
    studio.services.ingestion.run({
      ...command,
      onProgress: (p) => {
        onProgress(p);
        command.onProgress?.(p);
      },
    });
  try {
    result = asStudioJob
      ? await runFollowedJob(run, { listingId, inputs, limits })
      : await run({ listingId, inputs, atomic: false, limits });
  } finally {
    stalls.disable();
  }
  const ms = performance.now() - started;
  const cpuMs = processCpuMs() - cpuBefore;
  const mainAfter = mainThreadCpuMs();
  await studio.services.knowledgeBase.settled();
  const settledMs = performance.now() - started;
  const ingested = result.documents.filter((d) => d.status === 'ingested');
  return {
    ms,
    files: ingested.length,
    chunks: result.chunkCount,
    rejected: result.documents
      .filter((d) => d.status === 'rejected')
      .map((d) => ({ source: d.source, code: d.error?.code ?? '', message: d.error?.message ?? '' })),
    stages: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, Math.round(v)])),
    settledMs,
    // The histogram is in nanoseconds.
    longestStallMs: Math.round(stalls.max / 1e6),
    cpuMs: Math.round(cpuMs),
    mainCpuMs: mainBefore === null || mainAfter === null ? null : mainAfter - mainBefore,
    writeLockMs: result.writeLockMs ?? null,
  };
}
