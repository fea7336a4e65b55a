import { homedir } from 'node:os';
import { join } from 'node:path';

/** `~` alone or before a separator; `~user` and `a/~` are left as they are. */
const HOME_PREFIX = process.platform === 'win32' ? /^~(?=$|[/\\])/ : /^~(?=$|\/)/;

/**
 * A leading `~` as a shell would read it: the home folder. A path quoted on the command line
 * (`--data-dir '~/kb'`) or set in a service's environment reaches the program as typed.
 */
export const expandHome = (path: string): string =>
  HOME_PREFIX.test(path) ? join(homedir(), path.slice(1)) : path;
