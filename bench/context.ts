import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTextPool, type TextPool } from './fixtures';
import { seededRng } from './prng';
import type { BenchContext, BenchOptions } from './suite';

export interface OwnedContext extends BenchContext {
  /** Removes every temporary folder handed out. */
  cleanUp(): void;
}

export function createContext(options: BenchOptions, log: (message: string) => void): OwnedContext {
  const dirs: string[] = [];
  const done = new Map<string, Promise<void>>();
  let pool: Promise<TextPool> | undefined;
  return {
    options,
    log,
    tempDir(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    textPool: () => (pool ??= loadTextPool()),
    rng: (name) => seededRng(fnv1a(`${options.seed}:${name}`)),
    once(key, work) {
      let promise = done.get(key);
      if (!promise) done.set(key, (promise = work()));
      return promise;
    },
    cleanUp() {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
