import { leb128, MODULE_HEADER, name, op, PAGE, section, SIMD, wasm } from '../wasm/moduleBytes';
import { scanHelper, type ScanHelper } from './scanHelper';

/**
 * Hamming distances between one binary code and many, in WebAssembly SIMD: the first pass of dense search
 * over large knowledge bases (docs/performance.md). The module is a few dozen instructions, encoded here
 * byte by byte so no assembler is needed at build time; test/core/retrieve/hammingKernel.test.ts checks it
 * against a plain JS popcount.
 *
 * The exported function, in WAT:
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
 * Codes are whole 256-bit pairs of blocks (two independent chains keep both SIMD units busy). Each 16-bit
 * lane gains at most 32 per pair, so codes of up to 2,048 pairs (524,288 bits) never overflow.
 */

const simd = {
  load: [SIMD, 0x00, 0x00, 0x00], // v128.load align=1 offset=0
  loadNext: [SIMD, 0x00, 0x00, 0x10], // v128.load align=1 offset=16
  const: [SIMD, 0x0c],
  xor: [SIMD, 0x51],
  popcnt: [SIMD, 0x62],
  extaddI8U: [SIMD, 0x7d],
  extaddI16U: [SIMD, 0x7f],
  addI16: [SIMD, 0x8e, 0x01],
  extractLaneI32: [SIMD, 0x1b],
} as const;

// Parameters 0..4, then locals.
const CODES = 0;
const COUNT = 1;
const PAIRS = 2;
const QUERY = 3;
const OUT = 4;
const B = 5;
const Q = 6;
const ACC = 7;
const ACC2 = 8;

function body(): number[] {
  const get = (i: number) => [op.localGet, i];
  const set = (i: number) => [op.localSet, i];
  const tee = (i: number) => [op.localTee, i];
  const addConst = (i: number, n: number) => [...get(i), op.i32Const, n, op.i32Add, ...set(i)];
  const lane = (n: number) => [...get(ACC), ...simd.extractLaneI32, n];
  return [
    // locals: 2 × i32 ($b $q), 2 × v128 ($acc $acc2)
    0x02,
    0x02,
    op.i32,
    0x02,
    op.v128,
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
    0x00,
    0x00, // align=1 offset=0
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

/** The kernel module's bytes: one function `scan`, memory imported as env.memory. */
export function hammingKernelBytes(): Uint8Array {
  const code = body();
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(1, [0x01, 0x60, 0x05, op.i32, op.i32, op.i32, op.i32, op.i32, 0x00]),
    // A shared memory (limits flag 3: shared, with a maximum of 65,536 pages), so the scan helper's
    // thread can scan the same codes.
    ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x01, ...leb128(65_536)]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, ...name('scan'), 0x00, 0x00]),
    ...section(10, [0x01, ...leb128(code.length), ...code]),
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
 * `count` binary codes of `bytesPerCode` bytes (a multiple of 32) in a shared WebAssembly memory of their
 * own, with room for a query code, one 16-bit distance per code and the scan helper's histogram. Sets of
 * PARALLEL_MIN_BYTES or more are scanned by two threads, half each (scanHelper.ts).
 */
export class HammingSpace {
  /** Write the codes here, code i at `i * bytesPerCode`. */
  readonly codes: Uint8Array;
  private readonly query: Uint8Array;
  private readonly distances: Uint16Array;
  private readonly scan: (codes: number, count: number, blocks: number, query: number, out: number) => void;
  private readonly codesAt: number;
  private readonly helperHistogram: Uint32Array;
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
    const histogramAt = align16(distancesAt + count * 2);
    const buckets = bytesPerCode * 8 + 2;
    const bytes = histogramAt + buckets * 4;
    const pages = Math.max(1, Math.ceil(bytes / PAGE));
    const memory = new wasm.Memory({ initial: pages, maximum: pages, shared: true });
    const instance = new wasm.Instance(kernelModule(), { env: { memory } });
    this.scan = instance.exports.scan as HammingSpace['scan'];
    this.query = new Uint8Array(memory.buffer, queryAt, bytesPerCode);
    this.codes = new Uint8Array(memory.buffer, this.codesAt, count * bytesPerCode);
    this.distances = new Uint16Array(memory.buffer, distancesAt, count);
    this.helperHistogram = new Uint32Array(memory.buffer, histogramAt, buckets);
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
