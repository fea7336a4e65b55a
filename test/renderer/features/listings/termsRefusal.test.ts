import { describe, expect, it } from 'vitest';
import {
  termsFixedFields,
  withoutFieldNames,
} from '../../../../src/renderer/src/features/listings/termsRefusal';
import { StudioApiError } from '../../../../src/renderer/src/lib/studioApi';

const refusal = (message: string, status = 409) => new StudioApiError({ code: 'conflict', status, message });
const HELD =
  "listing 'lst_abc' has 1 credential held under its current terms (one_time, 1 SOL), which cannot change under them.";

describe('the refusal of new terms for a listing someone holds (Edit listing, Pricing)', () => {
  it('names the fields the 409 starts with, and the sentence without them', () => {
    expect(termsFixedFields(refusal(`price: ${HELD}`))).toEqual(['price']);
    expect(termsFixedFields(refusal(`accessModel, price, subscriptionDays: ${HELD}`))).toEqual([
      'accessModel',
      'price',
      'subscriptionDays',
    ]);
    expect(withoutFieldNames(`accessModel, price: ${HELD}`)).toBe(`L${HELD.slice(1)}`);
  });

  it('names none for another refusal', () => {
    expect(termsFixedFields(refusal(`price: ${HELD}`, 400))).toEqual([]);
    expect(termsFixedFields(refusal('title: already taken'))).toEqual([]);
    expect(termsFixedFields(new Error(`price: ${HELD}`))).toEqual([]);
  });
});
