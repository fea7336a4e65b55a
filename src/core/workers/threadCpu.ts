/** Linux counts a thread's CPU time in clock ticks of 1/100 s (USER_HZ, 100 on every Linux port in use). */
const MS_PER_TICK = 10;

/** utime and stime of a proc(5) stat line (fields 14 and 15), in ms; null if the line is not one. */
export function cpuMsOfStat(stat: string): number | null {
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isInteger(utime) || !Number.isInteger(stime)) return null;
  return (utime + stime) * MS_PER_TICK;
}
