import {
  get,
  leb128,
  locals,
  MODULE_HEADER,
  name,
  op,
  PAGE,
  section,
  set,
  SIMD,
  tee,
  wasm,
} from '../wasm/moduleBytes';
import { scanHelper, type ScanHelper } from './scanHelper';
import { byDistance, histogramCut, nearestPositions } from './signCodes';

/**
 * Hamming distances between one binary code and many, in WebAssembly SIMD: the first pass of dense search
 * over large knowledge bases (docs/performance.md). The module is a few dozen instructions, encoded here
 * byte by byte so no assembler is needed at build time; test/core/retrieve/hammingKernel.test.ts checks it
 * against a plain JS popcount and selection.
 *
 * The exported functions, in WAT:
 *
 *   (func (export "scan") (param $codes i32) (param $count i32) (param $pairs i32) (param $query i32)
 *                         (param $out i32)
 *     (local $b i32) (local $q i32) (local $acc v128) (local $acc2 v128)
 *     block  (br_if 0 (i32.eqz $count))
 *       loop                                        ;; one code per iteration
 *         $acc = $acc2 = v128.const 0;  $q = $query;  $b = $pairs
 *         loop                                      ;; 32 bytes (256 bits) per iteration, two chains
 *           $acc = i16x8.add($acc, i16x8.extadd_pairwise_i8x16_u(
 *                    i8x16.popcnt(v128.xor(v128.load($codes), v128.load($q)))))
 *           $acc2 = i16x8.add($acc2, i16x8.extadd_pairwise_i8x16_u(
 *                    i8x16.popcnt(v128.xor(v128.load offset=16 ($codes), v128.load offset=16 ($q)))))
 *           $codes += 32;  $q += 32
 *           br_if 0 (local.tee $b (i32.sub $b 1))
 *         end
 *         $acc = i32x4.extadd_pairwise_i16x8_u(i16x8.add($acc, $acc2))
 *         i32.store16 $out (lane0 + lane1 + lane2 + lane3)
 *         $out += 2
 *         br_if 0 (local.tee $count (i32.sub $count 1))
 *       end
 *     end)
 *
 *   (func (export "select") (param $distances i32) (param $n i32) (param $cut i32) (param $room i32)
 *                           (param $out i32) (result i32)
 *     (local $i i32) (local $j i32) (local $end i32) (local $d i32) (local $written i32)
 *     (local $atCut i32) (local $cuts v128)
 *     $cuts = i16x8.splat($cut)
 *     block  (br_if 0 (i32.eqz $n))
 *       loop                                        ;; 8 distances per iteration
 *         block                                     ;; none of the 8 at or under the cut: next
 *           br_if 0 (i32.eqz (i16x8.bitmask (i16x8.le_u (v128.load ($distances + $i * 2)) $cuts)))
 *           $j = $i;  $end = min($i + 8, $n)
 *           loop                                    ;; those 8 one by one
 *             $d = i32.load16_u ($distances + $j * 2)
 *             block                                 ;; not kept
 *               br_if 0 (i32.gt_u $d $cut)
 *               block                               ;; kept
 *                 br_if 0 (i32.lt_u $d $cut)
 *                 br_if 1 (i32.ge_u $atCut $room)   ;; at the cut: the first $room only
 *                 $atCut += 1
 *               end
 *               i32.store ($out + $written * 4) $j;  $written += 1
 *             end
 *             br_if 0 (i32.lt_u (local.tee $j (i32.add $j 1)) $end)
 *           end
 *         end
 *         br_if 0 (i32.lt_u (local.tee $i (i32.add $i 8)) $n)
 *       end
 *     end
 *     $written)
 *
 * Codes are whole 256-bit pairs of blocks (two independent chains keep both SIMD units busy). Each 16-bit
 * lane gains at most 32 per pair, so codes of up to 2,048 pairs (524,288 bits) never overflow. `select`
 * reads distances 8 at a time, up to 14 bytes past the last: the space's memory always has them.
 */

const simd = {
  load: [SIMD, 0x00, 0x00, 0x00], // v128.load align=1 offset=0
  loadNext: [SIMD, 0x00, 0x00, 0x10], // v128.load align=1 offset=16
  const: [SIMD, 0x0c],
  splatI16: [SIMD, 0x10],
  leU16: [SIMD, 0x34],
  xor: [SIMD, 0x51],
  popcnt: [SIMD, 0x62],
  extaddI8U: [SIMD, 0x7d],
  extaddI16U: [SIMD, 0x7f],
  bitmaskI16: [SIMD, 0x84, 0x01],
  addI16: [SIMD, 0x8e, 0x01],
  extractLaneI32: [SIMD, 0x1b],
} as const;

