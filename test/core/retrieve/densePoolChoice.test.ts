import { describe, expect, it } from 'vitest';
import { DensePoolChoice } from '../../../src/core/retrieve/densePoolChoice';
import { CANDIDATES_PER_SEARCH } from '../../../src/core/retrieve/hybrid';

describe('DensePoolChoice', () => {
  it('leaves a listing on the first pool while its queries settle there, each listing on its own record', () => {
    const choice = new DensePoolChoice();
    expect(choice.firstPool('lst_a')).toBeUndefined();
    for (let i = 0; i < 50; i++) choice.record('lst_a', i % 3 === 0);
    expect(choice.firstPool('lst_a')).toBeUndefined();
    for (let i = 0; i < 20; i++) choice.record('lst_b', true);
    expect(choice.firstPool('lst_b')).toBe(CANDIDATES_PER_SEARCH);
    expect(choice.firstPool('lst_a')).toBeUndefined();
  });

  it('asks for the full pool once most queries widen, tries the first pool again one query in 32, and returns to it when queries settle', () => {
    const choice = new DensePoolChoice();
    // The average moves a twentieth of the way each query: the 14th widening in a row passes one half.
    for (let i = 0; i < 13; i++) choice.record('lst_a', true);
    expect(choice.firstPool('lst_a')).toBeUndefined();
    choice.record('lst_a', true);
    const asked = Array.from({ length: 64 }, () => choice.firstPool('lst_a'));
    expect(asked.filter((pool) => pool === undefined)).toHaveLength(2);
    expect(asked.filter((pool) => pool === CANDIDATES_PER_SEARCH)).toHaveLength(62);
    // A probe that settles brings the listing back to the first pool.
    choice.record('lst_a', false);
    expect(choice.firstPool('lst_a')).toBeUndefined();
  });

  it('keeps a listing on the first pool when its widenings come in runs among queries that mostly settle', () => {
    const choice = new DensePoolChoice();
    // 30% widened, three in a row each time (as the same few queries asked again and again).
    for (let i = 0; i < 300; i++) {
      choice.record('lst_a', i % 10 < 3);
      expect(choice.firstPool('lst_a')).toBeUndefined();
    }
  });
});
