import { z } from 'zod';
import { PageQuerySchema } from './pagination';
import { queryDecimal } from './queryNumbers';
import { unknownFieldsError } from './unknownFields';

export const ACCESS_MODELS = ['one_time', 'subscription', 'per_query'] as const;
export const AccessModelSchema = z.enum(ACCESS_MODELS).meta({ id: 'AccessModel' });
export type AccessModel = z.infer<typeof AccessModelSchema>;

export const LISTING_SORTS = ['relevance', 'rating', 'price_asc', 'price_desc', 'newest'] as const;
export const ListingStatusSchema = z.enum(['draft', 'published']);
export type ListingStatus = z.infer<typeof ListingStatusSchema>;

export const DEFAULT_RETRIEVAL_RATE_LIMIT = 60;

/**
 * A listing id as a /v1 request names it (path, body, upload config). No length cap: an id that names
 * no listing is 404 `listing_not_found` however long (spec §7), not a 400. The request's own limits
 * bound it (16 KB of request line and headers, 1 MB of JSON body, 64 KB of upload config).
 */
export const ListingIdSchema = z.string().min(1);

export const ListingSchema = z
  .object({
    id: z.string().meta({ example: 'lst_4fQx9KpZ2mTa7bWc' }),
    title: z.string(),
    description: z.string(),
    domain: z.string(),
    tags: z.array(z.string()),
    accessModel: AccessModelSchema,
    price: z.number().meta({
      description:
        'Price in SOL. For `per_query` the price of one query; for `subscription` the price of one period.',
    }),
    subscriptionDays: z.number().int().nullable().meta({ description: 'Period length; subscription only.' }),
    rating: z.number().meta({ description: 'Average rating, 0..5.' }),
    ratingCount: z.number().int(),
    creatorWallet: z.string(),
    status: ListingStatusSchema,
    retrievalRateLimit: z.number().int().meta({ description: 'Retrievals per minute per credential.' }),
    retrievalDenseWeight: z.number().nullable().meta({
      description:
        'Weight of the dense (embedding) part in hybrid retrieval, 0..1; null = the measured default (0.3).',
    }),
    embeddingModel: z.string(),
    dimensions: z.number().int(),
    documentCount: z.number().int().meta({
      description:
        'Documents of the knowledge base: one per file, and one per top-level item of a JSON array.',
    }),
    chunkCount: z.number().int(),
    pdaAddress: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Listing' });

export type Listing = z.infer<typeof ListingSchema>;

const optionalNumber = (description: string) => queryDecimal().optional().meta({ description });

export const ListingSearchQuerySchema = PageQuerySchema.extend({
  q: z
    .string()
    .trim()
    .max(500)
    .optional()
    .meta({ description: 'Full-text query over title, description, domain and tags.' }),
  domain: z.string().max(200).optional().meta({ description: 'Exact domain (case-insensitive).' }),
  accessModel: AccessModelSchema.optional(),
  maxPrice: optionalNumber('Maximum price in SOL (inclusive).').pipe(z.number().min(0).optional()),
  minRating: optionalNumber('Minimum average rating (inclusive), 0..5.').pipe(
    z.number().min(0).max(5).optional(),
  ),
  sort: z
    .enum(LISTING_SORTS)
    .optional()
    .meta({ description: 'Default `relevance` when `q` is given, else `newest`.' }),
});
export type ListingSearchQuery = z.infer<typeof ListingSearchQuerySchema>;

/** The most SOL a price (and a test buyer's balance or deposit) may be: lamports stay exact integers. */
export const MAX_SOL_AMOUNT = 1_000_000;

/*
 * Each field's checks, said in plain words. New listing, Edit and Pricing show the server's messages
 * as sent, so all three (and the API, after the field's name) read the same for the same mistake.
 */
const title = z
  .string()
  .trim()
  .min(1, 'Give the listing a title.')
  .max(200, 'The title can be at most 200 characters.');
const description = z.string().max(10_000, 'The description can be at most 10,000 characters.');
const domain = z.string().trim().max(100, 'The domain can be at most 100 characters.');
const tags = z
  .array(z.string().trim().min(1, 'A tag cannot be empty.').max(50, 'A tag can be at most 50 characters.'))
  .max(20, 'At most 20 tags.');
/**
 * A number field's checks. `typeError` is what the Pricing form says of a value that is no number; the
 * API and the CLI keep zod's own wording there, which the CLI turns into a flag's ("expected a number").
 */
const numberOf = (typeError?: string) => z.number(typeError === undefined ? undefined : { error: typeError });
/** Whether an amount of SOL is a whole number of lamports (at most 9 decimals). */
export const isWholeLamports = (sol: number): boolean => Number(sol.toFixed(9)) === sol;
export const WHOLE_LAMPORTS_MESSAGE = 'Use at most 9 decimals: 1 lamport is 0.000000001 SOL.';
/**
 * Any amount of SOL the studio moves or charges (a price, an airdrop): whole lamports only, so
 * nothing is rounded without a word (1e-10 SOL used to be saved as 0).
 */
export const solAmountOf = (typeError?: string) =>
  numberOf(typeError).refine(isWholeLamports, { error: WHOLE_LAMPORTS_MESSAGE });
/** A price in SOL. */
const priceOf = (typeError?: string) =>
  numberOf(typeError)
    .min(0, 'The price cannot be negative.')
    .max(MAX_SOL_AMOUNT, 'The price can be at most 1,000,000 SOL.')
    .refine(isWholeLamports, { error: WHOLE_LAMPORTS_MESSAGE });
const subscriptionDaysOf = (typeError?: string) =>
  numberOf(typeError)
    .int('The period is a whole number of days.')
    .min(1, 'A period lasts at least 1 day.')
    .max(3650, 'A period lasts at most 3650 days (10 years).');
const retrievalRateLimitOf = (typeError?: string) =>
  numberOf(typeError)
    .int('The rate limit is a whole number of retrievals per minute.')
    .min(1, 'Allow at least 1 retrieval per minute.')
    .max(100_000, 'The rate limit can be at most 100,000 retrievals per minute.');
const price = priceOf();
const subscriptionDays = subscriptionDaysOf();
const retrievalRateLimit = retrievalRateLimitOf();
const retrievalDenseWeight = z.number().min(0, 'The weight is 0 to 1.').max(1, 'The weight is 0 to 1.');

/**
 * A field the listing has no such thing as (`dimensions`, a misspelt `prize`) is refused naming it and
 * the fields there are: dropped without a word, the request answered 200 as if it had been applied.
 */
const unknownListingFields = (known: readonly string[]) => unknownFieldsError(known);

const createListingFields = {
  title,
  description: description.default(''),
  domain: domain.default(''),
  tags: tags.default([]),
  accessModel: AccessModelSchema,
  price,
  subscriptionDays: subscriptionDays.optional(),
  retrievalRateLimit: retrievalRateLimit.default(DEFAULT_RETRIEVAL_RATE_LIMIT),
  retrievalDenseWeight: retrievalDenseWeight.nullable().optional(),
  embeddingModel: z.string().min(1).optional(),
  creatorWallet: z.string().optional(),
};
export const CreateListingSchema = z
  .strictObject(createListingFields, { error: unknownListingFields(Object.keys(createListingFields)) })
  .meta({ id: 'CreateListing' });
export type CreateListingInput = z.input<typeof CreateListingSchema>;

const updateListingFields = {
  title: title.optional(),
  description: description.optional(),
  domain: domain.optional(),
  tags: tags.optional(),
  accessModel: AccessModelSchema.optional(),
  price: price.optional(),
  subscriptionDays: subscriptionDays.nullable().optional(),
  retrievalRateLimit: retrievalRateLimit.optional(),
  retrievalDenseWeight: retrievalDenseWeight.nullable().optional(),
  embeddingModel: z.string().min(1).optional(),
};
export const UpdateListingSchema = z
  .strictObject(updateListingFields, { error: unknownListingFields(Object.keys(updateListingFields)) })
  .meta({ id: 'UpdateListing' });
export type UpdateListingInput = z.input<typeof UpdateListingSchema>;

export const LAMPORTS_PER_SOL = 1_000_000_000;

/** SOL to lamports for display and validation (the server stores prices as integer lamports). */
export const priceInLamports = (sol: number): number => Math.round(sol * LAMPORTS_PER_SOL);

/**
 * The Pricing view's fields. The form validates with this schema and `PUT /studio/listings/:id/pricing`
 * validates with it again, so both show the same message for the same field.
 */
export const PricingSchema = z
  .object({
    accessModel: AccessModelSchema,
    price: priceOf('Enter a price in SOL.'),
    subscriptionDays: subscriptionDaysOf('Enter the period length in days.').nullable(),
    retrievalRateLimit: retrievalRateLimitOf('Enter how many retrievals a buyer may make per minute.'),
    domain,
    tags,
  })
  .superRefine((value, ctx) => {
    if (value.accessModel === 'subscription' && value.subscriptionDays === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['subscriptionDays'],
        message: 'A subscription needs its period length in days.',
      });
    }
    if (value.accessModel !== 'subscription' && value.subscriptionDays !== null) {
      ctx.addIssue({
        code: 'custom',
        path: ['subscriptionDays'],
        message: `Only subscriptions have a period; leave it empty for ${value.accessModel}.`,
      });
    }
    if (value.accessModel === 'per_query' && value.price <= 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['price'],
        message: 'A per-query listing needs a price above 0 SOL per query.',
      });
    }
  })
  .meta({ id: 'Pricing' });
export type PricingInput = z.infer<typeof PricingSchema>;
