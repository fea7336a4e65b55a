import type { StudioCredential } from '../../../../shared/credentials';
import type { TestBuyerState } from '../../../../shared/studio';

export const STATE_LABELS: Record<TestBuyerState, string> = {
  active: 'Active',
  expired: 'Expired subscription',
  low_balance: 'Low balance (half a query)',
  zero_balance: 'Zero balance',
  revoked: 'Revoked',
};

/**
 * What /v1/retrieve answers a buyer holding this credential (null = none, e.g. revoked). A draft is
 * 404 to everyone but its creator, whatever they hold.
 */
export function expectedAnswer(
  credential: StudioCredential | null,
  draft = false,
): { status: string; code: string | null } {
  if (draft) return { status: '404', code: 'listing_not_found' };
  if (!credential) return { status: '403', code: 'credential_not_found' };
  switch (credential.status) {
    case 'active':
      return { status: '200', code: null };
    case 'expired':
      return { status: '403', code: 'credential_expired' };
    case 'low_balance':
      return { status: '403', code: 'insufficient_balance' };
  }
}

export const STATUS_BADGES: Record<string, { label: string; color: string }> = {
  active: { label: 'Active', color: 'teal' },
  expired: { label: 'Expired', color: 'orange' },
  low_balance: { label: 'Low balance', color: 'yellow' },
  none: { label: 'No credential', color: 'gray' },
};

/** The playground, acting as a buyer on a listing (read back by the playground from the hash). */
export const playgroundHrefAs = (listingId: string, wallet: string): string =>
  `#/playground?listing=${encodeURIComponent(listingId)}&as=${encodeURIComponent(wallet)}`;
