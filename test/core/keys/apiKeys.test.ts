import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_KEY_LABEL_MAX } from '../../../src/core/keys/apiKeys';
import { openServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

const dir = tempDir('kbs-api-keys-');
const services = openServices(join(dir.path, 'data'));
afterAll(() => {
  services.close();
  dir.remove();
});
const wallet = () => services.wallets.defaultWallet().address;

describe('ApiKeyService', () => {
  it(`refuses a label over ${API_KEY_LABEL_MAX} characters, as POST /studio/keys does`, () => {
    const before = services.apiKeys.list().length;
    expect(() => services.apiKeys.create(wallet(), 'x'.repeat(5000))).toThrow(
      'label: The label can be at most 100 characters (got 5000).',
    );
    expect(services.apiKeys.list()).toHaveLength(before);
  });

  it('stores a label trimmed; 100 characters are fine', () => {
    const { id } = services.apiKeys.create(wallet(), `  ${'y'.repeat(100)}  `);
    expect(services.apiKeys.list().find((k) => k.id === id)!.label).toBe('y'.repeat(100));
  });

  it('says whether a key was revoked before, and keeps its first revokedAt', () => {
    const { id } = services.apiKeys.create(wallet(), 'ci');
    const first = services.apiKeys.revokeOnce(id);
    expect(first.alreadyRevoked).toBe(false);
    expect(first.key.revokedAt).toEqual(expect.any(String));
    const again = services.apiKeys.revokeOnce(id);
    expect(again).toEqual({ key: first.key, alreadyRevoked: true });
    expect(services.apiKeys.revoke(id).revokedAt).toBe(first.key.revokedAt);
  });
});
