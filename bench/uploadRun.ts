import { setTimeout as sleep } from 'node:timers/promises';
import { getJson, postJson, postUpload } from './multipartUpload';
import { readWrittenBytes } from './procIo';
import { sampleRss, type RssReport } from './rss';
import type { ServerProcess } from './serverProcess';

/** What GET /v1/upload/:id says, as far as the benchmark reads it. */
interface UploadState {
  uploadId: string;
  listingId: string;
  status: 'queued' | 'processing' | 'completed' | 'failed';
  progress: { stage: string; file?: string; filesDone: number; filesTotal: number; chunks: number };
  chunkCount: number | null;
  documentCount: number | null;
  error: { code: string; message: string } | null;
}

/** One stretch of the upload: sending the body, or a stage the server reported. */
export interface UploadPhase {
  phase: string;
  ms: number;
  /** The highest VmRSS sampled during the phase. */
  maxRssBytes: number;
}

export interface UploadMeasurement {
  status: UploadState['status'];
  error: UploadState['error'];
  /** POST until the 202 (the body streamed to the server's disk and pre-checked). */
  sendMs: number;
  /** 202 until the upload completed or failed. */
  processMs: number;
  chunks: number;
  documents: number;
  idleRssBytes: number;
  rss: RssReport;
  /** Where the sampled peak fell. */
  peakPhase: string;
  peakFile?: string;
  phases: UploadPhase[];
  /** The slowest GET /v1/upload/:id while processing (the server's event loop busy). */
  slowestPollMs: number;
  /** POST /v1/retrieve on the upload's listing every other poll while processing. */
  retrievals: Retrieval[];
  /**
   * Bytes the server wrote to storage from the POST to the end (the received archive, its extracted
   * entries, the kept sources, the database); undefined where /proc/<pid>/io cannot be read.
   */
  writtenBytes?: number;
}

export interface Retrieval {
  ms: number;
  status: number;
  /** The stage the upload was in when the retrieval was sent. */
  stage: string;
}

interface Mark {
  t: number;
  phase: string;
  file?: string;
}

/**
 * The /v1 rate limit is 100 requests a minute per key: one poll a second and a retrieval every other
 * second (90 a minute) stay under it.
 */
const POLL_MS = 1_000;
const RETRIEVE_EVERY = 2;
/** A poll answered later than this means the server's event loop was busy (synchronous work). */
const UNRESPONSIVE_MS = 2_000;

/**
 * Sends the archive to a running server and follows it to the end, sampling the server's RSS every
 * 100 ms throughout. Phases come from the polled progress: `extracting` until the first stage is
 * reported (the archive is unpacked before any progress event), then the pipeline's stages, and
 * `unresponsive` while a poll waits more than 2 s for its answer. A phase is seen up to a poll late.
 */
export async function measureUpload(server: ServerProcess, archive: string): Promise<UploadMeasurement> {
  const before = sampleRss(server.pid, 100);
  await sleep(300);
  const idle = before.stop();
  const sampler = sampleRss(server.pid, 100);
  const writtenBefore = readWrittenBytes(server.pid);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const marks: Mark[] = [{ t: 0, phase: 'sending' }];

  const response = await postUpload(server.url, server.apiKey, archive, { chunking: 'recursive' });
  const sendMs = elapsed();
  if (response.status !== 202) {
    sampler.stop();
    throw new Error(`POST /v1/upload answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  const { uploadId } = (response.body as { data: UploadState }).data;
  marks.push({ t: sendMs, phase: 'extracting' });

  let state: UploadState;
  let slowestPollMs = 0;
  const retrievals: Retrieval[] = [];
  for (let poll = 1; ; poll++) {
    await sleep(POLL_MS);
    const asked = elapsed();
    state = (await getJson<{ data: UploadState }>(`${server.url}/v1/upload/${uploadId}`, server.apiKey)).data;
    const answered = elapsed();
    slowestPollMs = Math.max(slowestPollMs, answered - asked);
    if (answered - asked > UNRESPONSIVE_MS) marks.push({ t: asked, phase: 'unresponsive' });
    const phase = state.progress.stage === 'queued' ? 'extracting' : state.progress.stage;
    const last = marks[marks.length - 1]!;
    if (phase !== last.phase || state.progress.file !== last.file)
      marks.push({ t: answered, phase, file: state.progress.file });
    if (state.status === 'completed' || state.status === 'failed') break;
    if (poll % RETRIEVE_EVERY === 1) {
      // A commit holds the database's write lock for most of the processing; the retrieval's log row must
      // not make it wait for that lock (before: 5 s, then a 500).
      const sent = performance.now();
      const answer = await postJson(`${server.url}/v1/retrieve`, server.apiKey, {
        listingId: state.listingId,
        query: 'how are knowledge bases priced',
        topK: 5,
      });
      retrievals.push({ ms: performance.now() - sent, status: answer.status, stage: phase });
    }
  }
  const processMs = elapsed() - sendMs;
  marks.push({ t: elapsed(), phase: 'end' });
  const rss = sampler.stop();
  const writtenAfter = readWrittenBytes(server.pid);
  return {
    status: state.status,
    error: state.error,
    sendMs,
    processMs,
    chunks: state.chunkCount ?? 0,
    documents: state.documentCount ?? 0,
    idleRssBytes: idle.peakSampledBytes,
    rss,
    ...peakPlace(marks, rss.peakAtMs),
    phases: phasesOf(marks, rss),
    slowestPollMs,
    retrievals,
    ...(writtenBefore !== undefined && writtenAfter !== undefined
      ? { writtenBytes: writtenAfter - writtenBefore }
      : {}),
  };
}

function peakPlace(marks: Mark[], at: number): { peakPhase: string; peakFile?: string } {
  const mark = [...marks].reverse().find((m) => m.t <= at) ?? marks[0]!;
  return { peakPhase: mark.phase, ...(mark.file ? { peakFile: mark.file } : {}) };
}

/** Time and highest RSS per phase name (a stage seen for several files counts once, summed). */
function phasesOf(marks: Mark[], rss: RssReport): UploadPhase[] {
  const phases = new Map<string, UploadPhase>();
  for (let i = 0; i < marks.length - 1; i++) {
    const { t, phase } = marks[i]!;
    const end = marks[i + 1]!.t;
    const entry = phases.get(phase) ?? { phase, ms: 0, maxRssBytes: 0 };
    entry.ms += end - t;
    for (const s of rss.samples)
      if (s.t >= t && s.t <= end) entry.maxRssBytes = Math.max(entry.maxRssBytes, s.rss);
    phases.set(phase, entry);
  }
  return [...phases.values()];
}
