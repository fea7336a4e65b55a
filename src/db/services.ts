import { ApiKeyService } from '../core/keys/apiKeys';
import { ListingService } from '../core/marketplace/listings';
import { plainSecretBox, WalletService, type SecretBox } from '../core/wallets/wallets';
import { openDataDir, type Db, type OpenOptions } from './open';
import { SqliteApiKeyRepository } from './repositories/apiKeys';
import { SqliteListingRepository } from './repositories/listings';
import { SqliteSettingsRepository } from './repositories/settings';
import { SqliteWalletRepository } from './repositories/wallets';

/** Everything the server, the CLI and the Electron main process work with, over one database. */
export interface StudioServices {
  dataDir: string;
  db: Db;
  listings: ListingService;
  apiKeys: ApiKeyService;
  wallets: WalletService;
  settings: SqliteSettingsRepository;
  close(): void;
}

export interface ServicesOptions extends OpenOptions {
  secretBox?: SecretBox;
  now?: () => Date;
}

export function openServices(dataDir: string, options: ServicesOptions = {}): StudioServices {
  const db = openDataDir(dataDir, options);
  const now = options.now ?? (() => new Date());
  return {
    dataDir,
    db,
    listings: new ListingService(new SqliteListingRepository(db), now),
    apiKeys: new ApiKeyService(new SqliteApiKeyRepository(db), now),
    wallets: new WalletService(new SqliteWalletRepository(db), options.secretBox ?? plainSecretBox, now),
    settings: new SqliteSettingsRepository(db),
    close: () => db.close(),
  };
}
