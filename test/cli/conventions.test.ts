import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/studio';
import { BIN, cliRunner } from '../helpers/cli';
import { cliInProcess } from '../helpers/mainInProcess';

const dir = tempDir();
afterAll(() => dir.remove());

const dataDir = join(dir.path, 'data');
// main() in this process (a spawned kbstudio costs about a second); the conventions that are about the
// process itself (closed pipes, exit codes seen by a shell, cwd and environment) run real processes.
const cli = cliInProcess(dataDir);
const cliProcess = cliRunner(dataDir);

/** Runs the CLI with `closed` (stdout or stderr) read by nobody: its reader went away before it wrote. */
function withClosedPipe(closed: 'stdout' | 'stderr', args: string[]) {
  const child = spawn(process.execPath, [BIN, '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child[closed].destroy();
  let other = '';
  child[closed === 'stdout' ? 'stderr' : 'stdout'].on('data', (d: Buffer) => (other += d.toString()));
  return new Promise<{ code: number | null; other: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, other })),
  );
}

/** Runs the CLI as is (no --data-dir added) from `cwd`. */
function runIn(cwd: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
}

describe('kbstudio conventions', () => {
  it('exits quietly when the reader of its output goes away (`kbstudio ... | head`)', async () => {
    await cli('keys', 'create', '--label', 'piped');
    const [out, err] = await Promise.all([
      withClosedPipe('stdout', ['keys', 'list']),
      withClosedPipe('stderr', ['listings', 'show', 'lst_missing']),
    ]);
    expect(out.other).toBe('');
    expect(out.code).toBe(0);
    expect(err.other).toBe('');
    expect(err.code).toBe(1);
  });

  it('prints the help of a group without its command, with no error line, and exits 1', async () => {
    // As a shell sees it: the exit status of a real process, and its two streams.
    const group = await cliProcess('listings');
    expect(group.code).toBe(1);
    expect(group.stdout).toBe('');
    expect(group.stderr).toMatch(/^Usage: kbstudio listings/);
    expect(group.stderr).not.toContain('outputHelp');
    const root = await cli();
    expect(root.code).toBe(1);
    expect(root.stderr).toMatch(/^Usage: kbstudio /);
    expect(root.stderr).not.toContain('outputHelp');
    const json = await cli('--json', 'listings');
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(json.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(json.json.error.message).toMatch(/^missing command: .*\bcreate\b.*\blist\b/);
    const help = await cli('listings', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: kbstudio listings/);
    expect(help.stderr).toBe('');
    // With --json, still one JSON document: the same text under `help`.
    const jsonHelp = await cli('--json', 'listings', '--help');
    expect(jsonHelp.code).toBe(0);
    expect(jsonHelp.stderr).toBe('');
    expect(jsonHelp.json).toEqual({ help: help.stdout });
  });

  it('adds no listener to stdout or stderr however often main() runs in one process', async () => {
    await cli('--version');
    const listeners = () => [process.stdout, process.stderr].map((s) => s.listenerCount('error'));
    const before = listeners();
    for (let i = 0; i < 3; i++) await cli('--version');
    expect(listeners()).toEqual(before);
  });

  it('prints the version, as JSON with --json', async () => {
    const human = await cli('--version');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const json = await cli('--json', '--version');
    expect(json.code).toBe(0);
    expect(json.json).toEqual({ version: human.stdout.trim() });
  });

  it('prints an argument error once, and with --json only the JSON document', async () => {
    const human = await cli('listings', 'create', '--bogus');
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr.match(/unknown option '--bogus'/g)).toHaveLength(1);
    expect(human.stderr).toMatch(/^kbstudio: unknown option '--bogus'\n/);
    const json = await cli('--json', 'listings', 'create', '--bogus');
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(json.json.error).toMatchObject({ code: 'invalid_request', message: "unknown option '--bogus'" });
    const missing = await cli('--json', 'ingest', 'x');
    expect(missing.stderr).toBe('');
    expect(missing.json.error.message).toContain('--listing');
  });

  it('refuses a data directory that is a file, or under one, naming it', async () => {
    const file = join(dir.path, 'a-file');
    writeFileSync(file, 'x');
    for (const target of [file, join(file, 'sub')]) {
      const res = await cliInProcess(target)('--json', 'keys', 'list');
      expect(res.code).toBe(1);
      expect(res.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(res.json.error.message).toContain(
        `${file} is a file, not a directory: choose another data directory (--data-dir or KBSTUDIO_DATA_DIR).`,
      );
      const human = await cliInProcess(target)('keys', 'list');
      expect(human.stderr).not.toMatch(/EEXIST|ENOTDIR/);
    }
  });

  it('refuses an empty --data-dir, and takes an empty KBSTUDIO_DATA_DIR as unset', async () => {
    const cwd = join(dir.path, 'cwd');
    mkdirSync(cwd);
    const xdg = join(dir.path, 'xdg');
    const [empty, unset] = await Promise.all([
      runIn(cwd, ['--data-dir', '', '--json', 'keys', 'list']),
      runIn(cwd, ['--json', 'keys', 'list'], { KBSTUDIO_DATA_DIR: '', XDG_CONFIG_HOME: xdg }),
    ]);
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stdout).error).toMatchObject({
      code: 'invalid_request',
      message: '--data-dir: must not be empty.',
    });
    // Falls through to the OS app-data folder ($XDG_CONFIG_HOME/KB Studio on Linux), not the current one.
    expect(unset.code).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    expect(readdirSync(join(xdg, 'KB Studio'))).toContain('kbstudio.db');
  });

  it('names the flags typed in validation errors, and says "required"', async () => {
    const missingTitle = await cli(
      '--json',
      'listings',
      'create',
      '--access-model',
      'one_time',
      '--price',
      '1',
    );
    expect(missingTitle.json.error.message).toBe('--title: required');
    const base = [
      '--json',
      'listings',
      'create',
      '--title',
      'x',
      '--access-model',
      'one_time',
      '--price',
      '1',
    ];
    expect((await cli(...base, '--rate-limit', '1.5')).json.error.message).toMatch(/^--rate-limit: /);
    expect((await cli(...base, '--dense-weight', '2')).json.error.message).toMatch(/^--dense-weight: /);
    const push = await cli('--json', 'push', '--listing', 'lst_x', '--to', 'notaurl', '--api-key', 'kbs_x');
    expect(push.json.error.message).toMatch(/^--to: 'notaurl' is not an absolute URL/);
  });

  it('refuses a --host that is not an address of this machine, like a port in use', async () => {
    // Real processes: a serve that did bind would stay up, with its signal handlers, in this one.
    const hosts = ['nonexistent.invalid', '10.255.255.1'];
    const runs = await Promise.all(
      hosts.map((host) => cliProcess('--json', 'serve', '--port', '0', '--host', host)),
    );
    for (const [i, host] of hosts.entries()) {
      const res = runs[i]!;
      expect(res.code).toBe(1);
      expect(res.json.error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(res.json.error.message).toMatch(
        new RegExp(`^--host: '${host.replace(/\./g, '\\.')}' is not an address of this machine`),
      );
    }
  });
});
