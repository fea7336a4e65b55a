import { readFileSync, statSync } from 'node:fs';
import type { BenchContext } from './suite';
import { startServerProcess } from './serverProcess';
import { median, round } from './stats';

const ROOT = new URL('../', import.meta.url);

/** The same test bin/kbstudio.js makes: is dist/cli/kbstudio.mjs newer than every source it holds? */
export function cliBundleIsFresh(): boolean {
  try {
    const built = statSync(new URL('dist/cli/kbstudio.mjs', ROOT)).mtimeMs;
    const inputs = JSON.parse(readFileSync(new URL('dist/cli/inputs.json', ROOT), 'utf8')) as string[];
    return inputs.every((file) => statSync(new URL(file, ROOT)).mtimeMs <= built);
  } catch {
    return false;
  }
}

export interface StartupFigures {
  /** Median ms from spawning `kbstudio serve` to its first line, from the prebuilt bundle; null when stale. */
  bundleMs: number | null;
  /** The same through tsx from the TypeScript sources (KBSTUDIO_FROM_SOURCE=1). */
  sourceMs: number;
  runs: number;
}

/** `kbstudio serve --port 0` over an empty data directory, `runs` times each way. */
export async function measureStartup(context: BenchContext, runs: number): Promise<StartupFigures> {
  const dataDir = context.tempDir('kbs-bench-startup-');
  const time = async (env: Record<string, string>) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const server = await startServerProcess(dataDir, { env, apiKey: 'unused' });
      times.push(server.startupMs);
      await server.stop();
    }
    return round(median(times), 0);
  };
  const bundleMs = cliBundleIsFresh() ? await time({}) : null;
  return { bundleMs, sourceMs: await time({ KBSTUDIO_FROM_SOURCE: '1' }), runs };
}
