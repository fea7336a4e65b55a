import { describe, expect, it } from 'vitest';
import type { Listing } from '../../../src/shared/listings';
import {
  lamportsLabel,
  parsePricing,
  previewOf,
  pricingChanged,
  pricingErrorFields,
  pricingValuesOf,
  termsChanged,
  type PricingFormValues,
} from '../../../src/renderer/src/features/pricing/pricingForm';

const listing: Listing = {
  id: 'lst_abc',
  title: 'Case law digest',
  description: 'EU case law',
  domain: 'law',
  tags: ['eu'],
  accessModel: 'one_time',
  price: 1,
  subscriptionDays: null,
  rating: 0,
  ratingCount: 0,
  creatorWallet: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
  status: 'draft',
  retrievalRateLimit: 60,
  retrievalDenseWeight: null,
  embeddingModel: 'kbs-offline-hybrid-v1',
  dimensions: 256,
  documentCount: 2,
  chunkCount: 10,
  pdaAddress: null,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:00:00.000Z',
};

const values = (patch: Partial<PricingFormValues>): PricingFormValues => ({
  ...pricingValuesOf(listing),
  ...patch,
});

describe('the Pricing form', () => {
  it('turns the inputs into the body PUT /studio/listings/:id/pricing takes', () => {
    const result = parsePricing(
      values({ accessModel: 'subscription', price: '0.25', subscriptionDays: 30, tags: ['EU', ' courts '] }),
    );
    expect(result.errors).toEqual({});
    expect(result.pricing).toEqual({
      accessModel: 'subscription',
      price: 0.25,
      subscriptionDays: 30,
      retrievalRateLimit: 60,
      domain: 'law',
      tags: ['EU', 'courts'],
    });
    // A period is only sent for subscriptions, whatever the hidden input still holds.
    expect(
      parsePricing(values({ accessModel: 'per_query', price: 0.001 })).pricing?.subscriptionDays,
    ).toBeNull();
  });

  it('gives one clear message per field, the server’s own', () => {
    expect(parsePricing(values({ price: '' })).errors).toEqual({ price: 'Enter a price in SOL.' });
    expect(parsePricing(values({ accessModel: 'per_query', price: 0 })).errors).toEqual({
      price: 'A per-query listing needs a price above 0 SOL per query.',
    });
    expect(parsePricing(values({ price: 0.0000000001 })).errors.price).toBe(
      'Use at most 9 decimals: 1 lamport is 0.000000001 SOL.',
    );
    expect(parsePricing(values({ accessModel: 'subscription', subscriptionDays: '' })).errors).toEqual({
      subscriptionDays: 'Enter the period length in days.',
    });
    expect(parsePricing(values({ accessModel: 'subscription', subscriptionDays: 1.5 })).errors).toEqual({
      subscriptionDays: 'The period is a whole number of days.',
    });
    expect(parsePricing(values({ retrievalRateLimit: 0 })).errors).toEqual({
      retrievalRateLimit: 'Allow at least 1 retrieval per minute.',
    });
    expect(parsePricing(values({ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) })).errors).toEqual({
      tags: 'At most 20 tags.',
    });
  });

  it('shows the lamport amount of the price as it is typed', () => {
    expect(lamportsLabel(0.25)).toBe('= 250,000,000 lamports');
    expect(lamportsLabel('1.000000001')).toBe('= 1,000,000,001 lamports');
    expect(lamportsLabel('')).toBe('1 SOL = 1,000,000,000 lamports');
  });

  it('echoes no lamport amount for a price the rules refuse, only the conversion', () => {
    const conversion = '1 SOL = 1,000,000,000 lamports';
    // Finer than a lamport: it used to read "= 2 lamports" beside "Use at most 9 decimals".
    expect(parsePricing(values({ price: '0.0000000015' })).errors.price).toContain('at most 9 decimals');
    expect(lamportsLabel('0.0000000015')).toBe(conversion);
    expect(lamportsLabel('1.0000000001')).toBe(conversion);
    expect(lamportsLabel('1000001')).toBe(conversion);
    expect(lamportsLabel('-1')).toBe(conversion);
    expect(lamportsLabel('0.000000001')).toBe('= 1 lamport');
  });

  it('echoes no lamport amount beside a price the form refuses (0 per query)', () => {
    const error = parsePricing(values({ accessModel: 'per_query', price: '0' })).errors.price;
    expect(error).toBe('A per-query listing needs a price above 0 SOL per query.');
    expect(lamportsLabel('0', error)).toBe('1 SOL = 1,000,000,000 lamports');
    expect(lamportsLabel('0')).toBe('= 0 lamports');
  });

  it('knows when the terms change (access model, price, period), not only anything', () => {
    const subscription: Listing = { ...listing, accessModel: 'subscription', subscriptionDays: 30 };
    const same = pricingValuesOf(subscription);
    expect(termsChanged(subscription, same)).toBe(false);
    expect(termsChanged(subscription, { ...same, retrievalRateLimit: 30, domain: 'tax', tags: ['x'] })).toBe(
      false,
    );
    // The price as typed, compared to the lamport.
    expect(termsChanged(subscription, { ...same, price: '1.000000000' })).toBe(false);
    expect(termsChanged(subscription, { ...same, price: '0.75' })).toBe(true);
    expect(termsChanged(subscription, { ...same, price: '' })).toBe(true);
    expect(termsChanged(subscription, { ...same, subscriptionDays: 31 })).toBe(true);
    expect(termsChanged(subscription, { ...same, accessModel: 'one_time' })).toBe(true);
    // A period left in the form is no term of a one-time listing.
    expect(termsChanged(listing, { ...pricingValuesOf(listing), subscriptionDays: 90 })).toBe(false);
  });

  it('previews the listing as the server will store it, and knows when nothing changed', () => {
    const pricing = parsePricing(
      values({ domain: ' Law ', tags: ['EU', 'eu', 'Courts'], price: 2 }),
    ).pricing!;
    expect(previewOf(listing, pricing)).toEqual({
      ...listing,
      domain: 'Law',
      tags: ['eu', 'courts'],
      price: 2,
    });
    expect(pricingChanged(listing, pricing)).toBe(true);
    expect(pricingChanged(listing, parsePricing(pricingValuesOf(listing)).pricing)).toBe(false);
  });

  it('previews nothing while the form holds an error, never the saved terms as the new ones', () => {
    const result = parsePricing(values({ accessModel: 'per_query', price: 0 }));
    expect(previewOf(listing, result.pricing)).toBeUndefined();
    expect(pricingChanged(listing, result.pricing)).toBe(true);
    expect(pricingErrorFields(result.errors)).toEqual(['Price']);
    expect(pricingErrorFields(parsePricing(values({ price: '', retrievalRateLimit: 0 })).errors)).toEqual([
      'Price',
      'Retrieval rate limit',
    ]);
  });
});
