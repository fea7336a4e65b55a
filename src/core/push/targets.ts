import { maskUrlCredentials } from '../../shared/maskUrl';
import type { PushTarget, PushTargetInput, PushTargetPatch } from '../../shared/push';
import { Forbidden, InvalidInput, NotFound } from '../errors';
import { newId } from '../ids';
import type { SecretBox } from '../wallets/wallets';

/** The settings table, as a key-value store (its repository has no delete: an empty value is absent). */
export interface KeyValueStore {
  get(key: string): string | undefined;
  all(): Record<string, string>;
  set(key: string, value: string): void;
}

interface StoredTarget {
  id: string;
  label: string | null;
  baseUrl: string;
  /** base64 of the SecretBox-sealed key. */
  sealedKey: string;
  encrypted: boolean;
  /** Enough of the key to recognise it, kept so showing it never needs the keychain. */
  maskedKey: string;
  createdAt: string;
  updatedAt: string;
}

const TARGET_PREFIX = 'push.target.';
const REMOTE_LISTING_PREFIX = 'push.remoteListing.';

/**
 * Remembered push targets (base URL + API key) and the remote listing each local listing was pushed
 * to. Kept in the settings table, no schema of their own; the key is sealed with the same SecretBox
 * as wallet secrets and never returned once saved, only masked.
 */
export class PushTargets {
  constructor(
    private readonly store: KeyValueStore,
    private readonly box: SecretBox,
    private readonly now: () => Date = () => new Date(),
  ) {}

  list(): PushTarget[] {
    return this.records()
      .map(view)
      .sort((a, b) => a.baseUrl.localeCompare(b.baseUrl));
  }

  get(id: string): PushTarget {
    return view(this.record(id));
  }

  /** Saves a target; a target with the same base URL is updated (one key per service). */
  save(input: PushTargetInput): PushTarget {
    const baseUrl = normalizeBaseUrl(input.baseUrl);
    const apiKey = checkApiKey(input.apiKey);
    const at = this.now().toISOString();
    const existing = this.findByUrl(baseUrl);
    const record: StoredTarget = {
      id: existing?.id ?? newId('tgt', 12),
      label: input.label?.trim() || existing?.label || null,
      baseUrl,
      ...this.seal(apiKey),
      createdAt: existing?.createdAt ?? at,
      updatedAt: at,
    };
    this.write(record);
    return view(record);
  }

  update(id: string, patch: PushTargetPatch): PushTarget {
    const record = this.record(id);
    const baseUrl = patch.baseUrl === undefined ? record.baseUrl : normalizeBaseUrl(patch.baseUrl);
    const clash = this.findByUrl(baseUrl);
    if (clash && clash.id !== id) throw new InvalidInput(`baseUrl: a target for ${baseUrl} already exists.`);
    // The saved key goes only to the address it was saved for: pointing a target elsewhere without a
    // key would have sent that key (never shown again, masked) to whoever answers there.
    if (baseUrl !== record.baseUrl && patch.apiKey === undefined) {
      throw new InvalidInput(
        `apiKey: required to move a target to another address (${baseUrl}): the key saved for ${record.baseUrl} is not sent anywhere else.`,
      );
    }
    const updated: StoredTarget = {
      ...record,
      baseUrl,
      label: patch.label === undefined ? record.label : patch.label.trim() || null,
      ...(patch.apiKey === undefined ? {} : this.seal(checkApiKey(patch.apiKey))),
      updatedAt: this.now().toISOString(),
    };
    if (baseUrl !== record.baseUrl) this.store.set(TARGET_PREFIX + record.id, '');
    this.write(updated);
    return view(updated);
  }

  remove(id: string): PushTarget {
    const record = this.record(id);
    this.store.set(TARGET_PREFIX + id, '');
    return view(record);
  }

  findByUrl(baseUrl: string): StoredTarget | undefined {
    const url = normalizeBaseUrl(baseUrl);
    return this.records().find((r) => r.baseUrl === url);
  }

