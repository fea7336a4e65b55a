import { readFileSync } from 'node:fs';
import { cpuMsOfStat } from '../src/core/workers/threadCpu';

/**
 * CPU time (user + system, ms) this process's main thread has used so far, from /proc/self/task/<pid>/stat
 * (the main thread's id is the process id), or null where it cannot be read (not Linux). Worker threads,
 * V8's and libuv's threads are not in it: process.cpuUsage() counts them all.
 */
export function mainThreadCpuMs(): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return cpuMsOfStat(stat);
}

/** CPU time (user + system, ms) of the whole process so far: every thread, the exited ones included. */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Until the process (all its threads) uses under 50 ms of CPU in a second; at once where /proc is not. */
export async function untilIdle(pid: number, deadline: number): Promise<void> {
  const cpuMs = () => {
    try {
      return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return null;
    }
  };
  let before = cpuMs();
  while (before !== null && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = cpuMs();
    if (now === null || now - before < 50) return;
    before = now;
  }
}