const addConst = (i: number, n: number) => [...get(i), op.i32Const, n, op.i32Add, ...set(i)];
const align1 = [0x00, 0x00];
const align2 = [0x01, 0x00];
const align4 = [0x02, 0x00];

function scanBody(): number[] {
  // Parameters 0..4, then locals.
  const [CODES, COUNT, PAIRS, QUERY, OUT, B, Q, ACC, ACC2] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const lane = (n: number) => [...get(ACC), ...simd.extractLaneI32, n];
  return [
    ...locals([2, op.i32], [2, op.v128]),
    op.block,
    op.void,
    ...get(COUNT),
    op.i32Eqz,
    op.brIf,
    0,
    op.loop,
    op.void,
    ...simd.const,
    ...new Array<number>(16).fill(0),
    ...tee(ACC),
    ...set(ACC2),
    ...get(QUERY),
    ...set(Q),
    ...get(PAIRS),
    ...set(B),
    op.loop,
    op.void,
    ...get(ACC),
    ...get(CODES),
    ...simd.load,
    ...get(Q),
    ...simd.load,
    ...simd.xor,
    ...simd.popcnt,
    ...simd.extaddI8U,
    ...simd.addI16,
    ...set(ACC),
    ...get(ACC2),
    ...get(CODES),
    ...simd.loadNext,
    ...get(Q),
    ...simd.loadNext,
    ...simd.xor,
    ...simd.popcnt,
    ...simd.extaddI8U,
    ...simd.addI16,
    ...set(ACC2),
    ...addConst(CODES, 32),
    ...addConst(Q, 32),
    ...get(B),
    op.i32Const,
    1,
    op.i32Sub,
    ...tee(B),
    op.brIf,
    0,
    op.end,
    ...get(ACC),
    ...get(ACC2),
    ...simd.addI16,
    ...simd.extaddI16U,
    ...set(ACC),
    ...get(OUT),
    ...lane(0),
    ...lane(1),
    op.i32Add,
    ...lane(2),
    op.i32Add,
    ...lane(3),
    op.i32Add,
    op.i32Store16,
    ...align1,
    ...addConst(OUT, 2),
    ...get(COUNT),
    op.i32Const,
    1,
    op.i32Sub,
    ...tee(COUNT),
    op.brIf,
    0,
    op.end,
    op.end,
    op.end,
  ];
}

function selectBody(): number[] {
  // Parameters 0..4, then locals.
  const [DISTANCES, N, CUT, ROOM, OUT, I, J, END, D, WRITTEN, AT_CUT, CUTS] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
  ];
  return [
    ...locals([6, op.i32], [1, op.v128]),
    ...get(CUT),
    ...simd.splatI16,
    ...set(CUTS),
    op.block,
    op.void,
    ...get(N),
    op.i32Eqz,
    op.brIf,
    0,
    op.loop,
    op.void,
    op.block,
    op.void,
    ...get(DISTANCES),
    ...get(I),
    op.i32Const,
    1,
    op.i32Shl,
    op.i32Add,
    ...simd.load,
    ...get(CUTS),
    ...simd.leU16,
    ...simd.bitmaskI16,
    op.i32Eqz,
    op.brIf,
    0,
    ...get(I),
    ...set(J),
    // $end = min($i + 8, $n)
    ...get(I),
    op.i32Const,
    8,
    op.i32Add,
    ...set(END),
    ...get(END),
    ...get(N),
    ...get(END),
    ...get(N),
    op.i32LtU,
    op.select,
    ...set(END),
    op.loop,
    op.void,
    ...get(DISTANCES),
    ...get(J),
    op.i32Const,
    1,
    op.i32Shl,
    op.i32Add,
    op.i32Load16U,
    ...align2,
    ...set(D),
    op.block,
    op.void,
    ...get(D),
    ...get(CUT),
    op.i32GtU,
    op.brIf,
    0,
    op.block,
    op.void,
    ...get(D),
    ...get(CUT),
    op.i32LtU,
    op.brIf,
    0,
    ...get(AT_CUT),
    ...get(ROOM),
    op.i32GeU,
    op.brIf,
    1,
    ...addConst(AT_CUT, 1),
    op.end,
    ...get(OUT),
    ...get(WRITTEN),
    op.i32Const,
    2,
    op.i32Shl,
    op.i32Add,
    ...get(J),
    op.i32Store,
    ...align4,
    ...addConst(WRITTEN, 1),
    op.end,
    ...get(J),
    op.i32Const,
    1,
    op.i32Add,
    ...tee(J),
    ...get(END),
    op.i32LtU,
    op.brIf,
    0,
    op.end,
    op.end,
    ...get(I),
    op.i32Const,
    8,
    op.i32Add,
    ...tee(I),
    ...get(N),
    op.i32LtU,
    op.brIf,
    0,
    op.end,
    op.end,
    ...get(WRITTEN),
    op.end,
  ];
}

