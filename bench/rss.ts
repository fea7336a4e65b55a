import { readFileSync } from 'node:fs';

export interface MemoryStatus {
  /** Resident set size now (VmRSS), bytes. */
  rss: number;
  /** The highest resident set size since the process started (VmHWM), bytes. */
  hwm: number;
}

/** A process's memory from /proc/<pid>/status (Linux), or undefined when it cannot be read. */
export function readMemoryStatus(pid: number): MemoryStatus | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  const rss = kib('VmRSS');
  const hwm = kib('VmHWM');
  return Number.isFinite(rss) && Number.isFinite(hwm) ? { rss, hwm } : undefined;
}

export interface RssSample {
  /** Milliseconds since sampling started. */
  t: number;
  rss: number;
}

export interface RssReport {
  /** The highest VmRSS seen by the sampler. */
  peakSampledBytes: number;
  /** When it was seen (ms since start). */
  peakAtMs: number;
  /** VmHWM at the last successful read: the true peak, including spikes between samples. */
  highWaterMarkBytes: number;
  samples: RssSample[];
}

export interface RssSampler {
  stop(): RssReport;
}

/**
 * Samples a process's VmRSS every `intervalMs`. /proc is Linux's; elsewhere the report stays empty
 * (zero samples), which the caller reports as "not measured".
 */
export function sampleRss(pid: number, intervalMs = 100): RssSampler {
  const started = performance.now();
  const samples: RssSample[] = [];
  let highWaterMarkBytes = 0;
  const take = () => {
    const status = readMemoryStatus(pid);
    if (!status) return;
    samples.push({ t: Math.round(performance.now() - started), rss: status.rss });
    highWaterMarkBytes = Math.max(highWaterMarkBytes, status.hwm);
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      const peak = samples.reduce<RssSample>((best, s) => (s.rss > best.rss ? s : best), { t: 0, rss: 0 });
      return { peakSampledBytes: peak.rss, peakAtMs: peak.t, highWaterMarkBytes, samples };
    },
  };
}
