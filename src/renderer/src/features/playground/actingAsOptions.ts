import type { TestBuyer } from '../../../../shared/studio';
import { shortAddress } from '../../lib/format';

export interface ActingAsChoice {
  /** The Select's options: the creator (value ''), then each buyer wallet the studio holds. */
  data: { value: string; label: string }[];
  /** The option shown: never blank while the address names a wallet. */
  value: string;
}

export const CREATOR_OPTION = { value: '', label: 'Creator (always allowed)' } as const;

/**
 * The "Acting as" field: the creator, and every wallet the studio holds that the buyers list names
 * (any held wallet but the creator's, not only `test-buyer-*`), each with its credential. A wallet
 * the address names (`as=`) that is not among them (the list still loading, or a wallet the studio
 * does not hold) is shown by its address rather than leaving the field blank; the creator's own
 * wallet is the creator.
 */
export function actingAsChoice(
  buyers: readonly TestBuyer[] | undefined,
  actingAs: string | null,
  creatorWallet: string | undefined,
): ActingAsChoice {
  const held = (buyers ?? []).filter((b) => b.name !== null && b.wallet !== creatorWallet);
  const data: { value: string; label: string }[] = [
    CREATOR_OPTION,
    ...held.map((b) => ({ value: b.wallet, label: `${b.name} · ${credentialLabel(b)}` })),
  ];
  if (!actingAs || actingAs === creatorWallet) return { data, value: '' };
  if (!held.some((b) => b.wallet === actingAs)) {
    const why = buyers === undefined ? 'loading…' : 'not held by this studio';
    data.push({ value: actingAs, label: `${shortAddress(actingAs)} · ${why}` });
  }
  return { data, value: actingAs };
}

/** The name the result area gives the buyer acted as: its wallet's name, else its address. */
export function actingAsName(
  buyers: readonly TestBuyer[] | undefined,
  actingAs: string | null,
): string | null {
  if (!actingAs) return null;
  return buyers?.find((b) => b.wallet === actingAs)?.name ?? actingAs;
}

const credentialLabel = (buyer: TestBuyer): string =>
  buyer.credential ? buyer.credential.status.replace('_', ' ') : 'no credential';
