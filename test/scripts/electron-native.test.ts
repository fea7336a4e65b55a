import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { electronNativeBindingPath } from '../../src/main/nativeBinding';

interface RunResult {
  code: number;
  output: string;
}
interface BuildOptions {
  root: string;
  arch?: string;
  force?: boolean;
  run?: (args: string[], cwd: string) => Promise<RunResult>;
  log?: (message: string) => void;
  error?: (message: string) => void;
}
interface ElectronNativeScript {
  ELECTRON_HEADERS_URL: string;
  cachedBindingPath(root: string, version: string): string;
  nodeGypArgs(options: { version: string; arch: string; devdir: string }): string[];
  buildElectronBinding(options: BuildOptions): Promise<number>;
}

let script: ElectronNativeScript;
beforeAll(async () => {
  // A plain JS script (it runs before any build), loaded by URL so TypeScript does not need its types.
  script = (await import(
    new URL('../../scripts/electron-native.js', import.meta.url).href
  )) as ElectronNativeScript;
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A repository root with node_modules/electron and a stand-in node_modules/better-sqlite3 built for Node. */
function fakeRoot(electronVersion = '42.1.0'): string {
  const root = mkdtempSync(join(tmpdir(), 'kbstudio-native-root-'));
  dirs.push(root);
  mkdirSync(join(root, 'node_modules', 'electron'), { recursive: true });
  writeFileSync(
    join(root, 'node_modules', 'electron', 'package.json'),
    JSON.stringify({ version: electronVersion }),
  );
  const sqlite = join(root, 'node_modules', 'better-sqlite3');
  mkdirSync(join(sqlite, 'src'), { recursive: true });
  mkdirSync(join(sqlite, 'build', 'Release'), { recursive: true });
  writeFileSync(join(sqlite, 'binding.gyp'), "{ 'targets': [] }");
  writeFileSync(join(sqlite, 'src', 'better_sqlite3.cpp'), '// source');
  writeFileSync(join(sqlite, 'build', 'Release', 'better_sqlite3.node'), 'built-for-node');
  return root;
}

function collect() {
  const logs: string[] = [];
  const errors: string[] = [];
  return { logs, errors, log: (m: string) => logs.push(m), error: (m: string) => errors.push(m) };
}

const tempCopies = () => readdirSync(tmpdir()).filter((name) => name.startsWith('kbstudio-electron-native-'));

describe('scripts/electron-native.js', () => {
  it('writes where src/main/nativeBinding.ts looks', () => {
    expect(script.cachedBindingPath('/repo', '42.1.0')).toBe(electronNativeBindingPath('/repo', '42.1.0'));
  });

  it('compiles against Electron headers with node-gyp', () => {
    expect(
      script.nodeGypArgs({
        version: '42.1.0',
        arch: 'arm64',
        devdir: '/repo/.cache/electron-native/headers',
      }),
    ).toEqual([
      'rebuild',
      '--release',
      '--target=42.1.0',
      '--arch=arm64',
      '--dist-url=https://electronjs.org/headers',
      '--runtime=electron',
      '--devdir=/repo/.cache/electron-native/headers',
      '--jobs=max',
    ]);
  });

  it('skips the build when this Electron version already has one', async () => {
    const root = fakeRoot();
    const target = script.cachedBindingPath(root, '42.1.0');
    mkdirSync(join(target, '..'), { recursive: true });
    writeFileSync(target, 'built-for-electron');
    const out = collect();
    let ran = false;
    const code = await script.buildElectronBinding({
      root,
      run: async () => ((ran = true), { code: 0, output: '' }),
      ...out,
    });
    expect(code).toBe(0);
    expect(ran).toBe(false);
    expect(out.logs.join('\n')).toContain('already built');
  });

  it('builds in a temporary copy and keeps only the .node file, leaving node_modules as it was', async () => {
    const root = fakeRoot();
    const before = new Set(tempCopies());
    const seen: { args: string[]; cwd: string; hadNodeBuild: boolean; hasSources: boolean }[] = [];
    const code = await script.buildElectronBinding({
      root,
      arch: 'x64',
      run: async (args, cwd) => {
        seen.push({
          args,
          cwd,
          hadNodeBuild: existsSync(join(cwd, 'build')),
          hasSources:
            existsSync(join(cwd, 'binding.gyp')) && existsSync(join(cwd, 'src', 'better_sqlite3.cpp')),
        });
        mkdirSync(join(cwd, 'build', 'Release'), { recursive: true });
        writeFileSync(join(cwd, 'build', 'Release', 'better_sqlite3.node'), 'built-for-electron');
        return { code: 0, output: 'gyp info ok' };
      },
      ...collect(),
    });
    expect(code).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.cwd.startsWith(join(root, 'node_modules'))).toBe(false);
    expect(seen[0]).toMatchObject({ hadNodeBuild: false, hasSources: true });
    expect(seen[0]!.args).toContain('--target=42.1.0');
    expect(readFileSync(script.cachedBindingPath(root, '42.1.0'), 'utf8')).toBe('built-for-electron');
    expect(
      readFileSync(
        join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
        'utf8',
      ),
    ).toBe('built-for-node');
    expect(tempCopies().filter((name) => !before.has(name))).toEqual([]);
  });

  it('fails with exit code 1 and says the headers could not be fetched when offline', async () => {
    const root = fakeRoot();
    const out = collect();
    const code = await script.buildElectronBinding({
      root,
      run: async () => ({
        code: 1,
        output:
          'gyp ERR! stack Error: This is most likely not a problem with node-gyp ... related to network connectivity.',
      }),
      ...out,
    });
    expect(code).toBe(1);
    const message = out.errors.join('\n');
    expect(message).toContain('could not build better-sqlite3 for Electron 42.1.0');
    expect(message).toContain(
      "Electron's headers could not be downloaded from https://electronjs.org/headers (offline or blocked?)",
    );
    expect(existsSync(script.cachedBindingPath(root, '42.1.0'))).toBe(false);
  });

  it('points at the toolchain when the compile itself fails', async () => {
    const root = fakeRoot();
    const out = collect();
    const code = await script.buildElectronBinding({
      root,
      run: async () => ({ code: 1, output: 'gyp ERR! build error\nmake: g++: No such file or directory' }),
      ...out,
    });
    expect(code).toBe(1);
    expect(out.errors.join('\n')).toContain('Python 3 and a C++ compiler');
  });

  it('asks for npm install when electron is not installed', async () => {
    const root = fakeRoot();
    rmSync(join(root, 'node_modules', 'electron'), { recursive: true });
    const out = collect();
    expect(await script.buildElectronBinding({ root, ...out })).toBe(1);
    expect(out.errors.join('\n')).toMatch(/electron[/\\]package\.json is missing: run npm install first/);
  });
});
