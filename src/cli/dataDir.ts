import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Electron's userData for an app whose productName is "KB Studio"; the CLI and the app share it. */
export const APP_NAME = 'KB Studio';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), APP_NAME);
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', APP_NAME);
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), APP_NAME);
}

/** --data-dir, else KBSTUDIO_DATA_DIR, else the OS app-data folder (DESIGN §1). */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.KBSTUDIO_DATA_DIR ?? defaultDataDir(env));
}
