import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { InvalidInput } from '../core/errors';

/** Electron's userData for an app whose productName is "KB Studio"; the CLI and the app share it. */
export const APP_NAME = 'KB Studio';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), APP_NAME);
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', APP_NAME);
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), APP_NAME);
}

/**
 * --data-dir, else KBSTUDIO_DATA_DIR, else the OS app-data folder (DESIGN §1). An empty --data-dir is
 * refused (resolved, it would be the current folder); an empty KBSTUDIO_DATA_DIR counts as unset.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined && flag.trim() === '') throw new InvalidInput('--data-dir: must not be empty.');
  const fromEnv = env.KBSTUDIO_DATA_DIR?.trim() ? env.KBSTUDIO_DATA_DIR : undefined;
  return resolve(flag ?? fromEnv ?? defaultDataDir(env));
}
