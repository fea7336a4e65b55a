import { describe, expect, it } from 'vitest';
import type { StudioCredential } from '../../../src/shared/credentials';
import { testBuyerStatesFor } from '../../../src/shared/studio';
import { expectedAnswer, playgroundHrefAs } from '../../../src/renderer/src/features/buyers/buyerStates';
import { playgroundHashParams } from '../../../src/renderer/src/features/playground/actingAs';

const credential = (status: StudioCredential['status']): StudioCredential => ({
  listingId: 'lst_1',
  listingTitle: 'KB',
  holderWallet: 'w',
  accessModel: 'subscription',
  status,
  expiresAt: null,
  balance: null,
  pdaAddress: null,
  createdAt: '',
  updatedAt: '',
  testGrant: true,
});

describe('test buyer states', () => {
  it('offers the states of each access model', () => {
    expect(testBuyerStatesFor('one_time')).toEqual(['active', 'revoked']);
    expect(testBuyerStatesFor('subscription')).toEqual(['active', 'expired', 'revoked']);
    expect(testBuyerStatesFor('per_query')).toEqual(['active', 'low_balance', 'zero_balance', 'revoked']);
  });

  it('tells what /v1/retrieve answers each credential', () => {
    expect(expectedAnswer(credential('active'))).toEqual({ status: '200', code: null });
    expect(expectedAnswer(credential('expired'))).toEqual({ status: '403', code: 'credential_expired' });
    expect(expectedAnswer(credential('low_balance'))).toEqual({
      status: '403',
      code: 'insufficient_balance',
    });
    expect(expectedAnswer(null)).toEqual({ status: '403', code: 'credential_not_found' });
  });

  it('opens the playground as the buyer through the hash, which the playground reads back', () => {
    const href = playgroundHrefAs('lst_abc', '9xQe WvG');
    expect(href).toBe('#/playground?listing=lst_abc&as=9xQe%20WvG');
    expect(playgroundHashParams(href)).toEqual({ listing: 'lst_abc', as: '9xQe WvG' });
    expect(playgroundHashParams('#/playground')).toEqual({ listing: null, as: null });
  });
});
