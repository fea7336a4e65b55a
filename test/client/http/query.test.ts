import { describe, expect, it } from 'vitest';
import { decimalDigits } from '../../../src/client/http/query';
import { queryDecimal } from '../../../src/shared/queryNumbers';

/** The server's reading of a query number (src/shared/queryNumbers.ts). */
const serverReads = (text: string) => queryDecimal().parse(text);

describe('numbers in query strings', () => {
  it('are written in decimal digits with exactly the digits of the number, never rounded', () => {
    expect(decimalDigits(0.000000001)).toBe('0.000000001');
    expect(decimalDigits(5e-7)).toBe('0.0000005');
    expect(decimalDigits(1e21)).toBe('1000000000000000000000');
    expect(decimalDigits(1.5e22)).toBe('15000000000000000000000');
    expect(decimalDigits(-2.5e-8)).toBe('-0.000000025');
    expect(decimalDigits(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(decimalDigits(-0)).toBe('0');
    expect(decimalDigits(42)).toBe('42');
  });

  it('read back by the server as the same number, across the whole range of doubles', () => {
    const bits = new DataView(new ArrayBuffer(8));
    const values = [Number.MIN_VALUE, Number.MAX_VALUE, Number.EPSILON, 2 ** 53 + 2, 1e-7, 9.999e20];
    for (let i = 0; i < 2000; i++) {
      bits.setUint32(0, (Math.random() * 2 ** 32) >>> 0);
      bits.setUint32(4, (Math.random() * 2 ** 32) >>> 0);
      const value = bits.getFloat64(0);
      if (Number.isFinite(value)) values.push(value);
    }
    for (const value of values) {
      const text = decimalDigits(value);
      expect(text).not.toMatch(/e/i);
      expect(serverReads(text)).toBe(value);
    }
  });
});
