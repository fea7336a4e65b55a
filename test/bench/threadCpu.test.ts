import { isMainThread } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { cpuMsOfStat, mainThreadCpuMs, processCpuMs } from '../../bench/threadCpu';

describe('cpuMsOfStat', () => {
  it('adds utime and stime (fields 14 and 15), in ms', () => {
    const stat = '4242 (node) R 1 4242 4242 0 -1 4194304 120 0 0 0 250 37 0 0 20 0 11 0 900 1 1';
    expect(cpuMsOfStat(stat)).toBe((250 + 37) * 10);
  });

  it('reads past a command name holding spaces and parentheses', () => {
    const stat = '7 (a (b) c) S 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 1 1';
    expect(cpuMsOfStat(stat)).toBe(70);
  });

  it('gives null for a line that is not a stat line', () => {
    expect(cpuMsOfStat('not a stat line')).toBeNull();
  });
});

describe.runIf(process.platform === 'linux' && isMainThread)('mainThreadCpuMs', () => {
  it("counts this thread's CPU time", () => {
    const before = mainThreadCpuMs()!;
    const processBefore = processCpuMs();
    // Busy on this thread until the process has used 300 ms more CPU (CPU time, not wall time).
    let x = 0;
    while (processCpuMs() - processBefore < 300) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    // Other threads of the test process may add to the process's time, never to this thread's.
    expect(mainThreadCpuMs()! - before).toBeGreaterThanOrEqual(150);
    expect(mainThreadCpuMs()! - before).toBeLessThanOrEqual(processCpuMs() - processBefore + 20);
  });
});
