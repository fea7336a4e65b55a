import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { STUDIO_LINK_PARAM } from '../src/server/studioSession';
import { runCliJson, spawnCli } from './cliProcess';

export interface ServerProcess {
  pid: number;
  url: string;
  /** From spawning `kbstudio serve` to its first line (listening). */
  startupMs: number;
  /** An API key of the studio's default wallet, for /v1. */
  apiKey: string;
  /** This launch's studio token, for /studio (header X-Studio-Token). */
  studioToken: string;
  /** What the server wrote on stderr (for a failure report). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * `kbstudio serve` in a child process over its own data directory, so its memory can be measured
 * apart from the benchmark's own (which builds archives and polls).
 */
export async function startServerProcess(
  dataDir: string,
  options: { env?: Record<string, string>; apiKey?: string } = {},
): Promise<ServerProcess> {
  const apiKey =
    options.apiKey ??
    (await runCliJson<{ key: string }>(dataDir, ['keys', 'create', '--label', 'bench'])).key;

  const spawned = performance.now();
  const child = spawnCli(dataDir, ['serve', '--port', '0'], options.env);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8_000)));
  const exited = once(child, 'exit');
  const firstLine = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', resolve);
    child.once('exit', (code) =>
      reject(new Error(`kbstudio serve exited (code ${code}) before it was ready: ${stderr.trim()}`)),
    );
  });
  const { url, studioUrl } = JSON.parse(await firstLine) as { url: string; studioUrl: string };
  const studioToken = new URL(studioUrl).searchParams.get(STUDIO_LINK_PARAM);
  if (!studioToken) throw new Error(`kbstudio serve printed a studio link without its token: ${studioUrl}`);
  const startupMs = performance.now() - spawned;
  return {
    pid: child.pid!,
    url,
    startupMs,
    apiKey,
    studioToken,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
