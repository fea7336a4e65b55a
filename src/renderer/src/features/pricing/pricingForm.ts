import {
  isWholeLamports,
  LAMPORTS_PER_SOL,
  MAX_SOL_AMOUNT,
  PricingSchema,
  priceInLamports,
  type AccessModel,
  type Listing,
  type PricingInput,
} from '../../../../shared/listings';
import { parseSolAmount } from '../../components/solAmount';

/** The Pricing form as its inputs hold it (NumberInput gives '' when empty). */
export interface PricingFormValues {
  accessModel: AccessModel;
  price: number | string;
  subscriptionDays: number | string;
  retrievalRateLimit: number | string;
  domain: string;
  tags: string[];
}

export const DEFAULT_SUBSCRIPTION_DAYS = 30;

export function pricingValuesOf(listing: Listing): PricingFormValues {
  return {
    accessModel: listing.accessModel,
    price: listing.price,
    subscriptionDays: listing.subscriptionDays ?? DEFAULT_SUBSCRIPTION_DAYS,
    retrievalRateLimit: listing.retrievalRateLimit,
    domain: listing.domain,
    tags: listing.tags,
  };
}

const numberOf = (value: number | string): number | undefined => {
  if (typeof value === 'number') return value;
  const trimmed = value.trim();
  return trimmed === '' || Number.isNaN(Number(trimmed)) ? undefined : Number(trimmed);
};

export type PricingResult =
  | { pricing: PricingInput; errors: Record<string, never> }
  | { pricing?: undefined; errors: Record<string, string> };

/**
 * Validates with the schema `PUT /studio/listings/:id/pricing` uses, so the form shows the server's
 * own messages, one per field, before anything is sent.
 */
export function parsePricing(values: PricingFormValues): PricingResult {
  const parsed = PricingSchema.safeParse({
    accessModel: values.accessModel,
    price: parseSolAmount(values.price),
    subscriptionDays: values.accessModel === 'subscription' ? numberOf(values.subscriptionDays) : null,
    retrievalRateLimit: numberOf(values.retrievalRateLimit),
    domain: values.domain,
    tags: values.tags,
  });
  if (parsed.success) return { pricing: parsed.data, errors: {} };
  const errors: Record<string, string> = {};
  for (const issue of parsed.error.issues) {
    const field = String(issue.path[0] ?? 'form');
    if (!(field in errors)) errors[field] = issue.message;
  }
  return { errors };
}

/**
 * "= 250,000,000 lamports" (or "= 1 lamport") under the price, updated as the user types. A price the
 * form refuses (`error`: 0 for a per-query listing) or the rules refuse (negative, over the maximum,
 * finer than a lamport) gets no echo: an amount next to its error would read as what is charged. The
 * conversion is shown instead.
 */
export function lamportsLabel(price: number | string, error?: string, locale = 'en-US'): string {
  const sol = parseSolAmount(price);
  if (error || sol === undefined || sol < 0 || sol > MAX_SOL_AMOUNT || !isWholeLamports(sol)) {
    return `1 SOL = ${LAMPORTS_PER_SOL.toLocaleString(locale)} lamports`;
  }
  const lamports = priceInLamports(sol);
  return `= ${lamports.toLocaleString(locale)} ${lamports === 1 ? 'lamport' : 'lamports'}`;
}

/**
 * The `GET /v1/listings/:id` body with the form's values applied as the server would store them
 * (trimmed domain, lower-case unique tags): what buyers will see once the changes are saved.
 * Undefined while the form holds an error: the saved terms are not the new ones, so never shown as them.
 */
export function previewOf(listing: Listing, pricing: PricingInput | undefined): Listing | undefined {
  return pricing ? withPricing(listing, pricing) : undefined;
}

function withPricing(listing: Listing, pricing: PricingInput): Listing {
  return {
    ...listing,
    accessModel: pricing.accessModel,
    price: priceInLamports(pricing.price) / LAMPORTS_PER_SOL,
    subscriptionDays: pricing.accessModel === 'subscription' ? pricing.subscriptionDays : null,
    retrievalRateLimit: pricing.retrievalRateLimit,
    domain: pricing.domain.trim(),
    tags: [...new Set(pricing.tags.map((t) => t.trim().toLowerCase()))],
  };
}

/**
 * Whether the form holds other terms than the saved listing: the access model, the price or the
 * period, which are fixed while anyone holds a credential under them. A value the form refuses counts
 * as other (it is not the saved one); the rate limit, domain and tags never do.
 */
export function termsChanged(listing: Listing, values: PricingFormValues): boolean {
  if (values.accessModel !== listing.accessModel) return true;
  const price = parseSolAmount(values.price);
  if (price === undefined || priceInLamports(price) !== priceInLamports(listing.price)) return true;
  return (
    values.accessModel === 'subscription' && numberOf(values.subscriptionDays) !== listing.subscriptionDays
  );
}

/** Whether the form holds anything the saved listing does not. */
export function pricingChanged(listing: Listing, pricing: PricingInput | undefined): boolean {
  if (!pricing) return true;
  const next = withPricing(listing, pricing);
  return (
    next.accessModel !== listing.accessModel ||
    next.price !== listing.price ||
    next.subscriptionDays !== listing.subscriptionDays ||
    next.retrievalRateLimit !== listing.retrievalRateLimit ||
    next.domain !== listing.domain ||
    JSON.stringify(next.tags) !== JSON.stringify(listing.tags)
  );
}

const FIELD_LABELS: Record<string, string> = {
  accessModel: 'Access model',
  price: 'Price',
  subscriptionDays: 'Period',
  retrievalRateLimit: 'Retrieval rate limit',
  domain: 'Domain',
  tags: 'Tags',
};

/**
 * The fields in error, named as their labels, for the preview that stands in for the terms: "Price,
 * Retrieval rate limit". Their messages stay under the fields, said once.
 */
export function pricingErrorFields(errors: Record<string, string>): string[] {
  return Object.keys(errors).map((field) => FIELD_LABELS[field] ?? field);
}
