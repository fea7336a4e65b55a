import { describe, expect, it } from 'vitest';
import { plainSecretBox } from '../../src/core/wallets/wallets';
import { chooseSecretBox, type SafeStorageLike } from '../../src/main/secretBox';

/** A stand-in for Electron's safeStorage: reversible, and visibly not the plain text. */
function fakeSafeStorage(available: boolean, backend?: string): SafeStorageLike & { sealed: string[] } {
  const sealed: string[] = [];
  return {
    sealed,
    isEncryptionAvailable: () => available,
    encryptString: (plain) => {
      sealed.push(plain);
      return Buffer.from(`enc:${[...plain].reverse().join('')}`, 'utf8');
    },
    decryptString: (encrypted) => {
      const text = encrypted.toString('utf8');
      if (!text.startsWith('enc:')) throw new Error('not sealed by this storage');
      return [...text.slice(4)].reverse().join('');
    },
    ...(backend ? { getSelectedStorageBackend: () => backend } : {}),
  };
}

const secret = Uint8Array.from({ length: 64 }, (_, i) => (i * 37) % 256);

describe('chooseSecretBox', () => {
  it('seals wallet secrets with safeStorage when the OS encrypts, and opens them again', () => {
    const storage = fakeSafeStorage(true, 'gnome_libsecret');
    const warnings: string[] = [];
    const box = chooseSecretBox(storage, 'linux', (m) => warnings.push(m));
    expect(box.encrypts).toBe(true);
    const sealed = box.seal(secret);
    expect(Buffer.from(sealed).toString('utf8')).toMatch(/^enc:/);
    expect(Buffer.from(sealed).includes(Buffer.from(secret))).toBe(false);
    expect(box.open(sealed)).toEqual(secret);
    expect(storage.sealed).toEqual([Buffer.from(secret).toString('base64')]);
    expect(warnings).toEqual([]);
  });

  it('falls back to plain storage with a warning when safeStorage is unavailable', () => {
    const warnings: string[] = [];
    const box = chooseSecretBox(fakeSafeStorage(false), 'win32', (m) => warnings.push(m));
    expect(box).toBe(plainSecretBox);
    expect(warnings).toEqual([expect.stringContaining('stored unencrypted')]);
  });

  it("treats Linux's basic_text backend (a fixed password) as no encryption", () => {
    const warnings: string[] = [];
    const box = chooseSecretBox(fakeSafeStorage(true, 'basic_text'), 'linux', (m) => warnings.push(m));
    expect(box.encrypts).toBe(false);
    expect(warnings).toEqual([expect.stringContaining('basic_text')]);
  });
});
