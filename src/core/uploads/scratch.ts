import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Folder, inside the scratch folder, holding one empty file per process that uses it, named by its PID. */
const OWNERS = '.owners';
const claimed = new Set<string>();
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
  const marker = join(owners, String(process.pid));
  writeFileSync(marker, '');
  claimed.add(marker);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const file of claimed) rmSync(file, { force: true });
    });
  }
  return removed;
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
