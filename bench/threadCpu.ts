import { readFileSync } from 'node:fs';

/** Linux counts a thread's CPU time in clock ticks of 1/100 s (USER_HZ, 100 on every Linux port in use). */
const MS_PER_TICK = 10;

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

/** utime and stime of a proc(5) stat line (fields 14 and 15), in ms; null if the line is not one. */
export function cpuMsOfStat(stat: string): number | null {
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) return null;
  return (utime + stime) * MS_PER_TICK;
}

/** CPU time (user + system, ms) of the whole process so far: every thread, the exited ones included. */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
