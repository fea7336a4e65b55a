import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli';
import { runMain } from '../helpers/mainInProcess';
import { REPO_ROOT, tempDir } from '../helpers/studio';

const dir = tempDir();
afterAll(() => dir.remove());

/** What the CLI the bin started saw: where it came from and the note the bin passed it. */
const fakeMain = (from: string) =>
  `export async function main(argv, options) {\n  process.stdout.write(JSON.stringify({ from: '${from}', note: options?.startupNote ?? null }));\n}\n`;

/**
 * A copy of bin/kbstudio.js in a tree of its own, whose "CLI" (sources and bundle) only says which of
 * them ran and with what note: the bin's choice is checked without touching the repository's dist/.
 */
function tree(name: string, bundle: 'fresh' | 'stale' | 'missing'): string {
  const root = join(dir.path, name);
  mkdirSync(join(root, 'bin'), { recursive: true });
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  copyFileSync(BIN, join(root, 'bin', 'kbstudio.js'));
  const source = join(root, 'src', 'cli', 'main.ts');
  writeFileSync(source, fakeMain('sources'));
  writeFileSync(join(root, 'dist', 'cli', 'inputs.json'), '["src/cli/main.ts"]\n');
  const now = Date.now() / 1000;
  utimesSync(source, now - 60, now - 60);
  if (bundle !== 'missing') {
    const built = join(root, 'dist', 'cli', 'kbstudio.mjs');
    writeFileSync(built, fakeMain('bundle'));
    const at = bundle === 'fresh' ? now : now - 120;
    utimesSync(built, at, at);
  }
  return root;
}

async function start(root: string, env: Record<string, string> = {}) {
  const bin = join(root, 'bin', 'kbstudio.js');
  const { KBSTUDIO_FROM_SOURCE: _ignored, ...inherited } = process.env;
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'listings', 'list'], {
    env: { ...inherited, ...env },
  });
  return JSON.parse(stdout) as { from: string; note: string | null };
}

describe('bin/kbstudio.js', () => {
  it('runs a fresh bundle without a note; says when the bundle is stale or missing, unless the sources were asked for', async () => {
    const [fresh, stale, missing, asked] = await Promise.all([
      start(tree('fresh', 'fresh')),
      start(tree('stale', 'stale')),
      start(tree('missing', 'missing')),
      start(tree('asked', 'stale'), { KBSTUDIO_FROM_SOURCE: '1' }),
    ]);
    expect(fresh).toEqual({ from: 'bundle', note: null });
    expect(stale).toEqual({
      from: 'sources',
      note: 'kbstudio: the prebuilt CLI (dist/cli/kbstudio.mjs) is older than its sources: running from the sources, a slower start. Rebuild it with `npm run build:cli`.',
    });
    expect(missing).toEqual({
      from: 'sources',
      note: 'kbstudio: no prebuilt CLI (dist/cli/kbstudio.mjs): running from the TypeScript sources, a slower start. Build it with `npm run build:cli`.',
    });
    expect(asked).toEqual({ from: 'sources', note: null });
  }, 60_000);
});

describe("main()'s startup note", () => {
  const note = 'kbstudio: the prebuilt CLI is older than its sources.';
  /** Runs `body` with process.stderr a terminal (isTTY true) or not. */
  async function withStderr<T>(isTTY: boolean, body: () => Promise<T>): Promise<T> {
    const before = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: isTTY, configurable: true, writable: true });
    try {
      return await body();
    } finally {
      if (before) Object.defineProperty(process.stderr, 'isTTY', before);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
  }

  it('is one line on stderr for a person at a terminal', async () => {
    const shown = await withStderr(true, () => runMain(['--version'], { startupNote: note }));
    expect(shown).toEqual({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+/), stderr: `${note}\n` });
  });

  it('is left out with --json (stderr stays quiet) and when stderr is not a terminal', async () => {
    const json = await withStderr(true, () => runMain(['--json', '--version'], { startupNote: note }));
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toEqual({ version: expect.any(String) });
    const piped = await withStderr(false, () => runMain(['--version'], { startupNote: note }));
    expect(piped.stderr).toBe('');
  });
});
