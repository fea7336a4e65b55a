import { describe, expect, it } from 'vitest';
import {
  EMPTY_LISTING_FORM,
  toCreateListingBody,
} from '../../../../src/renderer/src/features/listings/listingForm';

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
