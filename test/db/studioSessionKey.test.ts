import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { STUDIO_SESSION_KEY_FILE, studioSessionKey } from '../../src/db/studioSessionKey';
import { tempDir } from '../helpers/studio';

describe('the data directory studio session key', () => {
  let dir: ReturnType<typeof tempDir>;
  afterEach(() => dir.remove());

  it('is created once, private to its user, and read back the same on every start', () => {
    dir = tempDir('kbs-session-key-');
    const key = studioSessionKey(dir.path);
    expect(key).toHaveLength(32);
    const path = join(dir.path, STUDIO_SESSION_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe(`${key.toString('hex')}\n`);
    expect(studioSessionKey(dir.path).equals(key)).toBe(true);
    // No temporary file is left next to it.
    expect(readdirSync(dir.path).filter((f) => f.startsWith(STUDIO_SESSION_KEY_FILE))).toEqual([
      STUDIO_SESSION_KEY_FILE,
    ]);
  });

  it('differs between data directories', () => {
    dir = tempDir('kbs-session-key-');
    const other = tempDir('kbs-session-key-');
    try {
      expect(studioSessionKey(dir.path).equals(studioSessionKey(other.path))).toBe(false);
    } finally {
      other.remove();
    }
  });

  it('replaces a file that holds no key (which only signs browsers out)', () => {
    dir = tempDir('kbs-session-key-');
    const path = join(dir.path, STUDIO_SESSION_KEY_FILE);
    writeFileSync(path, 'not a key\n');
    const key = studioSessionKey(dir.path);
    expect(key).toHaveLength(32);
    expect(readFileSync(path, 'utf8')).toBe(`${key.toString('hex')}\n`);
    expect(studioSessionKey(dir.path).equals(key)).toBe(true);
  });

  it('names the data directory when it cannot be written', () => {
    dir = tempDir('kbs-session-key-');
    const missing = join(dir.path, 'gone');
    expect(() => studioSessionKey(missing)).toThrow(missing);
  });
});
