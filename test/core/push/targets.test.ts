import { describe, expect, it } from 'vitest';
import { PushTargets, normalizeBaseUrl } from '../../../src/core/push/targets';
import { pushTargetsOf } from '../../../src/core/push/wiring';
import { plainSecretBox, type SecretBox } from '../../../src/core/wallets/wallets';

function memoryStore() {
  const values = new Map<string, string>();
  return {
    values,
    get: (key: string) => values.get(key),
    all: () => Object.fromEntries(values),
    set: (key: string, value: string) => void values.set(key, value),
  };
}

/** A box that really changes the bytes, as Electron's safeStorage does. */
const xorBox: SecretBox = {
  encrypts: true,
  seal: (plain) => plain.map((b) => b ^ 0x5a),
  open: (sealed) => sealed.map((b) => b ^ 0x5a),
};

const KEY = 'kbs_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';

describe('PushTargets', () => {
  it('keeps the key sealed, shows it only masked, and gives it back for a push', () => {
    const store = memoryStore();
    const targets = new PushTargets(store, xorBox);
    const saved = targets.save({ baseUrl: 'https://api.example.com/', apiKey: KEY, label: 'Hosted' });
    expect(saved).toMatchObject({
      baseUrl: 'https://api.example.com/v1',
      maskedKey: 'kbs_••••2345',
      encryptedAtRest: true,
      label: 'Hosted',
    });
    expect(JSON.stringify(targets.list())).not.toContain(KEY);
    expect([...store.values.values()].join('')).not.toContain(KEY);
    expect(targets.apiKeyOf(saved.id)).toBe(KEY);
  });

  it('updates the target of the same base URL instead of adding another, and forgets on delete', () => {
    const targets = new PushTargets(memoryStore(), plainSecretBox);
    const first = targets.save({ baseUrl: 'https://api.example.com/v1', apiKey: KEY });
    const second = targets.save({
      baseUrl: 'https://api.example.com/v1/',
      apiKey: 'kbs_another-key-0000000000000',
    });
    expect(second.id).toBe(first.id);
    expect(targets.list()).toHaveLength(1);
    expect(targets.apiKeyOf(first.id)).toBe('kbs_another-key-0000000000000');
    expect(targets.findByUrl('https://api.example.com')?.id).toBe(first.id);

    // Moved elsewhere, a target needs its key again: the saved one is never sent to another address.
    expect(() => targets.update(first.id, { baseUrl: 'http://127.0.0.1:9/v1' })).toThrow(
      /^apiKey: required to move a target to another address \(http:\/\/127\.0\.0\.1:9\/v1\)/,
    );
    expect(targets.get(first.id).baseUrl).toBe('https://api.example.com/v1');
    expect(targets.update(first.id, { label: 'Renamed only' })).toMatchObject({ label: 'Renamed only' });
    const renamed = targets.update(first.id, {
      label: 'Prod',
      baseUrl: 'https://kb.example.org',
      apiKey: 'kbs_another-key-0000000000000',
    });
    expect(renamed).toMatchObject({ label: 'Prod', baseUrl: 'https://kb.example.org/v1' });
    expect(targets.list().map((t) => t.baseUrl)).toEqual(['https://kb.example.org/v1']);

    targets.remove(first.id);
    expect(targets.list()).toEqual([]);
    expect(() => targets.get(first.id)).toThrow(/No push target/);
  });

  it("seals with the services' SecretBox when they carry one, as wallet secrets are", () => {
    expect(
      pushTargetsOf({ settings: memoryStore(), secretBox: xorBox }).save({
        baseUrl: 'https://a.example',
        apiKey: KEY,
      }).encryptedAtRest,
    ).toBe(true);
    expect(
      pushTargetsOf({ settings: memoryStore() }).save({ baseUrl: 'https://a.example', apiKey: KEY })
        .encryptedAtRest,
    ).toBe(false);
  });

  it('refuses a key sealed by the app keychain when this process has no keychain', () => {
    const store = memoryStore();
    const saved = new PushTargets(store, xorBox).save({ baseUrl: 'https://a.example/v1', apiKey: KEY });
    expect(() => new PushTargets(store, plainSecretBox).apiKeyOf(saved.id)).toThrow(/keychain/);
  });

  it('remembers the remote listing per service and local listing', () => {
    const targets = new PushTargets(memoryStore(), plainSecretBox);
    targets.rememberRemoteListing('https://a.example', 'lst_local', 'lst_remote');
    expect(targets.remoteListing('https://a.example/v1/', 'lst_local')).toBe('lst_remote');
    expect(targets.remoteListing('https://b.example/v1', 'lst_local')).toBeUndefined();
    targets.rememberRemoteListing('https://a.example/v1', 'lst_local', undefined);
    expect(targets.remoteListing('https://a.example/v1', 'lst_local')).toBeUndefined();
  });

  it('refuses addresses that are not http(s) URLs and keys with spaces', () => {
    const targets = new PushTargets(memoryStore(), plainSecretBox);
    expect(() => targets.save({ baseUrl: 'ftp://x.example', apiKey: KEY })).toThrow(/http\(s\)/);
    expect(() => targets.save({ baseUrl: 'not a url', apiKey: KEY })).toThrow(/absolute URL/);
    expect(() => targets.save({ baseUrl: 'https://x.example', apiKey: 'kbs_ a' })).toThrow(/apiKey/);
    expect(normalizeBaseUrl('http://127.0.0.1:7410')).toBe('http://127.0.0.1:7410/v1');
  });
});
