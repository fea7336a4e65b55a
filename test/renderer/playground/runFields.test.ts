import { describe, expect, it } from 'vitest';
import {
  checkMinScore,
  checkTopK,
  runRefusal,
} from '../../../src/renderer/src/features/playground/runFields';

describe('the playground’s Top k and Min score as typed', () => {
  it('takes Top k from 1 to 20 as typed', () => {
    expect(checkTopK(1)).toEqual({ value: 1 });
    expect(checkTopK(20)).toEqual({ value: 20 });
    expect(checkTopK('7')).toEqual({ value: 7 });
  });

  it('refuses a Top k out of range, saying the range, rather than running with another number', () => {
    for (const typed of [21, 0, '', '123456789012345678901']) {
      expect(checkTopK(typed)).toEqual({ error: 'Top k is 1 to 20' });
    }
  });

  it('refuses a decimal Top k, saying it is a whole number, rather than running with it cut', () => {
    for (const typed of [2.5, '1.5', '0.5']) {
      expect(checkTopK(typed)).toEqual({ error: 'Top k is a whole number of chunks' });
    }
  });

  it('takes Min score from 0 to 1; empty means none', () => {
    expect(checkMinScore(0.35)).toEqual({ value: 0.35 });
    expect(checkMinScore(1)).toEqual({ value: 1 });
    expect(checkMinScore('')).toEqual({ value: 0 });
    expect(checkMinScore('0.')).toEqual({ value: 0 });
  });

  it('refuses a Min score above 1, saying the range', () => {
    expect(checkMinScore(1.5)).toEqual({ error: 'Min score is 0 to 1' });
    expect(checkMinScore('1.5')).toEqual({ error: 'Min score is 0 to 1' });
    expect(checkMinScore('.')).toEqual({ error: 'Min score is 0 to 1' });
  });

  it('names the fields that keep the query from running', () => {
    const ok = { value: 5 };
    const wrong = { error: 'x' };
    expect(runRefusal({ topK: ok, minScore: ok, filtersValid: true })).toBeNull();
    expect(runRefusal({ topK: wrong, minScore: ok, filtersValid: true })).toBe('Fix Top k to run the query.');
    expect(runRefusal({ topK: wrong, minScore: wrong, filtersValid: true })).toBe(
      'Fix Top k and Min score to run the query.',
    );
    expect(runRefusal({ topK: wrong, minScore: wrong, filtersValid: false })).toBe(
      'Fix Top k, Min score and the metadata filters to run the query.',
    );
  });
});
