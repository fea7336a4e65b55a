import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  sha256Hex,
  walletAuthMessage,
  walletAuthorization,
  WalletSignatureAuth,
} from '../../../src/core/auth/walletSignature';
import { generateKeypair } from '../../../src/core/wallets/keypair';
import { openDataDir } from '../../../src/db/open';
import { SqliteUsedSignatureRepository } from '../../../src/db/repositories/signatures';
import { tempDir } from '../../helpers/studio';

const dir = tempDir('kbs-wallet-auth-');
const db = openDataDir(dir.path);
afterEach(() => db.prepare('DELETE FROM used_signatures').run());
afterAll(() => {
  db.close();
  dir.remove();
});
const wallet = generateKeypair();
const T0 = Date.parse('2030-01-01T00:00:00Z');

/** The credentials part of an Authorization header: what follows "Wallet ". */
const credentialsOf = (header: string) => header.slice('Wallet '.length);

describe('wallet-signature messages', () => {
  it('are kbs-auth:v1:<METHOD>:<path with query>:<timestampMs>:<sha256 hex of body>', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(
      walletAuthMessage({ method: 'get', pathWithQuery: '/v1/credentials?status=active' }, 1700000000000),
    ).toBe(
      'kbs-auth:v1:GET:/v1/credentials?status=active:1700000000000:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    const body = Buffer.from('{"query":"é"}', 'utf8');
    expect(walletAuthMessage({ method: 'POST', pathWithQuery: '/v1/retrieve', body }, 1)).toBe(
      `kbs-auth:v1:POST:/v1/retrieve:1:${sha256Hex(body)}`,
    );
  });
});

describe('WalletSignatureAuth', () => {
  it('accepts a signature once, forgets it once its window has passed, and prunes the table', () => {
    let now = T0;
    const auth = new WalletSignatureAuth(new SqliteUsedSignatureRepository(db), () => new Date(now));
    const request = { method: 'GET', pathWithQuery: '/v1/credentials' };
    const first = credentialsOf(walletAuthorization(wallet, request, T0));
    expect(auth.authenticate(first, request)).toBe(wallet.address);
    expect(() => auth.authenticate(first, request)).toThrow(/already used/);
    expect(db.prepare('SELECT count(*) FROM used_signatures').pluck().get()).toBe(1);

    now = T0 + 6 * 60_000;
    expect(() => auth.authenticate(first, request)).toThrow(/expired/);
    const later = credentialsOf(walletAuthorization(wallet, request, now));
    expect(auth.authenticate(later, request)).toBe(wallet.address);
    // The first signature's row expired with its timestamp and was swept out.
    expect(db.prepare('SELECT count(*) FROM used_signatures').pluck().get()).toBe(1);
  });
});
