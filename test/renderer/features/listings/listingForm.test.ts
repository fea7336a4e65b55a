import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EMBEDDING_MODEL,
  EMBEDDING_MODELS,
  embeddingModelError,
  embeddingModelOptions,
  EMPTY_LISTING_FORM,
  toCreateListingBody,
} from '../../../../src/renderer/src/features/listings/listingForm';
import { StudioApiError } from '../../../../src/renderer/src/lib/studioApi';

describe('toCreateListingBody', () => {
  it('builds the request body from the inputs, trimmed', () => {
    const result = toCreateListingBody({
      ...EMPTY_LISTING_FORM,
      title: '  EU case law  ',
      description: ' Rulings since 2010 ',
      domain: ' law ',
      tags: ['eu', ' courts ', ''],
      accessModel: 'one_time',
      price: 1.5,
    });
    expect(result).toEqual({
      body: {
        title: 'EU case law',
        description: 'Rulings since 2010',
        domain: 'law',
        tags: ['eu', 'courts'],
        accessModel: 'one_time',
        price: 1.5,
      },
    });
  });

  it('sends the period only for subscriptions', () => {
    expect(
      toCreateListingBody({
        ...EMPTY_LISTING_FORM,
        title: 'T',
        accessModel: 'subscription',
        price: 2,
        subscriptionDays: 30,
      }).body,
    ).toMatchObject({ accessModel: 'subscription', price: 2, subscriptionDays: 30 });
    expect(
      toCreateListingBody({
        ...EMPTY_LISTING_FORM,
        title: 'T',
        accessModel: 'per_query',
        price: '0.002',
        subscriptionDays: 30,
      }).body,
    ).toEqual({ title: 'T', description: '', domain: '', tags: [], accessModel: 'per_query', price: 0.002 });
  });

  it('names the inputs that are empty, and leaves every other rule to the server', () => {
    expect(
      toCreateListingBody({
        ...EMPTY_LISTING_FORM,
        title: ' ',
        accessModel: 'subscription',
        subscriptionDays: '',
      }),
    ).toEqual({
      errors: {
        title: 'Give the listing a title.',
        price: 'Enter a price in SOL (0 is allowed for one-time and subscription).',
        subscriptionDays: 'Enter the length of one subscription period in days.',
      },
    });
    // A free per-query listing is the server's to refuse: it is sent as typed.
    expect(
      toCreateListingBody({ ...EMPTY_LISTING_FORM, title: 'T', accessModel: 'per_query', price: 0 }).body
        ?.price,
    ).toBe(0);
  });
});

describe('the Embedding model field', () => {
  it('offers exactly the models the server supports, each with its dimensions', () => {
    // The spec's four hosted models and the offline default (test/e2e/studioForms.test.ts checks the
    // shown options against the server's own list, src/core/embed/models.ts).
    expect(Object.fromEntries(EMBEDDING_MODELS.map((m) => [m.id, m.dimensions]))).toEqual({
      'kbs-offline-hybrid-v1': 100,
      'text-embedding-3-large': 3072,
      'text-embedding-3-small': 1536,
      'embed-english-v3.0': 1024,
      'embed-multilingual-v3.0': 1024,
    });
    expect(DEFAULT_EMBEDDING_MODEL).toBe('kbs-offline-hybrid-v1');
    expect(embeddingModelOptions()).toContainEqual({
      value: 'text-embedding-3-large',
      label: 'text-embedding-3-large · 3072 dimensions · OpenAI',
    });
    expect(embeddingModelOptions().map((o) => o.value)).toEqual(EMBEDDING_MODELS.map((m) => m.id));
  });

  it('keeps a listing’s model that is no longer offered, so the field is never empty', () => {
    expect(embeddingModelOptions('legacy-model')[0]).toEqual({
      value: 'legacy-model',
      label: 'legacy-model · not supported',
    });
    expect(embeddingModelOptions('embed-english-v3.0')).toHaveLength(EMBEDDING_MODELS.length);
  });

  it('puts the server’s refusal of a model on the field', () => {
    const refused = new StudioApiError({
      code: 'unsupported_embedding_model',
      status: 400,
      message: "embedding_model: 'bogus-model' is not supported. Supported models: a, b.",
    });
    expect(embeddingModelError(refused)).toBe("'bogus-model' is not supported. Supported models: a, b.");
    const locked = new StudioApiError({
      code: 'invalid_request',
      status: 400,
      message: 'embeddingModel: this knowledge base already has embedded chunks; create a new listing.',
    });
    expect(embeddingModelError(locked)).toBe(
      'This knowledge base already has embedded chunks; create a new listing.',
    );
    expect(
      embeddingModelError(new StudioApiError({ code: 'network_error', status: 0, message: 'offline' })),
    ).toBeUndefined();
  });
});
