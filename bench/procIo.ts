import { readFileSync } from 'node:fs';

/**
 * Bytes a process has caused to be written to storage so far (`write_bytes` of /proc/<pid>/io, Linux:
 * its threads included, counted when pages are dirtied), or undefined when it cannot be read.
 */
export function readWrittenBytes(pid: number): number | undefined {
  let io: string;
  try {
    io = readFileSync(`/proc/${pid}/io`, 'utf8');
  } catch {
    return undefined;
  }
  const value = Number(/^write_bytes:\s+(\d+)$/m.exec(io)?.[1] ?? NaN);
  return Number.isFinite(value) ? value : undefined;
}
