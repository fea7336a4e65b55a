import { DomainError } from '../errors';
import { lamportsToSol } from '../money';

/** 403 `credential_not_found`: the caller holds no credential for the listing (spec §7). */
export class CredentialNotFound extends DomainError {
  constructor(readonly listingId: string) {
    super(
      'credential_not_found',
      `Access denied: you hold no credential for this listing ('${listingId}'). Purchase access to query it.`,
    );
  }
}

/** 403 `credential_expired`: a subscription whose period has ended. */
export class CredentialExpired extends DomainError {
  constructor(
    readonly listingId: string,
    readonly expiresAt: string | null,
  ) {
    super(
      'credential_expired',
      `Access denied: your subscription to listing '${listingId}' expired${expiresAt ? ` at ${expiresAt}` : ''}. Renew it to query again.`,
    );
  }
}

/** 403 `insufficient_balance`: a per-query balance below the price of one query. */
export class InsufficientBalance extends DomainError {
  constructor(
    readonly listingId: string,
    balanceLamports: number,
    priceLamports: number,
  ) {
    super(
      'insufficient_balance',
      `Access denied: your prepaid balance for listing '${listingId}' is ${lamportsToSol(balanceLamports)} SOL, below the price of one query (${lamportsToSol(priceLamports)} SOL). Top it up to query again.`,
    );
  }
}
