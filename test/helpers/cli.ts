import { execFile, spawn } from 'node:child_process';
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

export interface TerminalRun {
  /** Everything the terminal showed (stdout and stderr, with escape codes), and the exit code. */
  done: Promise<{ code: number | null; output: string }>;
  /** The output so far. */
  output(): string;
  /** Types into the terminal, e.g. '\x03' for Ctrl-C. */
  type(keys: string): void;
}

/**
 * Runs `kbstudio --data-dir <dataDir> ...args` in a pseudo-terminal (util-linux `script`), as in a
 * person's terminal: stdout and stderr are TTYs, and Ctrl-C typed reaches the process as SIGINT.
 */
export function cliInTerminal(dataDir: string, args: string[]): TerminalRun {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, BIN, '--data-dir', dataDir, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, COLUMNS: '120', LINES: '40' },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stdin.on('error', () => undefined);
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
  return { done, output: () => output, type: (keys) => child.stdin.write(keys) };
}