  /** The API key of a target, for the push in this process only. */
  apiKeyOf(id: string): string {
    const record = this.record(id);
    const sealed = Buffer.from(record.sealedKey, 'base64');
    if (!record.encrypted) return sealed.toString('utf8');
    if (!this.box.encrypts) {
      throw new Forbidden(
        `The API key of ${record.baseUrl} is encrypted with the desktop app's OS keychain; push from the app, or pass --api-key.`,
      );
    }
    return Buffer.from(this.box.open(new Uint8Array(sealed))).toString('utf8');
  }

  /** The remote listing a local listing was pushed to on `baseUrl`, if any. */
  remoteListing(baseUrl: string, listingId: string): string | undefined {
    return this.remembered(baseUrl, listingId)[0] || undefined;
  }

  /** The fingerprint of the API key that push used, if known (pushes before it was kept have none). */
  remoteListingKey(baseUrl: string, listingId: string): string | undefined {
    return this.remembered(baseUrl, listingId)[1] || undefined;
  }

  rememberRemoteListing(
    baseUrl: string,
    listingId: string,
    remoteId: string | undefined,
    keyFingerprint?: string,
  ): void {
    const value = remoteId ? (keyFingerprint ? `${remoteId}\t${keyFingerprint}` : remoteId) : '';
    this.store.set(remoteKey(baseUrl, listingId), value);
  }

  /** `<remote id>` or `<remote id>\t<key fingerprint>`, as stored. */
  private remembered(baseUrl: string, listingId: string): [string, string] {
    const [id = '', fingerprint = ''] = (this.store.get(remoteKey(baseUrl, listingId)) ?? '').split('\t');
    return [id, fingerprint];
  }

  private seal(apiKey: string): Pick<StoredTarget, 'sealedKey' | 'encrypted' | 'maskedKey'> {
    const sealed = this.box.seal(new TextEncoder().encode(apiKey));
    return {
      sealedKey: Buffer.from(sealed).toString('base64'),
      encrypted: this.box.encrypts,
      maskedKey: maskKey(apiKey),
    };
  }

  private write(record: StoredTarget): void {
    this.store.set(TARGET_PREFIX + record.id, JSON.stringify(record));
  }

  private record(id: string): StoredTarget {
    const text = this.store.get(TARGET_PREFIX + id);
    if (!text) throw new NotFound(`No push target '${id}'.`);
    return JSON.parse(text) as StoredTarget;
  }

  private records(): StoredTarget[] {
    return Object.entries(this.store.all())
      .filter(([key, value]) => key.startsWith(TARGET_PREFIX) && value !== '')
      .map(([, value]) => JSON.parse(value) as StoredTarget);
  }
}

const remoteKey = (baseUrl: string, listingId: string) =>
  `${REMOTE_LISTING_PREFIX}${normalizeBaseUrl(baseUrl)}|${listingId}`;

function view(record: StoredTarget): PushTarget {
  return {
    id: record.id,
    label: record.label,
    baseUrl: record.baseUrl,
    maskedKey: record.maskedKey,
    encryptedAtRest: record.encrypted,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** `kbs_••••a1b2`. */
export function maskKey(key: string): string {
  return key.length <= 12 ? '••••' : `${key.slice(0, 4)}••••${key.slice(-4)}`;
}

/** The key as it is saved (trimmed); refuses one with spaces inside, as saving it would. */
export function checkApiKey(apiKey: string): string {
  const key = apiKey.trim();
  if (key === '' || /\s/.test(key)) throw new InvalidInput('apiKey: paste the API key without spaces.');
  return key;
}

/** The `/v1` base URL as the client library uses it: a bare origin gets `/v1`, no trailing slash. */
export function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new InvalidInput(
      `baseUrl: '${baseUrl}' is not an absolute URL such as https://api.example.com/v1.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInput(`baseUrl: '${baseUrl}' must be an http(s) URL.`);
  }
  // The key goes as a bearer token: userinfo was silently dropped, and neither it nor a query's key
  // is echoed back in clear.
  if (url.username || url.password)
    throw new InvalidInput(
      `baseUrl: '${maskUrlCredentials(baseUrl)}' must not hold a user name or password (the service's API key is sent as a bearer token).`,
    );
  if (url.search || url.hash)
    throw new InvalidInput(`baseUrl: '${maskUrlCredentials(baseUrl)}' must not have a query or fragment.`);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/v1' : path}`;
}
