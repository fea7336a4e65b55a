import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { InvalidInput } from '../core/errors';
import { expandHome } from '../core/homePath';

/** Electron's userData for an app whose productName is "KB Studio"; the CLI and the app share it. */
export const APP_NAME = 'KB Studio';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), APP_NAME);
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', APP_NAME);
  // The XDG Base Directory spec: an empty or relative XDG_CONFIG_HOME is invalid and ignored (used as
  // it was, a relative one put "KB Studio" in whatever folder the command ran in).
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), APP_NAME);
}

/**
 * --data-dir, else KBSTUDIO_DATA_DIR, else the OS app-data folder (DESIGN §1). An empty --data-dir is
 * refused (resolved, it would be the current folder); an empty KBSTUDIO_DATA_DIR counts as unset. A
 * leading `~` means the home folder, as a shell would read it: quoted (`--data-dir '~/kb'`, or set in a
 * service's environment) it reached the CLI as is, and made a folder named `~` in the current one.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined && flag.trim() === '') throw new InvalidInput('--data-dir: must not be empty.');
  const fromEnv = env.KBSTUDIO_DATA_DIR?.trim() ? env.KBSTUDIO_DATA_DIR : undefined;
  const chosen = flag ?? fromEnv;
  return resolve(chosen === undefined ? defaultDataDir(env) : expandHome(chosen));
}
