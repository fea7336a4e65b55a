import { describe, expect, it } from 'vitest';
import { playgroundHashParams } from '../../../src/renderer/src/features/playground/actingAs';
import {
  playgroundHash,
  resolvePlaygroundListing,
} from '../../../src/renderer/src/features/playground/playgroundAddress';

const listings = [
  { id: 'lst_empty', chunkCount: 0 },
  { id: 'lst_hockey', chunkCount: 12 },
  { id: 'lst_dbpedia', chunkCount: 500 },
];

describe('the playground’s listing and address', () => {
  it('queries the listing the address names, over the one the other views work on', () => {
    expect(resolvePlaygroundListing(listings, { address: 'lst_hockey', shared: 'lst_dbpedia' })).toBe(
      'lst_hockey',
    );
  });

  it('follows the listing the other views work on when the address names none', () => {
    expect(resolvePlaygroundListing(listings, { address: null, shared: 'lst_dbpedia' })).toBe('lst_dbpedia');
    expect(resolvePlaygroundListing(listings, { address: null, shared: 'lst_empty' })).toBe('lst_empty');
  });

  it('passes over listings that no longer exist, then takes the first with chunks', () => {
    expect(resolvePlaygroundListing(listings, { address: 'lst_gone', shared: 'lst_dbpedia' })).toBe(
      'lst_dbpedia',
    );
    expect(resolvePlaygroundListing(listings, { address: 'lst_gone', shared: 'lst_gone2' })).toBe(
      'lst_hockey',
    );
    expect(resolvePlaygroundListing([{ id: 'lst_a', chunkCount: 0 }], { address: null, shared: null })).toBe(
      'lst_a',
    );
    expect(resolvePlaygroundListing([], { address: null, shared: 'lst_a' })).toBeNull();
  });

  it('writes the choices into an address the playground reads back', () => {
    expect(playgroundHash('lst_hockey', null)).toBe('#/playground?listing=lst_hockey');
    const hash = playgroundHash('lst_hockey', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin');
    expect(playgroundHashParams(hash)).toEqual({
      listing: 'lst_hockey',
      as: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
    });
    expect(playgroundHashParams(playgroundHash('lst a&b', 'w=1'))).toEqual({ listing: 'lst a&b', as: 'w=1' });
  });
});