/** The kernel module's bytes: functions `scan` and `select`, memory imported as env.memory. */
export function hammingKernelBytes(): Uint8Array {
  const scan = scanBody();
  const select = selectBody();
  const i32s = (n: number) => new Array<number>(n).fill(op.i32);
  return new Uint8Array([
    ...MODULE_HEADER,
    // Types: scan (5 × i32) → (), select (5 × i32) → i32.
    ...section(1, [0x02, 0x60, 0x05, ...i32s(5), 0x00, 0x60, 0x05, ...i32s(5), 0x01, op.i32]),
    // A shared memory (limits flag 3: shared, with a maximum of 65,536 pages), so the scan helper's
    // thread can scan the same codes.
    ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x01, ...leb128(65_536)]),
    ...section(3, [0x02, 0x00, 0x01]),
    ...section(7, [0x02, ...name('scan'), 0x00, 0x00, ...name('select'), 0x00, 0x01]),
    ...section(10, [0x02, ...leb128(scan.length), ...scan, ...leb128(select.length), ...select]),
  ]);
}

let compiled: object | undefined;
const kernelModule = () => (compiled ??= new wasm.Module(hammingKernelBytes()));

const align16 = (n: number) => Math.ceil(n / 16) * 16;
/** Below this many bytes of codes one thread scans alone: waking the helper would cost more than it saves. */
export const PARALLEL_MIN_BYTES = 4 * 1024 * 1024;

/** Spaces the garbage collector took before dispose(): the helper lets go of their memory too. */
const released = new FinalizationRegistry<{ helper: ScanHelper; id: number }>(({ helper, id }) =>
  helper.detach(id),
);

/**
 * Positions `HammingSpace.nearest` selects in WebAssembly at most (the candidates of one search: topK 100
 * asks for about 800); a search asking for more is selected in JavaScript (nearestPositions).
 */
export const SELECT_CAPACITY = 16_384;

/**
 * `count` binary codes of `bytesPerCode` bytes (a multiple of 32) in a shared WebAssembly memory of their
 * own, with room for a query code, one 16-bit distance per code, a histogram of the distances for each
 * thread and the positions a selection keeps. Sets of PARALLEL_MIN_BYTES or more are scanned by two
 * threads, half each (scanHelper.ts).
 */
export class HammingSpace {
  /** Write the codes here, code i at `i * bytesPerCode`. */
  readonly codes: Uint8Array;
  private readonly query: Uint8Array;
  private readonly distances: Uint16Array;
  private readonly scan: (codes: number, count: number, blocks: number, query: number, out: number) => void;
  private readonly select: (distances: number, n: number, cut: number, room: number, out: number) => number;
  private readonly codesAt: number;
  private readonly helperHistogram: Uint32Array;
  private readonly selected: Int32Array;
  private helper: { helper: ScanHelper; id: number } | null = null;

  constructor(
    readonly count: number,
    readonly bytesPerCode: number,
    options: { parallel?: boolean; helper?: ScanHelper | null } = {},
  ) {
    if (bytesPerCode <= 0 || bytesPerCode % 32 !== 0 || bytesPerCode > 65_536) {
      throw new Error(`bytesPerCode must be a positive multiple of 32 up to 65536, not ${bytesPerCode}`);
    }
    const queryAt = 0;
    this.codesAt = align16(bytesPerCode);
    const distancesAt = align16(this.codesAt + count * bytesPerCode);
    const buckets = bytesPerCode * 8 + 2;
    // The selection reads 16 bytes at a time, up to 14 past the last distance: the histogram follows.
    const histogramAt = align16(distancesAt + count * 2);
    const selectedAt = align16(histogramAt + buckets * 4);
    const bytes = selectedAt + SELECT_CAPACITY * 4;
    const pages = Math.max(1, Math.ceil(bytes / PAGE));
    const memory = new wasm.Memory({ initial: pages, maximum: pages, shared: true });
    const instance = new wasm.Instance(kernelModule(), { env: { memory } });
    this.scan = instance.exports.scan as HammingSpace['scan'];
    this.select = instance.exports.select as HammingSpace['select'];
    this.query = new Uint8Array(memory.buffer, queryAt, bytesPerCode);
    this.codes = new Uint8Array(memory.buffer, this.codesAt, count * bytesPerCode);
    this.distances = new Uint16Array(memory.buffer, distancesAt, count);
    this.helperHistogram = new Uint32Array(memory.buffer, histogramAt, buckets);
    this.selected = new Int32Array(memory.buffer, selectedAt, SELECT_CAPACITY);
    if (options.parallel ?? count * bytesPerCode >= PARALLEL_MIN_BYTES) {
      const helper = options.helper === undefined ? scanHelper() : options.helper;
      if (helper && count >= 2) {
        this.helper = { helper, id: helper.attach(kernelModule(), memory) };
        released.register(this, this.helper, this);
      }
    }
  }

