import { describe, expect, it } from 'vitest';
import { cpuMsOfStat } from '../../../src/core/workers/threadCpu';

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
