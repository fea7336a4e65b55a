import type { CoverageDelta } from './coverage';

/**
 * The parent's record of the parser code a run has covered, across child restarts: per script the
 * covered source positions, and the blocks (ranges) V8 has reported. A block counts as covered when its
 * first position is: the innermost range there is the block itself.
 */
export class CoverageMap {
  private readonly covered = new Map<string, Uint8Array>();
  private readonly blocks = new Map<string, Set<string>>();

  /** Records one input's coverage; true when it reached code no earlier input had. */
  add(delta: CoverageDelta): boolean {
    for (const [url, start, end] of delta.blocks) {
      let set = this.blocks.get(url);
      if (!set) this.blocks.set(url, (set = new Set()));
      set.add(`${start}:${end}`);
    }
    let fresh = false;
    for (const [url, start, end] of delta.covered) {
      let positions = this.covered.get(url);
      if (!positions || positions.length < end) {
        const grown = new Uint8Array(Math.max(end, 2 * (positions?.length ?? 0)));
        if (positions) grown.set(positions);
        this.covered.set(url, (positions = grown));
      }
      if (positions.subarray(start, end).includes(0)) fresh = true;
      positions.fill(1, start, end);
    }
    return fresh;
  }

  /** Blocks covered so far, over the blocks known so far (both grow as inputs reach more code). */
  blockCount(): { covered: number; known: number } {
    let covered = 0;
    let known = 0;
    for (const [url, set] of this.blocks) {
      const positions = this.covered.get(url);
      for (const key of set) {
        known++;
        if (positions?.[Number(key.slice(0, key.indexOf(':')))] === 1) covered++;
      }
    }
    return { covered, known };
  }
}
