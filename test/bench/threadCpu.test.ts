import { isMainThread } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { mainThreadCpuMs, processCpuMs } from '../../bench/threadCpu';

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
