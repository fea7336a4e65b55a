import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Folder, inside the scratch folder, holding one empty file per process that uses it, named by its PID. */
const OWNERS = '.owners';
/** This process's marker in a scratch folder: an empty file named by its PID. */
const markerOf = (scratchDir: string): string => join(scratchDir, OWNERS, String(process.pid));

/** This process's markers, by path, with the number of claims not released yet. */
const claimed = new Map<string, number>();
let exitHookInstalled = false;

/**
 * Claims the data directory's scratch folder (received uploads, extracted archives, staging databases)
 * for this process, and first removes what processes that died without cleaning up left there (a kill,
 * a crash, a power cut). Nothing is removed while another live process uses the folder: its files may
 * belong to an upload in progress. Returns the number of entries removed.
 */
export function claimScratch(scratchDir: string): number {
  const owners = join(scratchDir, OWNERS);
  mkdirSync(owners, { recursive: true });
  let othersAlive = false;
  for (const name of readdirSync(owners)) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) othersAlive = true;
    else rmSync(join(owners, name), { force: true });
  }
  let removed = 0;
  if (!othersAlive) {
    for (const name of readdirSync(scratchDir)) {
      if (name === OWNERS) continue;
      rmSync(join(scratchDir, name), { recursive: true, force: true });
      removed++;
    }
  }
  const marker = markerOf(scratchDir);
  writeFileSync(marker, '');
  claimed.set(marker, (claimed.get(marker) ?? 0) + 1);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const file of claimed.keys()) rmSync(file, { force: true });
    });
  }
  return removed;
}

/**
 * Gives back one claim of the scratch folder (the services on its data directory closed). This process's
 * marker goes with its last claim: until then, other processes took it for a live process still using the
 * data directory, and left its kept sources, interrupted jobs and leftover scratch files alone as long as
 * this process ran (a test process, an app that closed one data directory for another).
 */
export function releaseScratch(scratchDir: string): void {
  const marker = markerOf(scratchDir);
  const count = claimed.get(marker);
  if (count === undefined) return;
  if (count > 1) {
    claimed.set(marker, count - 1);
    return;
  }
  claimed.delete(marker);
  rmSync(marker, { force: true });
}

/** Signal 0 checks that a process exists; EPERM means it exists under another user. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether another live process uses this scratch folder (so, the same data directory): an upload
 * still marked processing may then be running there, and must not be declared interrupted.
 */
export function sharedWithLiveProcess(scratchDir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(join(scratchDir, OWNERS));
  } catch {
    return false;
  }
  return names.some((name) => {
    const pid = Number(name);
    return pid !== process.pid && Number.isInteger(pid) && pid > 0 && isAlive(pid);
  });
}
