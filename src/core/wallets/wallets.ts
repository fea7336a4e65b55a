import { TEST_BUYER_PREFIX, type Wallet } from '../../shared/studio';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../errors';
import { generateKeypair, keypairFromSolanaCliJson, type SolanaKeypair } from './keypair';

/** Encrypts wallet secrets at rest: Electron's safeStorage in the app, or nothing (with a warning) in the CLI. */
export interface SecretBox {
  readonly encrypts: boolean;
  seal(plain: Uint8Array): Uint8Array;
  open(sealed: Uint8Array): Uint8Array;
}

export const plainSecretBox: SecretBox = {
  encrypts: false,
  seal: (plain) => plain,
  open: (sealed) => sealed,
};

export interface WalletRecord {
  name: string;
  address: string;
  sealedSecret: Uint8Array;
  encrypted: boolean;
  isDefault: boolean;
  createdAt: string;
}

export interface WalletRepository {
  insert(record: WalletRecord): void;
  list(): WalletRecord[];
  findByName(name: string): WalletRecord | undefined;
  findByAddress(address: string): WalletRecord | undefined;
  findDefault(): WalletRecord | undefined;
}

const DEFAULT_NAME = 'default';
export const isTestBuyerName = (name: string): boolean => name.startsWith(TEST_BUYER_PREFIX);
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

export class WalletService {
  constructor(
    private readonly repo: WalletRepository,
    private readonly secrets: SecretBox,
    private readonly now: () => Date = () => new Date(),
  ) {}

  create(name?: string): Wallet {
    return this.store(name ?? this.freeName(), generateKeypair());
  }

  /** A local keypair to act as a buyer: `test-buyer-<n>`, or `test-buyer-<name>`. */
  createTestBuyer(name?: string): Wallet {
    // The first wallet becomes the default (the creator's): never let a buyer take that place.
    this.defaultWallet();
    if (name) return this.create(isTestBuyerName(name) ? name : `${TEST_BUYER_PREFIX}${name}`);
    for (let i = 1; ; i++) {
      if (!this.repo.findByName(`${TEST_BUYER_PREFIX}${i}`)) return this.create(`${TEST_BUYER_PREFIX}${i}`);
    }
  }

  /**
   * Every wallet this studio holds that can act as a buyer of a listing of `creatorWallet`: all of
   * them but the creator's, who needs no credential. Not only `test-buyer-*`: a wallet made with
   * `kbstudio wallet create` and granted from the CLI is a buyer the studio holds all the same.
   */
  buyersFor(creatorWallet: string): Wallet[] {
    return this.list().filter((w) => w.address !== creatorWallet);
  }

  /** Imports a Solana CLI keypair file (`id.json`). */
  import(fileText: string, name?: string, fileName?: string): Wallet {
    const keypair = keypairFromSolanaCliJson(fileText, fileName);
    const existing = this.repo.findByAddress(keypair.address);
    if (existing) throw new Conflict(`Wallet ${keypair.address} is already imported as '${existing.name}'.`);
    return this.store(name ?? this.freeName(), keypair);
  }

  list(): Wallet[] {
    return this.repo.list().map(toWallet);
  }

  /** A wallet by name or address; without one, the default wallet (created on first use). */
  show(nameOrAddress?: string): Wallet {
    if (!nameOrAddress) return this.defaultWallet();
    const record = this.repo.findByName(nameOrAddress) ?? this.repo.findByAddress(nameOrAddress);
    if (!record) throw new NotFound(`No wallet named or addressed '${nameOrAddress}'.`);
    return toWallet(record);
  }

  defaultWallet(): Wallet {
    const record = this.repo.findDefault();
    return record ? toWallet(record) : this.create(DEFAULT_NAME);
  }

  /** The secret key of a wallet this studio holds, for signing inside the server process only. */
  secretKeyOf(address: string): Uint8Array {
    const record = this.repo.findByAddress(address);
    if (!record) throw new NotFound(`This studio does not hold the secret of wallet ${address}.`);
    if (!record.encrypted) return record.sealedSecret;
    if (!this.secrets.encrypts) {
      throw new Forbidden(
        `Wallet '${record.name}' is encrypted with the desktop app's OS keychain; sign with it in the KB Studio app.`,
      );
    }
    return this.secrets.open(record.sealedSecret);
  }

  private store(name: string, keypair: SolanaKeypair): Wallet {
    if (!NAME_PATTERN.test(name)) {
      throw new InvalidInput('name: use 1-64 letters, digits, spaces, dots, dashes or underscores.');
    }
    if (this.repo.findByName(name)) throw new Conflict(`A wallet named '${name}' already exists.`);
    const record: WalletRecord = {
      name,
      address: keypair.address,
      sealedSecret: this.secrets.seal(keypair.secretKey),
      encrypted: this.secrets.encrypts,
      isDefault: this.repo.findDefault() === undefined,
      createdAt: this.now().toISOString(),
    };
    this.repo.insert(record);
    return toWallet(record);
  }

  private freeName(): string {
    // `default` names the default wallet only: a later wallet so named read as the default one.
    if (!this.repo.findDefault() && !this.repo.findByName(DEFAULT_NAME)) return DEFAULT_NAME;
    for (let i = 2; ; i++) if (!this.repo.findByName(`wallet-${i}`)) return `wallet-${i}`;
  }
}

function toWallet(record: WalletRecord): Wallet {
  return {
    name: record.name,
    address: record.address,
    isDefault: record.isDefault,
    encryptedAtRest: record.encrypted,
    createdAt: record.createdAt,
  };
}
