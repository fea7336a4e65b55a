import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultDataDir, resolveDataDir } from '../../src/cli/dataDir';
import { BIN } from '../helpers/cli';
import { tempDir } from '../helpers/studio';

const dir = tempDir('kbs-datadir-');
afterAll(() => dir.remove());

describe('resolveDataDir', () => {
  it('expands a leading ~ of --data-dir and KBSTUDIO_DATA_DIR to the home folder', () => {
    expect(resolveDataDir('~/kb')).toBe(join(homedir(), 'kb'));
    expect(resolveDataDir('~')).toBe(homedir());
    expect(resolveDataDir(undefined, { KBSTUDIO_DATA_DIR: '~/from-env' })).toBe(join(homedir(), 'from-env'));
    // Only a `~` standing for the home folder: not `~user`, nor a `~` further on.
    expect(resolveDataDir('~other/kb')).toBe(resolve('~other/kb'));
    expect(resolveDataDir('kb/~')).toBe(resolve('kb/~'));
  });

  it('ignores an empty or relative XDG_CONFIG_HOME, as the XDG Base Directory spec says', () => {
    const fallback = join(homedir(), '.config', 'KB Studio');
    expect(defaultDataDir({ XDG_CONFIG_HOME: '' }, 'linux')).toBe(fallback);
    expect(defaultDataDir({ XDG_CONFIG_HOME: 'relative/config' }, 'linux')).toBe(fallback);
    expect(defaultDataDir({ XDG_CONFIG_HOME: '/etc/xdg-home' }, 'linux')).toBe('/etc/xdg-home/KB Studio');
    expect(defaultDataDir({}, 'linux')).toBe(fallback);
  });

  it('puts the CLI\'s data under the home folder for "~/x", never in a "~" folder of the current one', async () => {
    const home = join(dir.path, 'home');
    const cwd = join(dir.path, 'cwd');
    mkdirSync(home);
    mkdirSync(cwd);
    const run = (args: string[], env: Record<string, string>) =>
      promisify(execFile)(process.execPath, [BIN, ...args, '--json', 'keys', 'list'], {
        cwd,
        env: { ...process.env, HOME: home, USERPROFILE: home, ...env },
      });
    await run(['--data-dir', '~/flag'], {});
    await run([], { KBSTUDIO_DATA_DIR: '~/env' });
    // A relative XDG_CONFIG_HOME is ignored: the default is under the home folder's .config.
    await run([], { KBSTUDIO_DATA_DIR: '', XDG_CONFIG_HOME: 'xdg' });
    expect(readdirSync(cwd)).toEqual([]);
    for (const path of [join(home, 'flag'), join(home, 'env'), join(home, '.config', 'KB Studio')])
      expect(existsSync(join(path, 'kbstudio.db'))).toBe(true);
  });
});