  /** Bytes of memory this space holds. */
  get byteLength(): number {
    return this.codes.buffer.byteLength;
  }

  /** Whether scans are shared with the helper thread. */
  get parallel(): boolean {
    return this.helper !== null && this.helper.helper.usable;
  }

  /** The distances the last scan wrote (valid until the next). */
  lastDistances(): Uint16Array {
    return this.distances;
  }

  /**
   * The Hamming distance from `query` to every code, in code order. The array is a view reused by the
   * next call: read it before scanning again. With `histogram` (at least bytesPerCode × 8 + 1 entries),
   * it is filled with how many codes lie at each distance (each thread counts its own half).
   */
  distancesTo(query: Uint8Array, histogram?: Uint32Array): Uint16Array {
    if (query.length !== this.bytesPerCode) throw new Error('query code of the wrong length');
    this.query.set(query);
    histogram?.fill(0);
    const pairs = this.bytesPerCode / 32;
    const helper = this.parallel ? this.helper : null;
    // The helper takes the second half; this thread the first (or all, without a helper).
    const mine = helper ? this.count >> 1 : this.count;
    if (helper) {
      helper.helper.start(helper.id, {
        codes: this.codesAt + mine * this.bytesPerCode,
        count: this.count - mine,
        pairs,
        query: 0,
        out: this.distances.byteOffset + mine * 2,
        histogram: histogram ? this.helperHistogram.byteOffset : 0,
        buckets: this.helperHistogram.length,
      });
    }
    // Counting the histogram inside the kernel measured slower than this separate pass (each count
    // waits on the last one to the same bucket either way, and the kernel's loop lost more).
    if (mine > 0) this.scan(this.codesAt, mine, pairs, 0, this.distances.byteOffset);
    if (histogram) countDistances(this.distances, 0, mine, histogram);
    if (helper) {
      if (helper.helper.finish()) {
        if (histogram)
          for (let d = 0; d < histogram.length; d++) histogram[d]! += this.helperHistogram[d] ?? 0;
      } else {
        // The helper was given up: this thread scans its half too.
        this.scan(
          this.codesAt + mine * this.bytesPerCode,
          this.count - mine,
          pairs,
          0,
          this.distances.byteOffset + mine * 2,
        );
        if (histogram) countDistances(this.distances, mine, this.count, histogram);
      }
    }
    return this.distances;
  }

  /**
   * nearestPositions(lastDistances(), count, bytesPerCode × 8, undefined, histogram), the same positions
   * in the same order, with the pass over every distance in WebAssembly SIMD. `histogram` is the last
   * scan's (distancesTo).
   */
  nearest(count: number, histogram: Uint32Array): Int32Array {
    const maxDistance = this.bytesPerCode * 8;
    const { cut, below, total } = histogramCut(histogram, count, maxDistance);
    // The kernel compares 16-bit lanes: a cut past them (codes of 65,535 bits or more) is left to JavaScript.
    if (total > SELECT_CAPACITY || cut > 0xffff)
      return nearestPositions(this.distances, count, maxDistance, undefined, histogram);
    const written = this.select(
      this.distances.byteOffset,
      this.count,
      cut,
      total - below,
      this.selected.byteOffset,
    );
    return byDistance(this.selected.subarray(0, written), this.distances, cut);
  }

  /** Lets the helper thread drop this space's memory (the cache calls it when it drops a code set). */
  dispose(): void {
    if (!this.helper) return;
    released.unregister(this);
    this.helper.helper.detach(this.helper.id);
    this.helper = null;
  }
}

function countDistances(distances: Uint16Array, from: number, to: number, histogram: Uint32Array): void {
  for (let i = from; i < to; i++) histogram[distances[i]!]!++;
}
