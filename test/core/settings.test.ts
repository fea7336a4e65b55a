import { describe, expect, it } from 'vitest';
import {
  describeSettings,
  effectiveSettings,
  maskSecret,
  SETTING_VALUE_MAX,
  storeSetting,
} from '../../src/core/settings';
import { maskUrlCredentials } from '../../src/shared/maskUrl';

function memoryStore() {
  const raw = new Map<string, string>();
  return {
    raw,
    all: () => Object.fromEntries(raw),
    set: (key: string, value: string) => void raw.set(key, value),
  };
}

const shown = (store: ReturnType<typeof memoryStore>, key: string) =>
  describeSettings(store.all(), {}).find((v) => v.key === key)!;

describe('storeSetting', () => {
  it('stores a value trimmed, as the studio route always did', () => {
    const store = memoryStore();
    storeSetting(store, 'cohere.apiKey', ' co-test-0123456789 \n');
    expect(store.raw.get('cohere.apiKey')).toBe('co-test-0123456789');
  });

  it('clears a setting given a blank value, without checking it as a value', () => {
    const store = memoryStore();
    storeSetting(store, 'cohere.apiKey', 'co-test-0123456789');
    storeSetting(store, 'cohere.apiKey', '   ');
    expect(shown(store, 'cohere.apiKey')).toMatchObject({ source: 'unset', value: null });
    storeSetting(store, 'solana.rpcUrl', '');
    expect(shown(store, 'solana.rpcUrl').source).toBe('unset');
  });

  it(`refuses a value over ${SETTING_VALUE_MAX} characters, whoever stores it`, () => {
    const store = memoryStore();
    expect(() => storeSetting(store, 'cohere.apiKey', 'x'.repeat(SETTING_VALUE_MAX + 1))).toThrow(
      'cohere.apiKey: The value can be at most 4,000 characters (got 4,001).',
    );
    expect(store.raw.size).toBe(0);
    storeSetting(store, 'cohere.apiKey', 'x'.repeat(SETTING_VALUE_MAX));
    expect(store.raw.get('cohere.apiKey')).toHaveLength(SETTING_VALUE_MAX);
  });

  it('still checks the form of a value and the key', () => {
    const store = memoryStore();
    expect(() => storeSetting(store, 'solana.rpcUrl', ' devnet ')).toThrow(/must be an http\(s\) URL/);
    expect(() => storeSetting(store, 'openai.key' as never, '')).toThrow(/is not a setting/);
  });

  it('refuses a provider base URL its requests could not use: credentials, a query or a fragment', () => {
    // `${baseUrl}/embeddings` put the path after the query (…/v1?token=x/embeddings), and fetch refuses
    // a URL holding credentials: such a URL was stored, then every request failed.
    const store = memoryStore();
    expect(() => storeSetting(store, 'openai.baseUrl', 'https://user:pw@proxy.example.com/v1')).toThrow(
      'openai.baseUrl: must not hold a user name or password (the API key goes in its own setting).',
    );
    for (const value of ['https://proxy.example.com/v1?token=x', 'https://proxy.example.com/v1#top']) {
      expect(() => storeSetting(store, 'cohere.baseUrl', value)).toThrow(
        'cohere.baseUrl: must not hold a query string or fragment (the endpoint paths are appended to it).',
      );
    }
    expect(store.all()).toEqual({});
    storeSetting(store, 'openai.baseUrl', 'https://proxy.example.com/openai/v1');
    expect(store.all()['openai.baseUrl']).toBe('https://proxy.example.com/openai/v1');
  });
});

describe('maskSecret', () => {
  it('hides most of every secret: the last 4 characters only from 16 characters on', () => {
    expect(maskSecret('short1234')).toBe('••••');
    expect(maskSecret('abcdefghijklmno')).toBe('••••');
    expect(maskSecret('abcdefghijklmnop')).toBe('••••mnop');
    expect(maskSecret('0123456789abcdef0123456789abcdef0123456789')).toBe('••••6789');
  });

  it("keeps a provider's public prefix, never a key's own first characters", () => {
    expect(maskSecret('sk-test-1234567890abcd')).toBe('sk-••••abcd');
    expect(maskSecret('sk-short12')).toBe('sk-••••');
    expect(maskSecret('co-test-0123456789')).toBe('co-••••6789');
    expect(maskSecret('Ab3dEfGhIjKlMnOpQrSt')).toBe('••••QrSt');
  });

  it('is what settings show and the studio send for a secret', () => {
    const store = memoryStore();
    storeSetting(store, 'openai.apiKey', 'short1234');
    expect(shown(store, 'openai.apiKey').value).toBe('••••');
  });
});

describe('a base URL as shown', () => {
  const env = {
    OPENAI_BASE_URL: 'https://user:hunter2pass@proxy.example.com/v1?token=secret123456',
  };

  it("masks the password and query values of the environment's base URL, and requests keep the real one", () => {
    const view = describeSettings({}, env).find((v) => v.key === 'openai.baseUrl')!;
    expect(view).toMatchObject({
      source: 'environment',
      value: 'https://user:••••@proxy.example.com/v1?token=••••',
    });
    expect(JSON.stringify(describeSettings({}, env))).not.toMatch(/hunter2pass|secret123456/);
    expect(effectiveSettings({}, env)['openai.baseUrl']).toBe(env.OPENAI_BASE_URL);
  });

  it('masks a stored base URL the same way (one stored before such URLs were refused)', () => {
    const store = memoryStore();
    store.set('cohere.baseUrl', 'http://me:p%40ss@127.0.0.1:8080/?key=abc&region=eu&debug=');
    expect(shown(store, 'cohere.baseUrl')).toMatchObject({
      source: 'stored',
      value: 'http://me:••••@127.0.0.1:8080/?key=••••&region=••••&debug=',
    });
    expect(store.all()['cohere.baseUrl']).toContain('p%40ss');
  });

  it('masks the key of a Solana RPC URL, in its query or its path', () => {
    const store = memoryStore();
    store.set('solana.rpcUrl', 'https://mainnet.helius-rpc.com/?api-key=9f8e7d6c-5b4a-4321');
    expect(shown(store, 'solana.rpcUrl').value).toBe('https://mainnet.helius-rpc.com/?api-key=••••');
    store.set('solana.rpcUrl', 'https://solana-mainnet.g.alchemy.com/v2/Zx81kQ0pLm3Nb7Vc2Xa9');
    expect(shown(store, 'solana.rpcUrl').value).toBe('https://solana-mainnet.g.alchemy.com/v2/••••');
    store.set('solana.rpcUrl', 'https://api.devnet.solana.com');
    expect(shown(store, 'solana.rpcUrl').value).toBe('https://api.devnet.solana.com');
  });

  it('leaves a URL with no password or query as typed', () => {
    const store = memoryStore();
    store.set('openai.baseUrl', 'https://user@proxy.example.com/v1/');
    expect(shown(store, 'openai.baseUrl').value).toBe('https://user@proxy.example.com/v1/');
    expect(maskUrlCredentials('http://127.0.0.1:9')).toBe('http://127.0.0.1:9');
  });

  it('masks a password holding @ or :, and a query part with no name', () => {
    expect(maskUrlCredentials('https://u:a:b@c@host/v1?abcdef&x=1#top')).toBe(
      'https://u:••••@host/v1?••••&x=••••#top',
    );
    expect(maskUrlCredentials('https://host:8443/path@x?')).toBe('https://host:8443/path@x?');
  });
});
