import { describe, expect, it } from 'vitest';
import {
  plainSecretBox,
  WalletService,
  type SecretBox,
  type WalletRecord,
  type WalletRepository,
} from '../../../src/core/wallets/wallets';
import { openServices } from '../../../src/db/services';
import { SqliteWalletRepository } from '../../../src/db/repositories/wallets';
import { tempDir } from '../../helpers/studio';

/** A reversible box standing in for Electron's safeStorage, which only exists inside Electron. */
const xorBox: SecretBox = {
  encrypts: true,
  seal: (plain) => plain.map((b) => b ^ 0x5a),
  open: (sealed) => sealed.map((b) => b ^ 0x5a),
};

function withRepo(run: (repo: WalletRepository) => void) {
  const dir = tempDir();
  const services = openServices(dir.path);
  try {
    run(new SqliteWalletRepository(services.db));
  } finally {
    services.close();
    dir.remove();
  }
}

describe('wallet secrets across the CLI and the app', () => {
  it('are stored sealed when the box encrypts, and read back by the same box', () =>
    withRepo((repo) => {
      const app = new WalletService(repo, xorBox);
      const w = app.create('app');
      const stored = repo.findByName('app') as WalletRecord;
      expect(stored.encrypted).toBe(true);
      const secret = app.secretKeyOf(w.address);
      expect(Buffer.from(stored.sealedSecret).equals(Buffer.from(secret))).toBe(false);
      expect(secret).toHaveLength(64);
    }));

  it('a CLI wallet (unencrypted) opens in the app as it is', () =>
    withRepo((repo) => {
      const cli = new WalletService(repo, plainSecretBox);
      const w = cli.create('cli');
      const app = new WalletService(repo, xorBox);
      expect(Buffer.from(app.secretKeyOf(w.address)).equals(Buffer.from(cli.secretKeyOf(w.address)))).toBe(
        true,
      );
    }));

  it('an app-encrypted wallet is refused clearly by the CLI instead of returning ciphertext', () =>
    withRepo((repo) => {
      const w = new WalletService(repo, xorBox).create('app');
      expect(() => new WalletService(repo, plainSecretBox).secretKeyOf(w.address)).toThrow(/OS keychain/);
    }));
});
