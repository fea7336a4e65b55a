import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sampleRss, type RssReport } from './rss';

export const CLI_PATH = fileURLToPath(new URL('../bin/kbstudio.js', import.meta.url));

const running = new Set<ChildProcess>();

/** Kills every `kbstudio` child still running (the benchmark is ending: an error, Ctrl+C). */
export function killChildren(): void {
  for (const child of running) child.kill('SIGKILL');
}
process.once('exit', killChildren);

/** Starts `kbstudio --data-dir D --json ARGS…`; it is killed if the benchmark exits first. */
export function spawnCli(
  dataDir: string,
  args: string[],
  env?: Record<string, string>,
): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(process.execPath, [CLI_PATH, '--data-dir', dataDir, '--json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: env ? { ...process.env, ...env } : process.env,
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Runs `kbstudio --data-dir D --json ARGS…` to the end and returns its JSON result. */
export async function runCliJson<T>(dataDir: string, args: string[]): Promise<T> {
  const { result, exitCode } = await measureCli<T>(dataDir, args);
  if (exitCode !== 0) throw new Error(`kbstudio ${args.join(' ')} failed: ${JSON.stringify(result)}`);
  return result;
}

/**
 * Runs `kbstudio --data-dir D --json ARGS…` in a child process, sampling its RSS every 100 ms, and
 * returns its JSON result (error bodies included: the exit code is the caller's to judge) with the RSS.
 */
export async function measureCli<T>(
  dataDir: string,
  args: string[],
): Promise<{ result: T; exitCode: number; rss: RssReport }> {
  const child = spawnCli(dataDir, args);
  const sampler = sampleRss(child.pid!, 100);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8_000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  const rss = sampler.stop();
  try {
    return { result: JSON.parse(stdout) as T, exitCode: code ?? 1, rss };
  } catch {
    throw new Error(
      `kbstudio ${args.join(' ')} exited with ${code} without a JSON result: ${stderr.trim() || stdout.trim()}`,
    );
  }
}
