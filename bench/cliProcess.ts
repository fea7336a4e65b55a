import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sampleRss, type RssReport } from './rss';

export const CLI_PATH = fileURLToPath(new URL('../bin/kbstudio.js', import.meta.url));
const execFileAsync = promisify(execFile);

/** Runs `kbstudio --data-dir D --json ARGS…` to the end and returns its JSON result. */
export async function runCliJson<T>(dataDir: string, args: string[]): Promise<T> {
  const { stdout } = await execFileAsync(
    process.execPath,
    [CLI_PATH, '--data-dir', dataDir, '--json', ...args],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as T;
}

/**
 * Runs `kbstudio --data-dir D --json ARGS…` in a child process, sampling its RSS every 100 ms, and
 * returns its JSON result (error bodies included: the exit code is the caller's to judge) with the RSS.
 */
export async function measureCli<T>(
  dataDir: string,
  args: string[],
): Promise<{ result: T; exitCode: number; rss: RssReport }> {
  const child = spawn(process.execPath, [CLI_PATH, '--data-dir', dataDir, '--json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
