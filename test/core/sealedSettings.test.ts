import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddingModelUnavailable } from '../../src/core/embed/errors';
import { SEALED_PREFIX, SealedSettings } from '../../src/core/sealedSettings';
import { storeSetting } from '../../src/core/settings';
import type { KeyValueStore } from '../../src/core/push/targets';
import { plainSecretBox, type SecretBox } from '../../src/core/wallets/wallets';
import { openServices } from '../../src/db/services';
import { tempDir } from '../helpers/studio';

/** AES-256-GCM under a key of its own, as Electron's safeStorage seals with the OS keychain's key. */
function keychainBox(key = randomBytes(32)): SecretBox {
  return {
    encrypts: true,
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), body]));
    },
    open(sealed) {
      const bytes = Buffer.from(sealed);
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return new Uint8Array(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]));
    },
  };
}

function memoryStore(): KeyValueStore & { raw: Map<string, string> } {
  const raw = new Map<string, string>();
  return {
    raw,
    get: (key) => raw.get(key),
    all: () => Object.fromEntries(raw),
    set: (key, value) => void raw.set(key, value),
  };
}

const KEY = 'sk-test-0123456789abcdefghijklmnop';

describe('SealedSettings', () => {
  it("seals the providers' API keys with a box that encrypts; everything else is stored as given", () => {
    const store = memoryStore();
    const settings = new SealedSettings(store, keychainBox());
    settings.set('openai.apiKey', KEY);
    settings.set('openai.baseUrl', 'http://127.0.0.1:9/v1');
    settings.set('push.targets', '[]');
    expect(store.raw.get('openai.apiKey')).toMatch(new RegExp(`^${SEALED_PREFIX}[A-Za-z0-9+/=]+$`));
    expect(store.raw.get('openai.apiKey')).not.toContain(KEY.slice(3, 20));
    expect(store.raw.get('openai.baseUrl')).toBe('http://127.0.0.1:9/v1');
    expect(store.raw.get('push.targets')).toBe('[]');
    expect(settings.get('openai.apiKey')).toBe(KEY);
    expect(settings.all()).toEqual({
      'openai.apiKey': KEY,
      'openai.baseUrl': 'http://127.0.0.1:9/v1',
      'push.targets': '[]',
    });
    expect(settings.unreadable()).toEqual([]);
    const view = settings.describe({}).find((v) => v.key === 'openai.apiKey');
    expect(view).toMatchObject({ value: 'sk-••••mnop', source: 'stored', encryptedAtRest: true });
    expect(view).not.toHaveProperty('unreadable');
    // Cleared is cleared, not a sealed empty string.
    settings.set('openai.apiKey', '');
    expect(store.raw.get('openai.apiKey')).toBe('');
    expect(settings.describe({}).find((v) => v.key === 'openai.apiKey')).toMatchObject({ source: 'unset' });
  });

  it('stores as typed where the box does not encrypt (the CLI, kbstudio serve), and says so', () => {
    const store = memoryStore();
    const settings = new SealedSettings(store, plainSecretBox);
    settings.set('cohere.apiKey', KEY);
    expect(store.raw.get('cohere.apiKey')).toBe(KEY);
    expect(settings.describe({}).find((v) => v.key === 'cohere.apiKey')).toMatchObject({
      source: 'stored',
      encryptedAtRest: false,
    });
    // A key stored before sealing existed (as typed) is read by the app's box as well.
    expect(new SealedSettings(store, keychainBox()).get('cohere.apiKey')).toBe(KEY);
  });

  it('leaves out a key it cannot open, names it, and shows it stored without a value', () => {
    const store = memoryStore();
    new SealedSettings(store, keychainBox()).set('openai.apiKey', KEY);
    for (const box of [plainSecretBox, keychainBox()]) {
      // The CLI (no keychain), and a keychain that no longer holds the key.
      const settings = new SealedSettings(store, box);
      expect(settings.get('openai.apiKey')).toBeUndefined();
      expect(settings.all()).toEqual({});
      expect(settings.unreadable()).toEqual(['openai.apiKey']);
      expect(settings.describe({}).find((v) => v.key === 'openai.apiKey')).toEqual({
        key: 'openai.apiKey',
        value: null,
        source: 'stored',
        description: expect.any(String),
        encryptedAtRest: true,
        unreadable: true,
      });
      // The environment still overrides it.
      expect(settings.describe({ OPENAI_API_KEY: 'sk-env-0123456789' })[0]).toMatchObject({
        source: 'environment',
        value: 'sk-••••6789',
      });
    }
  });

  it('asks the keychain once per stored value, however often the settings are read', () => {
    const box = keychainBox();
    let opens = 0;
    const counting: SecretBox = { ...box, open: (sealed) => (opens++, box.open(sealed)) };
    const settings = new SealedSettings(memoryStore(), counting);
    settings.set('openai.apiKey', KEY);
    for (let i = 0; i < 5; i++) expect(settings.all()['openai.apiKey']).toBe(KEY);
    settings.describe({});
    expect(opens).toBe(1);
    // A new value is opened anew.
    settings.set('openai.apiKey', `${KEY}-2`);
    expect(settings.get('openai.apiKey')).toBe(`${KEY}-2`);
    expect(opens).toBe(2);
  });

  it('clears a key it cannot open when its base URL moves: it must not follow the URL', () => {
    const store = memoryStore();
    new SealedSettings(store, keychainBox()).set('openai.apiKey', KEY);
    const cli = new SealedSettings(store, plainSecretBox);
    expect(storeSetting(cli, 'openai.baseUrl', 'http://127.0.0.1:9/v1')).toEqual(['openai.apiKey']);
    expect(store.raw.get('openai.apiKey')).toBe('');
    expect(cli.unreadable()).toEqual([]);
  });
});

describe("the services' settings over a real data directory", () => {
  it('keep a key set in the app out of the SQLite files, and the CLI says where to use it', async () => {
    const dir = tempDir('kbs-sealed-settings-');
    try {
      const app = openServices(dir.path, { secretBox: keychainBox() });
      app.settings.set('openai.apiKey', KEY);
      expect(app.settings.get('openai.apiKey')).toBe(KEY);
      app.db.pragma('wal_checkpoint(TRUNCATE)');
      app.close();
      const files = readdirSync(dir.path).filter((f) => /\.db(-wal)?$/.test(f));
      expect(files.length).toBeGreaterThan(0);
      for (const file of files)
        expect(readFileSync(join(dir.path, file)).includes(Buffer.from(KEY))).toBe(false);

      const cli = openServices(dir.path);
      try {
        expect(() => cli.embedderFor('text-embedding-3-small')).toThrow(EmbeddingModelUnavailable);
        expect(() => cli.embedderFor('text-embedding-3-small')).toThrow(
          "openai.apiKey is encrypted with the desktop app's OS keychain, which this process cannot open; use it from the KB Studio app, or set OPENAI_API_KEY in the environment.",
        );
        // The other provider's missing key is still reported as missing.
        expect(() => cli.embedderFor('embed-english-v3.0')).toThrow(/no Cohere API key is set/);
      } finally {
        cli.close();
      }
    } finally {
      dir.remove();
    }
  });
});
