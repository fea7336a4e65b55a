import type { KeyValueStore } from './push/targets';
import {
  describeSettings,
  SEALED_PREFIX,
  SETTINGS,
  type SecretSealing,
  type SettingKey,
  type SettingView,
} from './settings';
import type { SecretBox } from './wallets/wallets';

export { SEALED_PREFIX };

/** Why a stored key cannot be used here, and what to do instead. */
export function sealedKeyMessage(key: SettingKey): string {
  return `${key} is encrypted with the desktop app's OS keychain, which this process cannot open; use it from the KB Studio app, or set ${SETTINGS[key].env} in the environment.`;
}

const isSecretSetting = (key: string): key is SettingKey =>
  Object.hasOwn(SETTINGS, key) && SETTINGS[key as SettingKey].secret;

/**
 * The settings table with the providers' API keys sealed with the SecretBox, as wallet secrets and
 * push targets' keys are: in the desktop app that is the OS keychain (safeStorage); the CLI's box does
 * not encrypt, so what it stores stays as typed (as before, and readable by the app). A key sealed by
 * the app cannot be opened by the CLI: `all()` and `get()` leave it out and `unreadable()` names it,
 * so the CLI says where to use it instead of sending a provider ciphertext. Other keys (the push
 * targets' records, which seal their own keys) pass through.
 */
export class SealedSettings implements KeyValueStore, SecretSealing {
  /**
   * Opened values by their sealed text: the keychain is asked once per stored value, not on every read
   * of the settings (the marketplace ledger reads them each time it is used).
   */
  private readonly opened = new Map<string, string | undefined>();

  constructor(
    private readonly store: KeyValueStore,
    private readonly box: SecretBox,
  ) {}

  get(key: string): string | undefined {
    const stored = this.store.get(key);
    return stored === undefined || !isSecretSetting(key) ? stored : this.open(stored);
  }

  all(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, stored] of Object.entries(this.store.all())) {
      const value = isSecretSetting(key) ? this.open(stored) : stored;
      if (value !== undefined) out[key] = value;
    }
    return out;
  }

  set(key: string, value: string): void {
    const sealed =
      isSecretSetting(key) && value !== '' && this.box.encrypts
        ? SEALED_PREFIX + Buffer.from(this.box.seal(new TextEncoder().encode(value))).toString('base64')
        : value;
    this.store.set(key, sealed);
    this.opened.clear();
  }

  /**
   * The secret settings stored sealed that this process cannot open: sealed by the desktop app's
   * keychain and read by the CLI, or by a keychain that no longer holds the key.
   */
  unreadable(): SettingKey[] {
    return Object.entries(this.store.all())
      .filter(([key, stored]) => isSecretSetting(key) && stored.startsWith(SEALED_PREFIX))
      .filter(([, stored]) => this.open(stored) === undefined)
      .map(([key]) => key as SettingKey);
  }

  /** What `settings show` and the Settings view list: secrets masked, and whether they are encrypted. */
  describe(env: Record<string, string | undefined>): SettingView[] {
    return describeSettings(this.all(), env, this);
  }

  /** Whether a stored secret setting is encrypted at rest (sealed with the OS keychain). */
  encryptedAtRest(key: SettingKey): boolean {
    return this.store.get(key)?.startsWith(SEALED_PREFIX) ?? false;
  }

  /** A secret setting's value; undefined when it is sealed and cannot be opened here. */
  private open(stored: string): string | undefined {
    if (!stored.startsWith(SEALED_PREFIX)) return stored;
    if (!this.box.encrypts) return undefined;
    if (!this.opened.has(stored)) this.opened.set(stored, this.unseal(stored));
    return this.opened.get(stored);
  }

  private unseal(stored: string): string | undefined {
    try {
      const sealed = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
      return new TextDecoder().decode(this.box.open(new Uint8Array(sealed)));
    } catch {
      return undefined; // the keychain cannot open it (another user, a reset keyring): as if sealed elsewhere
    }
  }
}
