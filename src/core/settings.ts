import bs58 from 'bs58';
import { maskUrlCredentials, RPC_URL_MASK, type UrlMaskOptions } from '../shared/maskUrl';
import { InvalidInput } from './errors';

/** A setting the user can store (`kbstudio settings set`) and the environment can override (DESIGN §8). */
interface SettingDefinition {
  env: string;
  secret: boolean;
  /** A URL shown with its userinfo password and query values masked (`maskUrlCredentials`, these options). */
  maskCredentials?: UrlMaskOptions;
  description: string;
  validate?: (value: string) => string | undefined;
}

const url = (value: string) => {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : 'must be an http(s) URL';
  } catch {
    return 'must be an http(s) URL';
  }
};

/**
 * A provider's base URL: the endpoints' paths are appended to it (`${baseUrl}/embeddings`), so a query
 * string or a fragment would end up before them, and fetch refuses a URL holding credentials. The key
 * goes in the provider's key setting, which is sent as a bearer token.
 */
const providerBaseUrl = (value: string) => {
  const problem = url(value);
  if (problem) return problem;
  const u = new URL(value);
  if (u.username || u.password)
    return 'must not hold a user name or password (the API key goes in its own setting)';
  if (u.search || u.hash || value.includes('?') || value.includes('#'))
    return 'must not hold a query string or fragment (the endpoint paths are appended to it)';
  return undefined;
};

/**
 * The hosted service's base URL: push appends `/upload` to it, and sends the service's API key as a
 * bearer token (`--api-key`, or the key saved with the push target). Userinfo would never be sent (push
 * used the URL's origin and path), and a query is refused by push: neither belongs in the setting, where
 * `settings show` would print a credential in clear.
 */
const hostedBaseUrl = (value: string) => {
  const problem = url(value);
  if (problem) return problem;
  const u = new URL(value);
  if (u.username || u.password)
    return "must not hold a user name or password (push sends the service's API key as a bearer token)";
  if (u.search || u.hash || value.includes('?') || value.includes('#'))
    return "must not hold a query string or fragment (push appends /upload to it, and sends the service's API key as a bearer token)";
  return undefined;
};

/** A Solana address: base58 of 32 bytes (checked when stored, not first when a listing is published). */
const solanaAddress = (value: string) => {
  try {
    return bs58.decode(value).length === 32 ? undefined : 'must be a base58 Solana address (32 bytes)';
  } catch {
    return 'must be a base58 Solana address (32 bytes)';
  }
};

/** How a secret sealed with the desktop app's keychain is stored (core/sealedSettings.ts). */
export const SEALED_PREFIX = 'sealed:v1:';

/** A key typed with the sealed values' prefix would read as one sealed by the app. */
const notSealedText = (value: string) =>
  value.startsWith(SEALED_PREFIX)
    ? `must not begin with '${SEALED_PREFIX}' (how sealed keys are stored)`
    : undefined;

export const SETTINGS = {
  'openai.apiKey': {
    env: 'OPENAI_API_KEY',
    secret: true,
    description: 'OpenAI API key for text-embedding-3-*',
    validate: notSealedText,
  },
  'openai.baseUrl': {
    env: 'OPENAI_BASE_URL',
    secret: false,
    maskCredentials: {},
    description: 'OpenAI-compatible API base URL',
    validate: providerBaseUrl,
  },
  'cohere.apiKey': {
    env: 'COHERE_API_KEY',
    secret: true,
    description: 'Cohere API key for embed-*-v3.0',
    validate: notSealedText,
  },
  'cohere.baseUrl': {
    env: 'COHERE_BASE_URL',
    secret: false,
    maskCredentials: {},
    description: 'Cohere API base URL',
    validate: providerBaseUrl,
  },
  'solana.rpcUrl': {
    env: 'SOLANA_RPC_URL',
    secret: false,
    maskCredentials: RPC_URL_MASK,
    description: 'Solana JSON-RPC URL (devnet during the beta)',
    validate: url,
  },
  'solana.programId': {
    env: 'KBSTUDIO_PROGRAM_ID',
    secret: false,
    description: 'Marketplace program ID',
    validate: solanaAddress,
  },
  'hosted.url': {
    env: 'KBSTUDIO_HOSTED_URL',
    secret: false,
    // A value from the environment, or stored before it was checked, may still hold one.
    maskCredentials: {},
    description: 'Hosted marketplace /v1 base URL',
    validate: hostedBaseUrl,
  },
} as const satisfies Record<string, SettingDefinition>;

export type SettingKey = keyof typeof SETTINGS;
export type Settings = Partial<Record<SettingKey, string>>;

export interface SettingView {
  key: SettingKey;
  value: string | null;
  source: 'environment' | 'stored' | 'unset';
  description: string;
  /** A stored secret: whether it is encrypted at rest (the desktop app's OS keychain). */
  encryptedAtRest?: boolean;
  /** A stored secret this process cannot open (encrypted by the desktop app); `value` is then null. */
  unreadable?: true;
}

/** What the settings store knows of its sealed secrets (core/sealedSettings.ts). */
export interface SecretSealing {
  unreadable(): SettingKey[];
  encryptedAtRest(key: SettingKey): boolean;
}

