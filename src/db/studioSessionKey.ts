import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The data directory's key for the studio page's browser session (see server/studioSession.ts). */
export const STUDIO_SESSION_KEY_FILE = 'studio-session.key';

const KEY_BYTES = 32;
const KEY_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Reads the data directory's studio session key, creating it on first use. It outlives a launch, so a
 * browser that opened the studio's link once keeps its session when the server is started again; it
 * is never sent anywhere (cookies carry a MAC made with it). Deleting the file signs every browser out.
 * The file is private to its user (0600) and written whole or not at all.
 */
export function studioSessionKey(dataDir: string): Buffer {
  const path = join(dataDir, STUDIO_SESSION_KEY_FILE);
  const existing = readKey(path);
  if (existing) return existing;
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    // A link is created whole or not at all, and never over an existing file: of two processes starting
    // together on a new data directory, one key wins and both read it back.
    linkSync(temp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // A file that holds no key (edited by hand, say) is replaced: that only signs browsers out.
    if (!readKey(path)) renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
  const key = readKey(path);
  if (!key) throw new Error(`${path} does not hold a studio session key; delete it and start again.`);
  return key;
}

/** The key a file holds, or undefined when there is none or it is not one this module wrote. */
function readKey(path: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return KEY_PATTERN.test(text) ? Buffer.from(text, 'hex') : undefined;
}
