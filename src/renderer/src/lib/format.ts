import type { AccessModel, Listing } from '../../../shared/listings';

export const ACCESS_MODEL_LABELS: Record<AccessModel, string> = {
  one_time: 'One-time',
  subscription: 'Subscription',
  per_query: 'Per query',
};

/** SOL amounts keep every significant lamport digit (9 decimals) and drop trailing zeros. */
export function formatSol(amount: number, locale = 'en-US'): string {
  const digits = new Intl.NumberFormat(locale, { maximumFractionDigits: 9 }).format(amount);
  return `${digits} SOL`;
}

/** "1.5 SOL", "0.002 SOL / query", "2 SOL / 30 days": what a buyer pays, and for what. */
export function formatListingPrice(
  listing: Pick<Listing, 'price' | 'accessModel' | 'subscriptionDays'>,
  locale = 'en-US',
): string {
  const price = formatSol(listing.price, locale);
  switch (listing.accessModel) {
    case 'one_time':
      return price;
    case 'per_query':
      return `${price} / query`;
    case 'subscription': {
      const days = listing.subscriptionDays;
      if (!days) return `${price} / period`;
      return `${price} / ${days === 1 ? 'day' : `${days} days`}`;
    }
  }
}

export function formatDateTime(iso: string | null, locale?: string): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

export function formatCount(n: number, locale = 'en-US'): string {
  return new Intl.NumberFormat(locale).format(n);
}

/** "1 document", "3,004 documents": a count, formatted as `formatCount` does, with its noun. */
export function counted(n: number, one: string, many = `${one}s`, locale = 'en-US'): string {
  return `${formatCount(n, locale)} ${n === 1 ? one : many}`;
}

/** "7xKXtg2C…sgAsU": enough of a base58 address to recognise it. */
export function shortAddress(address: string, head = 4, tail = 4): string {
  return address.length <= head + tail + 1 ? address : `${address.slice(0, head)}…${address.slice(-tail)}`;
}
