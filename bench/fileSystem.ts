import { readFileSync, realpathSync } from 'node:fs';
import { basename, sep } from 'node:path';

export interface FileSystemInfo {
  /** The folder described (the benchmark's temporary folders go under it). */
  path: string;
  /** The file system's type (`ext4`, `btrfs`, `tmpfs`, ...), or 'unknown' off Linux. */
  type: string;
  /** ext4 only: whether it keeps a journal (null when it cannot be told). */
  journal: boolean | null;
}

/**
 * The file system a folder is on, read from /proc/self/mountinfo (Linux). The figures of the suites that
 * write files can depend on it: on ext4 without a journal, the kernel passes over the inodes freed in the
 * last minute or so before it gives a new file one (`find_inode_bit` → `recently_deleted`), so a run that
 * creates thousands of files right after the last one removed thousands spends seconds of CPU in the
 * kernel (docs/performance.md, twelfth and seventeenth passes).
 */
export function describeFileSystem(path: string): FileSystemInfo {
  let real = path;
  try {
    real = realpathSync(path);
    const mount = mountOf(real, readFileSync('/proc/self/mountinfo', 'utf8'));
    if (!mount) return { path: real, type: 'unknown', journal: null };
    return {
      path: real,
      type: mount.type,
      journal: mount.type === 'ext4' ? ext4Journal(mount.source) : null,
    };
  } catch {
    return { path: real, type: 'unknown', journal: null };
  }
}

interface Mount {
  point: string;
  type: string;
  source: string;
}

/** The mount holding `path`: the longest mount point that is `path` or one of its parents. */
export function mountOf(path: string, mountinfo: string): Mount | undefined {
  let best: Mount | undefined;
  for (const line of mountinfo.split('\n')) {
    // "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const point = unescapeMountField(before.split(' ')[4] ?? '');
    const [type = '', source = ''] = after.split(' ');
    const inside = point === sep || path === point || path.startsWith(point + sep);
    if (inside && (!best || point.length >= best.point.length)) best = { point, type, source };
  }
  return best;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** /sys/fs/ext4/<device>/journal_task names the journal's thread, or `<none>` without a journal. */
function ext4Journal(source: string): boolean | null {
  try {
    return readFileSync(`/sys/fs/ext4/${basename(source)}/journal_task`, 'utf8').trim() !== '<none>';
  } catch {
    return null;
  }
}

/** "ext4 (no journal) at /tmp" */
export function fileSystemLabel(info: FileSystemInfo): string {
  const journal = info.journal === null ? '' : info.journal ? ' (journal)' : ' (no journal)';
  return `${info.type}${journal} at ${info.path}`;
}
