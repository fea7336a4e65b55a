import type { Ledger, SignedInstruction, SignedListingTransaction } from './ledger';

/**
 * The ledger the settings name right now: choosing another network in the studio takes effect on
 * the next call, without a restart. `pick` is cheap (it reads settings and reuses its clients).
 */
export class SwitchingLedger implements Ledger {
  constructor(private readonly pick: () => Ledger) {}

  get kind(): Ledger['kind'] {
    return this.pick().kind;
  }
  createListing(signed: SignedInstruction<'create_listing'>) {
    return this.pick().createListing(signed);
  }
  purchaseAccess(signed: SignedInstruction<'purchase_access'>) {
    return this.pick().purchaseAccess(signed);
  }
  verifyAccess(listingId: string, holder: string) {
    return this.pick().verifyAccess(listingId, holder);
  }
  revokeAccess(signed: SignedInstruction<'revoke_access'>) {
    return this.pick().revokeAccess(signed);
  }
  withdrawEarnings(signed: SignedInstruction<'withdraw_earnings'>) {
    return this.pick().withdrawEarnings(signed);
  }
  earnings(listingId: string) {
    return this.pick().earnings(listingId);
  }
  recentBlockhash() {
    return this.pick().recentBlockhash();
  }
  createListingTransaction(signed: SignedListingTransaction) {
    return this.pick().createListingTransaction(signed);
  }
  walletFlows(address: string) {
    return this.pick().walletFlows(address);
  }
  published(listingId: string) {
    return this.pick().published(listingId);
  }
}