/** The longest value a setting holds (a key or a URL is far shorter): the CLI and the studio alike. */
export const SETTING_VALUE_MAX = 4_000;

/** `key` as a setting's key, or `InvalidInput` listing the settings. */
export function settingKey(key: string): SettingKey {
  if (!Object.hasOwn(SETTINGS, key)) {
    throw new InvalidInput(`key: '${key}' is not a setting. Settings: ${Object.keys(SETTINGS).join(', ')}.`);
  }
  return key as SettingKey;
}

/** Checks a value to store (already trimmed; a blank value clears and is not checked). */
export function checkSetting(key: string, value: string): SettingKey {
  const checked = settingKey(key);
  if (value.length > SETTING_VALUE_MAX) {
    throw new InvalidInput(
      `${key}: The value can be at most ${SETTING_VALUE_MAX.toLocaleString('en-US')} characters (got ${value.length.toLocaleString('en-US')}).`,
    );
  }
  const definition: SettingDefinition = SETTINGS[checked];
  const problem = definition.validate?.(value);
  if (problem) throw new InvalidInput(`${key}: ${problem}.`);
  return checked;
}

/** The stored secret sent to each base URL: moving the URL must not take the secret along. */
const SECRET_OF_URL: Partial<Record<SettingKey, SettingKey>> = {
  'openai.baseUrl': 'openai.apiKey',
  'cohere.baseUrl': 'cohere.apiKey',
};

/**
 * Stores a setting in `store`, as typed by the CLI or the Settings view alike: the value is trimmed
 * (a pasted key keeps no spaces), a blank value clears the setting, any other is checked
 * (`checkSetting`: its length and its form). A base URL changed while a key for it is stored clears
 * that key: the masked key was never shown again, but pointing the URL at one's own server would have
 * had the studio send it there. Returns the keys cleared so (none, usually).
 */
export function storeSetting(
  store: { all(): Record<string, string>; set(key: string, value: string): void } & Partial<SecretSealing>,
  key: SettingKey,
  typed: string,
): SettingKey[] {
  const value = typed.trim();
  if (value !== '') checkSetting(key, value);
  else settingKey(key);
  const stored = store.all();
  const secret = SECRET_OF_URL[key];
  // A key this process cannot open (sealed by the desktop app) is stored all the same.
  const keyStored = (k: SettingKey) => Boolean(stored[k]) || (store.unreadable?.().includes(k) ?? false);
  const moved = secret !== undefined && (stored[key] ?? '') !== value && keyStored(secret);
  store.set(key, value);
  if (!moved) return [];
  store.set(secret, '');
  return [secret];
}

/** Stored settings with the environment applied on top; read once at the edge and passed in. */
export function effectiveSettings(
  stored: Record<string, string>,
  env: Record<string, string | undefined>,
): Settings {
  const out: Settings = {};
  for (const [key, def] of Object.entries(SETTINGS) as [SettingKey, SettingDefinition][]) {
    const value = env[def.env] || stored[key];
    if (value) out[key] = value;
  }
  return out;
}

/** A value as `settings show`, `GET /studio/settings` and the Settings view show it. */
function shownValue(def: SettingDefinition, value: string): string {
  if (def.secret) return maskSecret(value);
  return def.maskCredentials ? maskUrlCredentials(value, def.maskCredentials) : value;
}

/**
 * What `settings show` prints: secrets masked, and a base URL's password and query values (a proxy's
 * `user:password@` or `?token=`), with where each value comes from. Requests use `effectiveSettings`.
 */
export function describeSettings(
  stored: Record<string, string>,
  env: Record<string, string | undefined>,
  sealing?: SecretSealing,
): SettingView[] {
  const unreadable = new Set(sealing?.unreadable() ?? []);
  return (Object.entries(SETTINGS) as [SettingKey, SettingDefinition][]).map(([key, def]) => {
    const fromEnv = env[def.env];
    const value = fromEnv || stored[key];
    const view: SettingView = {
      key,
      value: value ? shownValue(def, value) : null,
      source: fromEnv ? 'environment' : value ? 'stored' : 'unset',
      description: def.description,
    };
    if (!fromEnv && unreadable.has(key))
      return { ...view, source: 'stored', encryptedAtRest: true, unreadable: true };
    if (def.secret && view.source === 'stored' && sealing)
      view.encryptedAtRest = sealing.encryptedAtRest(key);
    return view;
  });
}

/** Prefixes that say which provider a key is for and are the same in every key of theirs. */
const PUBLIC_PREFIXES = ['sk-', 'co-'];
/** A secret shorter than this shows none of its own characters. */
const SHOWS_LAST_FOUR_FROM = 16;

/**
 * A secret as shown: `••••`, after its provider's prefix if it has one (`sk-••••`), and its last 4
 * characters only when it is long enough (16 or more) that they are a small part of it.
 */
export function maskSecret(secret: string): string {
  const prefix = PUBLIC_PREFIXES.find((p) => secret.startsWith(p)) ?? '';
  const tail = secret.length >= SHOWS_LAST_FOUR_FROM ? secret.slice(-4) : '';
  return `${prefix}••••${tail}`;
}
