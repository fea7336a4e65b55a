/**
 * Binary sign codes of vectors (bit i set when component i is positive): two vectors pointing the same
 * way share most bits, so the Hamming distance between codes ranks candidates for exact cosine
 * rescoring (docs/performance.md, "Dense retrieval at scale").
 */

/**
 * Bytes of a code for `dimensions`, padded to whole 256-bit pairs of SIMD blocks (the kernel's step; the
 * padding bits are 0 in every code).
 */
export const codeBytes = (dimensions: number): number => Math.ceil(dimensions / 256) * 32;

/** Writes the sign code of `vector` into `out` at `offset` (codeBytes(vector.length) bytes). */
export function writeSignCode(vector: Float32Array, out: Uint8Array, offset = 0): void {
  const bytes = codeBytes(vector.length);
  out.fill(0, offset, offset + bytes);
  for (let i = 0; i < vector.length; i++) {
    if (vector[i]! > 0) out[offset + (i >> 3)]! |= 1 << (i & 7);
  }
}

export function signCode(vector: Float32Array): Uint8Array {
  const out = new Uint8Array(codeBytes(vector.length));
  writeSignCode(vector, out);
  return out;
}

/**
 * The positions of the `count` smallest distances, smallest first, skipping positions `allowed` leaves
 * out (0) when given; ties are taken in position order. Distances are small integers (at most the code
 * length in bits), so a histogram finds the cut in two passes instead of a sort. `counted` is the
 * histogram of all distances when the scan already made it (HammingSpace.distancesTo); it is used only
 * without `allowed`.
 */
export function nearestPositions(
  distances: Uint16Array,
  count: number,
  maxDistance: number,
  allowed?: Uint8Array,
  counted?: Uint32Array,
): Int32Array {
  const n = distances.length;
  let histogram: Uint32Array;
  if (counted && !allowed) {
    histogram = counted;
  } else {
    histogram = new Uint32Array(maxDistance + 2);
    if (allowed) {
      for (let i = 0; i < n; i++) if (allowed[i]) histogram[distances[i]!]!++;
    } else {
      for (let i = 0; i < n; i++) histogram[distances[i]!]!++;
    }
  }
  const { cut, below, total } = histogramCut(histogram, count, maxDistance);
  const room = total - below;
  const kept = new Int32Array(total);
  let at = 0;
  let atCut = 0;
  for (let i = 0; i < n; i++) {
    const d = distances[i]!;
    if (d > cut || (allowed && !allowed[i])) continue;
    if (d === cut) {
      if (atCut >= room) continue;
      atCut++;
    }
    kept[at++] = i;
  }
  return byDistance(kept, distances, cut);
}

/**
 * Where the `count` smallest distances end, from their histogram: every distance under `cut` is kept
 * (`below` of them), then the first `total - below` at `cut` in position order. Past `maxDistance`
 * (fewer distances than `count`), `cut` is maxDistance + 1 and all are kept.
 */
export function histogramCut(
  histogram: Uint32Array,
  count: number,
  maxDistance: number,
): { cut: number; below: number; total: number } {
  let cut = 0;
  let below = 0;
  while (cut <= maxDistance && below + histogram[cut]! < count) below += histogram[cut++]!;
  const total = Math.min(count, below + (cut <= maxDistance ? histogram[cut]! : 0));
  return { cut, below, total };
}

/**
 * `positions` (ascending) ordered by their distance, nearest first, ties in position order: a counting
 * sort, distances being at most `cut`.
 */
export function byDistance(positions: Int32Array, distances: Uint16Array, cut: number): Int32Array {
  const offsets = new Uint32Array(cut + 2);
  for (let i = 0; i < positions.length; i++) offsets[distances[positions[i]!]! + 1]!++;
  for (let d = 1; d <= cut + 1; d++) offsets[d]! += offsets[d - 1]!;
  const out = new Int32Array(positions.length);
  for (let i = 0; i < positions.length; i++) out[offsets[distances[positions[i]!]!]!++] = positions[i]!;
  return out;
}
