import { describe, expect, it } from 'vitest';
import { HammingSpace } from '../../../src/core/retrieve/hammingKernel';
import { ScanHelper, scanHelper } from '../../../src/core/retrieve/scanHelper';

describe('scan helper thread', () => {
  it('is started once per process and shared', () => {
    const helper = scanHelper();
    expect(helper).not.toBeNull();
    expect(scanHelper()).toBe(helper);
  });

  it('serves several spaces; a closed helper leaves its spaces scanning alone with the same results', async () => {
    const helper = new ScanHelper();
    const a = new HammingSpace(1_000, 32, { parallel: true, helper });
    const b = new HammingSpace(999, 64, { parallel: true, helper });
    expect(a.parallel && b.parallel).toBe(true);
    for (let i = 0; i < a.codes.length; i++) a.codes[i] = (i * 37) & 0xff;
    for (let i = 0; i < b.codes.length; i++) b.codes[i] = (i * 11) & 0xff;
    const qa = new Uint8Array(32).fill(0x0f);
    const qb = new Uint8Array(64).fill(0xf0);
    const before = [Array.from(a.distancesTo(qa)), Array.from(b.distancesTo(qb))];
    // The last code of each half is scanned by a different thread than the first.
    expect(before[0]!.length).toBe(1_000);
    b.dispose();
    expect(Array.from(a.distancesTo(qa))).toEqual(before[0]);

    await helper.close();
    expect(helper.usable).toBe(false);
    expect(a.parallel).toBe(false);
    expect(Array.from(a.distancesTo(qa))).toEqual(before[0]);
    expect(Array.from(b.distancesTo(qb))).toEqual(before[1]);
  });
});
