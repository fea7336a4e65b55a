import { describe, expect, it } from 'vitest';
import { SECTIONS, sectionFromHash, sectionHref } from '../../src/renderer/src/lib/sections';
import { addressInPlaceOf } from '../../src/renderer/src/navigation';

describe('the address of an unknown section', () => {
  it('is replaced by the address of the view shown, Listings', () => {
    for (const hash of ['#/bogus', '#bogus', '#/bogus/deeper?x=1', '#/Listings', '#/listingsx']) {
      const replacement = addressInPlaceOf(hash);
      expect(replacement).toBe('#/listings');
      expect(sectionFromHash(hash)).toBe(sectionFromHash(replacement!));
    }
  });

  it('is left alone when it names a section, or none', () => {
    for (const section of SECTIONS) expect(addressInPlaceOf(sectionHref(section))).toBeNull();
    expect(addressInPlaceOf('#/playground?listing=lst_1&as=abc')).toBeNull();
    expect(addressInPlaceOf('#settings')).toBeNull();
    expect(addressInPlaceOf('')).toBeNull();
    expect(addressInPlaceOf('#')).toBeNull();
    expect(addressInPlaceOf('#/')).toBeNull();
  });
});
