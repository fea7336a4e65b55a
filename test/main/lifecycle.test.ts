import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { relaunchAction } from '../../src/main/windowOnRelaunch';

const repoRoot = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
/** The source without comments, so that a comment cannot satisfy or break a check. */
const code = (path: string) => read(path).replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');

const window = (minimized: boolean) => ({ isMinimized: () => minimized });

describe('launching the app again', () => {
  it('opens a window on the running studio when none is left (macOS: all windows closed)', () => {
    expect(relaunchAction(undefined, true)).toBe('open');
  });

  it('brings back the window there is: restored when minimized, focused', () => {
    expect(relaunchAction(window(true), true)).toBe('restore');
    expect(relaunchAction(window(false), true)).toBe('focus');
  });

  it('opens nothing while the studio is starting (it opens its own window) or quitting', () => {
    expect(relaunchAction(undefined, false)).toBe('none');
  });

  it('is what a second instance and a click on the Dock icon do in src/main/index.ts', () => {
    const main = code('src/main/index.ts');
    expect(main).toContain("app.on('second-instance', showWindow)");
    expect(main).toContain("app.on('activate', showWindow)");
    expect(main).toMatch(
      /function showWindow\(\)[\s\S]*?relaunchAction\(window, studio !== undefined\)[\s\S]*?openWindow\(studio\)/,
    );
  });
});

describe('closing the window', () => {
  it('quits the app on every platform, macOS included, as the dialog says', () => {
    const main = code('src/main/index.ts');
    expect(main).toContain("app.on('window-all-closed', () => app.quit())");
    expect(main).not.toMatch(/darwin/);
    expect(read('src/main/window.ts')).toContain('Closing the window quits KB Studio: a running job stops');
  });
});
