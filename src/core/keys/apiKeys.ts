import { createHash } from 'node:crypto';
import type { ApiKey, CreatedApiKey } from '../../shared/studio';
import { InvalidInput, NotFound } from '../errors';
import { newId, randomBase62 } from '../ids';
import { isWalletAddress } from '../wallets/keypair';

export const API_KEY_PATTERN = /^kbs_[0-9A-Za-z]{32}$/;

export interface ApiKeyRecord {
  id: string;
  keyHash: string;
  prefix: string;
  label: string;
  wallet: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Why a key was made: `playground` for the studio's own (revoked at its next launch), else none. */
export type ApiKeyPurpose = 'playground';

export interface ApiKeyRepository {
  insert(record: ApiKeyRecord, purpose?: ApiKeyPurpose): void;
  list(wallet?: string): ApiKeyRecord[];
  findById(id: string): ApiKeyRecord | undefined;
  findActiveByHash(keyHash: string): ApiKeyRecord | undefined;
  /** Revoked keys included. */
  findByHash(keyHash: string): ApiKeyRecord | undefined;
  revoke(id: string, at: string): void;
  /** Revokes the live keys made for `purpose` before `createdBefore`; returns how many. */
  revokeMadeFor(purpose: ApiKeyPurpose, createdBefore: string, at: string): number;
  touch(id: string, at: string): void;
}

/** Who is calling: the key they used and the wallet it is scoped to. */
export interface Principal {
  keyId: string;
  wallet: string;
}

/** The longest label a key may have: the studio's API keys table shows it in one cell. */
export const API_KEY_LABEL_MAX = 100;

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export class ApiKeyService {
  constructor(
    private readonly repo: ApiKeyRepository,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Creates a key for a wallet. The key itself is returned here once and never stored. `purpose` marks
   * a key the studio makes for itself (revokeMadeFor), never one a person asked for.
   */
  create(wallet: string, typedLabel = '', purpose?: ApiKeyPurpose): CreatedApiKey {
    if (!isWalletAddress(wallet))
      throw new InvalidInput(`wallet: '${wallet}' is not a base58 wallet address.`);
    // The same rule as POST /studio/keys (CreateApiKeySchema), for the CLI and every other caller.
    const label = typedLabel.trim();
    if (label.length > API_KEY_LABEL_MAX) {
      throw new InvalidInput(
        `label: The label can be at most ${API_KEY_LABEL_MAX} characters (got ${label.length}).`,
      );
    }
    const key = `kbs_${randomBase62(32)}`;
    const id = newId('key', 12);
    this.repo.insert(
      {
        id,
        keyHash: hashApiKey(key),
        prefix: key.slice(0, 8),
        label,
        wallet,
        createdAt: this.now().toISOString(),
        lastUsedAt: null,
        revokedAt: null,
      },
      purpose,
    );
    return { id, key, wallet };
  }

  list(wallet?: string): ApiKey[] {
    return this.repo.list(wallet).map(({ keyHash: _hash, ...rest }) => rest);
  }

  /** Revokes a key at once; a key revoked before keeps its first `revokedAt`. */
  revoke(id: string): ApiKey {
    return this.revokeOnce(id).key;
  }

  /** Revokes every live key made for `purpose` before `createdBefore` (an ISO time); returns how many. */
  revokeMadeFor(purpose: ApiKeyPurpose, createdBefore: string): number {
    return this.repo.revokeMadeFor(purpose, createdBefore, this.now().toISOString());
  }

  /** As `revoke`, saying whether the key had been revoked before (then nothing changed). */
  revokeOnce(id: string): { key: ApiKey; alreadyRevoked: boolean } {
    const record = this.repo.findById(id);
    if (!record) throw new NotFound(`No API key with id '${id}'.`);
    const alreadyRevoked = record.revokedAt !== null;
    if (!alreadyRevoked) this.repo.revoke(id, this.now().toISOString());
    const { keyHash: _hash, ...rest } = this.repo.findById(id)!;
    return { key: rest, alreadyRevoked };
  }

  /**
   * The principal for a presented key, or undefined. Keys are looked up by their SHA-256 hash, so the
   * comparison never touches the secret itself and takes the same path for every wrong key.
   */
  authenticate(key: string): Principal | undefined {
    if (!API_KEY_PATTERN.test(key)) return undefined;
    const record = this.repo.findActiveByHash(hashApiKey(key));
    if (!record) return undefined;
    // Last-use is informational: write it at most once a minute, not on every request.
    const now = this.now();
    if (!record.lastUsedAt || now.getTime() - Date.parse(record.lastUsedAt) > 60_000) {
      this.repo.touch(record.id, now.toISOString());
    }
    return { keyId: record.id, wallet: record.wallet };
  }

  /**
   * Why `authenticate` refused a key, for the 401's message. The caller holds the key, so saying that
   * it was revoked (and when) tells nobody anything they could not learn by using it.
   */
  refusal(key: string): string {
    if (!API_KEY_PATTERN.test(key)) {
      return 'Invalid API key: it is not in the form of a KB Studio key ("kbs_" and 32 letters or digits); copy the whole key.';
    }
    const record = this.repo.findByHash(hashApiKey(key));
    if (record?.revokedAt) {
      return `Invalid API key: key ${record.prefix}… was revoked at ${record.revokedAt}; create a new one.`;
    }
    return 'Invalid API key: no such key (it may belong to another data directory or service).';
  }
}
