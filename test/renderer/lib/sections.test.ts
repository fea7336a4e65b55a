import { describe, expect, it } from 'vitest';
import { SECTIONS, sectionFromHash, sectionHref } from '../../../src/renderer/src/lib/sections';

describe('sectionFromHash', () => {
  it('reads the section from the hash', () => {
    expect(sectionFromHash('#/keys')).toBe('keys');
    expect(sectionFromHash('#settings')).toBe('settings');
    expect(sectionFromHash('#/listings/lst_1?tab=chunks')).toBe('listings');
  });

  it('opens Listings for an empty or unknown hash', () => {
    expect(sectionFromHash('')).toBe('listings');
    expect(sectionFromHash('#/nope')).toBe('listings');
  });

  it('round-trips every section through its link', () => {
    for (const section of SECTIONS) expect(sectionFromHash(sectionHref(section))).toBe(section);
  });
});
