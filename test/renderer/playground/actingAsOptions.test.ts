import { describe, expect, it } from 'vitest';
import { actingAsChoice, actingAsName } from '../../../src/renderer/src/features/playground/actingAsOptions';
import type { StudioCredential } from '../../../src/shared/credentials';
import type { TestBuyer } from '../../../src/shared/studio';

const creator = 'Cr3atorWa11etAddre55xxxxxxxxxxxxxxxxxxxxxx1';
const buyer1 = 'Buyer1Wa11etAddre55xxxxxxxxxxxxxxxxxxxxxxx2';
const testBuyer = 'TestBuyerWa11etAddre55xxxxxxxxxxxxxxxxxxxx3';
const outsider = 'OutsiderWa11etAddre55xxxxxxxxxxxxxxxxxxxxx4';
const expired = { status: 'expired', accessModel: 'subscription' } as StudioCredential;

// As GET /studio/listings/:id/buyers answers: every held wallet but the creator's by its name (a
// wallet made with `kbstudio wallet create --name buyer1` among them), and holders it does not hold.
const buyers: TestBuyer[] = [
  { wallet: buyer1, name: 'buyer1', credential: expired },
  { wallet: testBuyer, name: 'test-buyer-1', credential: null },
  { wallet: outsider, name: null, credential: expired },
];

describe('the playground’s "Acting as" field', () => {
  it('offers the creator and every wallet the studio holds, by name, with its credential', () => {
    const { data, value } = actingAsChoice(buyers, null, creator);
    expect(data).toEqual([
      { value: '', label: 'Creator (always allowed)' },
      { value: buyer1, label: 'buyer1 · expired' },
      { value: testBuyer, label: 'test-buyer-1 · no credential' },
    ]);
    expect(value).toBe('');
  });

  it('shows the wallet the address names (as=) by its name, not a blank field', () => {
    const choice = actingAsChoice(buyers, buyer1, creator);
    expect(choice.value).toBe(buyer1);
    expect(choice.data.find((o) => o.value === choice.value)?.label).toBe('buyer1 · expired');
    expect(actingAsName(buyers, buyer1)).toBe('buyer1');
  });

  it('shows a wallet it cannot offer by its address, and the creator’s own as the creator', () => {
    const loading = actingAsChoice(undefined, buyer1, creator);
    expect(loading.data.find((o) => o.value === loading.value)?.label).toMatch(/…/);
    const stranger = actingAsChoice(buyers, outsider, creator);
    expect(stranger.data.find((o) => o.value === outsider)?.label).toContain('not held by this studio');
    expect(actingAsChoice(buyers, creator, creator).value).toBe('');
    expect(actingAsName(buyers, null)).toBeNull();
  });
});
