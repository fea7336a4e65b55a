import { vi } from 'vitest';
import { jsonRequested, main } from '../../src/cli/main';
import type { CliOptions, CliResult } from './cli';

export interface MainRun {
  code: number;
  stdout: string;
  stderr: string;
}

// One run at a time: each run takes over process.stdout, process.stderr and process.exitCode.
let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs the CLI's main() in this process, as bin/kbstudio.js does, with `args` after the node and script
 * paths, and returns what it printed and its exit code (a spawned kbstudio costs about a second).
 * `env`: variables set for the run only. Runs queue behind each other.
 */
export function runMain(
  args: string[],
  options?: Parameters<typeof main>[1],
  env: Record<string, string | undefined> = {},
): Promise<MainRun> {
  const run = queue.then(() => runNow(args, options, env));
  queue = run.catch(() => undefined);
  return run;
}

async function runNow(
  args: string[],
  options: Parameters<typeof main>[1],
  env: Record<string, string | undefined>,
): Promise<MainRun> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const before = process.exitCode;
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  setEnv(env);
  process.exitCode = undefined;
  try {
    await main([process.execPath, 'kbstudio', ...args], options);
    return { code: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    setEnv(saved);
    vi.restoreAllMocks();
    process.exitCode = before;
  }
}

function setEnv(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/**
 * cliRunner's in-process twin: `kbstudio --data-dir <dataDir> ...args` through main() in this process,
 * with the same result (stdout parsed as JSON when --json was given). For what does not depend on being
 * a process of its own: exit codes through a real process, signals and terminals stay with cliRunner.
 */
export function cliInProcess(dataDir: string, options: CliOptions = {}) {
  return async (...args: string[]): Promise<CliResult> => {
    const argv = ['--data-dir', dataDir, ...(options.json ? ['--json'] : []), ...args];
    const { code, stdout, stderr } = await runMain(argv, undefined, options.env);
    const json = jsonRequested(argv) && stdout ? JSON.parse(stdout) : undefined;
    return { code, stdout, stderr, json };
  };
}
