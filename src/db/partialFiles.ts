import { isAlive } from '../core/uploads/scratch';

/**
 * A file being written beside its final name, `<final name>.<pid>-<thread>.tmp`, then renamed over it
 * (vectorFileWorker.mjs, lexicalPostingsFile.mjs).
 */
const PARTIAL = /^(.*)\.(\d+)-\d+\.tmp$/;

/**
 * When `name` is such a partial file: the final name it is written for, and whether its writer's process
 * has stopped (the write was cut short; the file can go). Otherwise undefined.
 */
export function partialFile(name: string): { target: string; stopped: boolean } | undefined {
  const match = PARTIAL.exec(name);
  return match ? { target: match[1]!, stopped: !isAlive(Number(match[2])) } : undefined;
}
