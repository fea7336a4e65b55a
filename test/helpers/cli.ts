import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './studio';

const run = promisify(execFile);
export const BIN = join(REPO_ROOT, 'bin', 'kbstudio.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed, when the command ran with --json and printed something. */
  json: any;
}

export interface CliOptions {
  /** Put --json before every command. */
  json?: boolean;
  /** Extra environment variables for the process. */
  env?: Record<string, string>;
}

/** Runs `kbstudio --data-dir <dataDir> ...args` as a real child process, as a user would. */
export function cliRunner(dataDir: string, options: CliOptions = {}) {
  return async (...args: string[]): Promise<CliResult> => {
    const argv = [BIN, '--data-dir', dataDir, ...(options.json ? ['--json'] : []), ...args];
    const parse = (stdout: string) => (argv.includes('--json') && stdout ? JSON.parse(stdout) : undefined);
    try {
      const { stdout, stderr } = await run(process.execPath, argv, {
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, ...options.env },
      });
      return { code: 0, stdout, stderr, json: parse(stdout) };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr, json: parse(e.stdout) };
    }
  };
}
