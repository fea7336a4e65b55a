import { describe, expect, it } from 'vitest';
import { DensePoolChoice } from '../../../src/core/retrieve/densePoolChoice';
import { CANDIDATES_PER_SEARCH } from '../../../src/core/retrieve/hybrid';

describe('DensePoolChoice', () => {
  it('leaves a listing on the first pool while its queries settle there, each listing on its own record', () => {
    const choice = new DensePoolChoice();
    expect(choice.firstPool('lst_a')).toBeUndefined();
    for (let i = 0; i < 50; i++) choice.record('lst_a', i % 3 === 0);
    expect(choice.firstPool('lst_a')).toBeUndefined();
    for (let i = 0; i < 10; i++) choice.record('lst_b', true);
    expect(choice.firstPool('lst_b')).toBe(CANDIDATES_PER_SEARCH);
    expect(choice.firstPool('lst_a')).toBeUndefined();
  });

  it('asks for the full pool once most queries widen, tries the first pool again one query in 16, and returns to it when queries settle', () => {
    const choice = new DensePoolChoice();
    // The average moves a fifth of the way each query: the fourth widening in a row passes one half.
    for (let i = 0; i < 3; i++) choice.record('lst_a', true);
    expect(choice.firstPool('lst_a')).toBeUndefined();
    choice.record('lst_a', true);
    const asked = Array.from({ length: 32 }, () => choice.firstPool('lst_a'));
    expect(asked.filter((pool) => pool === undefined)).toHaveLength(2);
    expect(asked.filter((pool) => pool === CANDIDATES_PER_SEARCH)).toHaveLength(30);
    // Probes that settle bring the listing back to the first pool.
    choice.record('lst_a', false);
    choice.record('lst_a', false);
    expect(choice.firstPool('lst_a')).toBeUndefined();
  });
});
