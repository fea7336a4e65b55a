import { StudioApiError } from '../../lib/studioApi';

/**
 * A published listing's terms (access model, price, subscription days) are fixed while anyone holds
 * a credential under them: the server's 409 names the fields first, "accessModel, price: listing
 * 'lst_…' has 1 credential held…". The Edit listing dialog and Pricing both mark those fields.
 */
export const TERMS_FIXED_NOTE = 'Fixed while anyone holds access to this listing.';

/** Fields the server names first in a 409 refusing new terms: "accessModel, price: listing 'lst_…' has…". */
export function termsFixedFields(error: unknown): string[] {
  if (!(error instanceof StudioApiError) || error.status !== 409) return [];
  const match =
    /^((?:accessModel|price|subscriptionDays)(?:, (?:accessModel|price|subscriptionDays))*): /.exec(
      error.message,
    );
  return match?.[1] ? match[1].split(', ') : [];
}

/** The 409's sentence without the field names it starts with (the fields are marked red instead). */
export function withoutFieldNames(message: string): string {
  const rest = message.slice(message.indexOf(': ') + 2);
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}
