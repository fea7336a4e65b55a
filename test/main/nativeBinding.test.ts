import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeStartupError,
  electronNativeBindingPath,
  resolveNativeBinding,
} from '../../src/main/nativeBinding';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function appDir(withBinding: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'kbstudio-native-'));
  dirs.push(dir);
  if (withBinding) {
    const file = electronNativeBindingPath(dir, '42.0.0');
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, 'binary');
  }
  return dir;
}

describe('resolveNativeBinding', () => {
  it('uses the Electron build from .cache when running from source', () => {
    const dir = appDir(true);
    expect(resolveNativeBinding({ isPackaged: false, appPath: dir, electronVersion: '42.0.0' })).toBe(
      join(dir, '.cache', 'electron-native', '42.0.0', 'better_sqlite3.node'),
    );
  });

  it('leaves the lookup to better-sqlite3 when there is no build for this Electron version', () => {
    const dir = appDir(true);
    expect(
      resolveNativeBinding({ isPackaged: false, appPath: dir, electronVersion: '43.0.0' }),
    ).toBeUndefined();
  });

  it('never overrides a packaged app, whose node_modules electron-builder rebuilt', () => {
    const dir = appDir(true);
    expect(
      resolveNativeBinding({ isPackaged: true, appPath: dir, electronVersion: '42.0.0' }),
    ).toBeUndefined();
  });
});

describe('describeStartupError', () => {
  it('adds the fix to an ABI mismatch', () => {
    const error = new Error(
      "The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 139.",
    );
    const text = describeStartupError(error);
    expect(text).toContain('NODE_MODULE_VERSION 115');
    expect(text).toContain('node scripts/electron-native.js');
  });

  it('passes other errors through', () => {
    expect(describeStartupError(new Error('EACCES: permission denied, mkdir /data'))).toBe(
      'EACCES: permission denied, mkdir /data',
    );
  });
});
