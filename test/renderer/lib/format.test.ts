import { describe, expect, it } from 'vitest';
import {
  counted,
  formatCount,
  formatDateTime,
  formatListingPrice,
  formatSol,
  shortAddress,
} from '../../../src/renderer/src/lib/format';

describe('formatSol', () => {
  it('keeps every lamport digit and drops trailing zeros', () => {
    expect(formatSol(1.5)).toBe('1.5 SOL');
    expect(formatSol(0.000000001)).toBe('0.000000001 SOL');
    expect(formatSol(2)).toBe('2 SOL');
    expect(formatSol(0)).toBe('0 SOL');
    expect(formatSol(12345.6789)).toBe('12,345.6789 SOL');
  });
});

describe('formatListingPrice', () => {
  it('says what the price buys for each access model', () => {
    expect(formatListingPrice({ price: 1.5, accessModel: 'one_time', subscriptionDays: null })).toBe(
      '1.5 SOL',
    );
    expect(formatListingPrice({ price: 0.002, accessModel: 'per_query', subscriptionDays: null })).toBe(
      '0.002 SOL / query',
    );
    expect(formatListingPrice({ price: 2, accessModel: 'subscription', subscriptionDays: 30 })).toBe(
      '2 SOL / 30 days',
    );
    expect(formatListingPrice({ price: 0.1, accessModel: 'subscription', subscriptionDays: 1 })).toBe(
      '0.1 SOL / day',
    );
  });
});

describe('formatDateTime', () => {
  it('formats ISO times and marks missing ones', () => {
    expect(formatDateTime('2026-03-04T05:06:00Z', 'en-GB')).toMatch(/^4 Mar 2026, \d{2}:06$/);
    expect(formatDateTime(null)).toBe('—');
    expect(formatDateTime('not a date')).toBe('not a date');
  });
});

describe('shortAddress', () => {
  it('keeps the head and tail of long addresses only', () => {
    expect(shortAddress('7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU', 6, 6)).toBe('7xKXtg…osgAsU');
    expect(shortAddress('short')).toBe('short');
  });
});

describe('counted', () => {
  it('puts the noun in the plural unless there is exactly one', () => {
    expect(counted(1, 'document')).toBe('1 document');
    expect(counted(0, 'document')).toBe('0 documents');
    expect(counted(3, 'chunk')).toBe('3 chunks');
    expect(counted(2, 'query', 'queries')).toBe('2 queries');
  });

  it('writes the count as formatCount does, beside the pages that count the same things', () => {
    expect(counted(3004, 'document')).toBe('3,004 documents');
    expect(counted(18006, 'chunk')).toBe(`${formatCount(18006)} chunks`);
    expect(counted(1234567, 'query', 'queries', 'de-DE')).toBe('1.234.567 queries');
  });
});
