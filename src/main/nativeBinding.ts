import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * better-sqlite3 compiled for this Electron version by scripts/electron-native.js. The copy in
 * node_modules stays built for plain Node (CLI, tests, `kbstudio serve`), so it is never rebuilt in place.
 */
export function electronNativeBindingPath(repoRoot: string, electronVersion: string): string {
  return join(repoRoot, '.cache', 'electron-native', electronVersion, 'better_sqlite3.node');
}

export interface NativeBindingContext {
  isPackaged: boolean;
  /** app.getAppPath(): the repository root when run from source. */
  appPath: string;
  electronVersion: string;
}

/**
 * The better_sqlite3.node to load, or undefined for better-sqlite3's own lookup. A packaged app has
 * none: electron-builder's install-app-deps compiled its node_modules for Electron.
 */
export function resolveNativeBinding(context: NativeBindingContext): string | undefined {
  if (context.isPackaged) return undefined;
  const file = electronNativeBindingPath(context.appPath, context.electronVersion);
  return existsSync(file) ? file : undefined;
}

/** A startup failure explained, with the fix when it is the usual native-module mismatch. */
export function describeStartupError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (
    /NODE_MODULE_VERSION|was compiled against a different Node\.js version|better_sqlite3\.node/.test(message)
  ) {
    return (
      `${message}\n\nbetter-sqlite3 is not built for this Electron version. ` +
      'Run `node scripts/electron-native.js` (npm start runs it) to build a copy for Electron, then start again.'
    );
  }
  return message;
}
