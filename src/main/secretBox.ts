import { plainSecretBox, type SecretBox } from '../core/wallets/wallets';

/** The part of Electron's safeStorage the studio uses (an interface, so this file never loads electron). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: which secret store backs the encryption. */
  getSelectedStorageBackend?(): string;
}

/** Wallet secrets sealed by the OS keychain (Keychain, DPAPI, libsecret/kwallet) through safeStorage. */
export function safeStorageSecretBox(storage: SafeStorageLike): SecretBox {
  return {
    encrypts: true,
    seal: (plain) => new Uint8Array(storage.encryptString(Buffer.from(plain).toString('base64'))),
    open: (sealed) => new Uint8Array(Buffer.from(storage.decryptString(Buffer.from(sealed)), 'base64')),
  };
}

/**
 * safeStorage when it really encrypts; otherwise secrets are stored as they are, and the log says so.
 * On Linux without a keyring safeStorage falls back to 'basic_text', a fixed password: not encryption.
 */
export function chooseSecretBox(
  storage: SafeStorageLike,
  platform: NodeJS.Platform,
  warn: (message: string) => void,
): SecretBox {
  if (!storage.isEncryptionAvailable()) {
    warn(
      'OS encryption (safeStorage) is not available: wallet secrets and API keys are stored unencrypted in the data directory.',
    );
    return plainSecretBox;
  }
  if (platform === 'linux' && storage.getSelectedStorageBackend?.() === 'basic_text') {
    warn(
      'No OS keyring was found (safeStorage backend basic_text): wallet secrets and API keys are stored unencrypted.',
    );
    return plainSecretBox;
  }
  return safeStorageSecretBox(storage);
}
