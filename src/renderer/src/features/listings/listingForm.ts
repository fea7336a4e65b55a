import type { AccessModel, Listing, UpdateListingInput } from '../../../../shared/listings';
import { EMBEDDING_MODEL_LIST, OFFLINE_MODEL } from '../../../../shared/embeddingModels';
import { parseSolAmount } from '../../components/solAmount';
import type { CreateListingBody } from '../../lib/studioApi';

/** The New listing form as the inputs hold it (Mantine's NumberInput gives '' when empty). */
export interface ListingFormValues {
  title: string;
  description: string;
  domain: string;
  tags: string[];
  accessModel: AccessModel;
  price: number | string;
  subscriptionDays: number | string;
}

export const EMPTY_LISTING_FORM: ListingFormValues = {
  title: '',
  description: '',
  domain: '',
  tags: [],
  accessModel: 'one_time',
  price: '',
  subscriptionDays: 30,
};

export const ACCESS_MODEL_HELP: Record<AccessModel, string> = {
  one_time: 'Buyers pay once and keep access until you revoke it.',
  subscription: 'Buyers pay once per period; access ends when the period does unless they renew.',
  per_query: 'Buyers prepay a balance; each retrieval costs the price of one query.',
};

export const PRICE_LABELS: Record<AccessModel, string> = {
  one_time: 'Price',
  subscription: 'Price per period',
  per_query: 'Price per query',
};

export type ListingFormResult =
  { body: CreateListingBody; errors?: undefined } | { body?: undefined; errors: Record<string, string> };

const asNumber = (value: number | string): number | undefined => {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const trimmed = value.trim();
  return trimmed === '' || Number.isNaN(Number(trimmed)) ? undefined : Number(trimmed);
};

/**
 * The request body for POST /studio/listings. Only what the inputs cannot express is checked here
 * (a missing title or number); every other rule is the server's, and its messages are shown as sent.
 */
export function toCreateListingBody(values: ListingFormValues): ListingFormResult {
  const errors: Record<string, string> = {};
  const title = values.title.trim();
  if (!title) errors.title = 'Give the listing a title.';
  const price = parseSolAmount(values.price);
  if (price === undefined)
    errors.price = 'Enter a price in SOL (0 is allowed for one-time and subscription).';
  const days = values.accessModel === 'subscription' ? asNumber(values.subscriptionDays) : undefined;
  if (values.accessModel === 'subscription' && days === undefined) {
    errors.subscriptionDays = 'Enter the length of one subscription period in days.';
  }
  if (Object.keys(errors).length > 0 || price === undefined) return { errors };
  const body: CreateListingBody = {
    title,
    description: values.description.trim(),
    domain: values.domain.trim(),
    tags: values.tags.map((t) => t.trim()).filter(Boolean),
    accessModel: values.accessModel,
    price,
  };
  if (days !== undefined) body.subscriptionDays = days;
  return { body };
}

/** The form prefilled from an existing listing, for editing it. */
export function toListingFormValues(listing: Listing): ListingFormValues {
  return {
    title: listing.title,
    description: listing.description,
    domain: listing.domain,
    tags: listing.tags,
    accessModel: listing.accessModel,
    price: listing.price,
    subscriptionDays: listing.subscriptionDays ?? EMPTY_LISTING_FORM.subscriptionDays,
  };
}

/** The PATCH body: only what differs from the listing as loaded (empty = nothing to save). */
export function changedFields(listing: Listing, body: CreateListingBody): UpdateListingInput {
  const patch: UpdateListingInput = {};
  if (body.title !== listing.title) patch.title = body.title;
  if (body.description !== listing.description) patch.description = body.description;
  if (body.domain !== listing.domain) patch.domain = body.domain;
  if (JSON.stringify(body.tags) !== JSON.stringify(listing.tags)) patch.tags = body.tags;
  if (body.accessModel !== listing.accessModel) patch.accessModel = body.accessModel;
  if (body.price !== listing.price) patch.price = body.price;
  if (body.subscriptionDays !== undefined && body.subscriptionDays !== listing.subscriptionDays) {
    patch.subscriptionDays = body.subscriptionDays;
  }
  return patch;
}

/** The embedding models a knowledge base may declare, with their dimensions: the server's list. */
export const EMBEDDING_MODELS = EMBEDDING_MODEL_LIST;

/** A new listing's model unless another is chosen: the server's default, the offline model. */
export const DEFAULT_EMBEDDING_MODEL: string = OFFLINE_MODEL.id;

/**
 * The options of the Embedding model select: every supported model with its dimensions, and the
 * listing's own model first if it is not one of them (stored before, or set from the CLI), so the
 * field never shows empty.
 */
export function embeddingModelOptions(current?: string): { value: string; label: string }[] {
  const options = EMBEDDING_MODELS.map((m) => ({
    value: m.id as string,
    label: `${m.id} · ${m.dimensions} dimensions · ${m.provider}`,
  }));
  if (current && !options.some((o) => o.value === current)) {
    options.unshift({ value: current, label: `${current} · not supported` });
  }
  return options;
}

/**
 * The server's refusal of a model, for the Embedding model field: `unsupported_embedding_model`
 * ("embedding_model: 'x' is not supported…") or a validation failure on `embeddingModel`.
 */
export function embeddingModelError(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const match = /^(?:embedding_model|embeddingModel): (.+)$/s.exec(error.message);
  if (match?.[1]) return match[1].charAt(0).toUpperCase() + match[1].slice(1);
  return code === 'unsupported_embedding_model' ? error.message : undefined;
}
