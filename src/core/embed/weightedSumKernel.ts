import {
  get,
  i32Const as i32,
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

/**
 * The offline model's weighted sum of word vectors (offlineGlove.ts) in WebAssembly SIMD: two dimensions
 * at a time in float64 lanes, four rows per pass as the JavaScript sum does. It adds each dimension's
 * terms in the same order, one IEEE operation at a time (WebAssembly never fuses a multiply and an add),
 * so the sums are bit-identical to the JavaScript ones; test/core/embed/weightedSumKernel.test.ts and the
 * model's own tests check that. The 969,982 rows of the 10 MB mixed corpus's Markdown, JSON and CSV text
 * took 104-111 ms in JavaScript and 28-31 ms here (docs/performance.md, fifteenth pass).
 *
 * The module is encoded byte by byte, as hammingKernel.ts's is, so no assembler is needed at build time.
 * Its two functions, in WAT ($n rows per pass: 4 for `sum4`, 1 for `sum1`):
 *
 *   (func (param $rows i32) (param $passes i32) (param $vectors i32) (param $weights i32)
 *         (param $rowBytes i32) (param $out i32)
 *     (local $b0 … $b3 i32) (local $i i32) (local $o i32) (local $r i32) (local $w0 … $w3 v128) (local $acc v128)
 *     block  (br_if 0 (i32.eqz $passes))
 *       loop                                  ;; $n rows per pass
 *         for k < $n: $r = i32.load offset=4k ($rows)
 *                     $bk = $vectors + $r * $rowBytes
 *                     $wk = f64x2.splat(f64.promote_f32(f32.load ($weights + $r << 2)))
 *         $i = 0;  $o = $out
 *         loop                                ;; two dimensions per iteration
 *           $acc = v128.load ($o)
 *           for k < $n: $acc = f64x2.add($acc, f64x2.mul(f64x2.promote_low_f32x4(v128.load64_zero ($bk + $i)), $wk))
 *           v128.store ($o) $acc
 *           $o += 16;  $i += 8
 *           br_if 0 (i32.lt_u $i $rowBytes)
 *         end
 *         $rows += 4 * $n
 *         br_if 0 (local.tee $passes (i32.sub $passes 1))
 *       end
 *     end)
 */

const simd = {
  load: [SIMD, 0x00, 0x04, 0x00], // v128.load align=16 offset=0
  store: [SIMD, 0x0b, 0x04, 0x00], // v128.store align=16 offset=0
  load64Zero: [SIMD, 0x5d, 0x03, 0x00], // v128.load64_zero align=8 offset=0
  splatF64: [SIMD, 0x14],
  promoteLowF32: [SIMD, 0x5f],
  addF64: [SIMD, 0xf0, 0x01],
  mulF64: [SIMD, 0xf2, 0x01],
} as const;

// Parameters 0..5, then 7 i32 locals, then 5 v128 locals.
const ROWS = 0;
const PASSES = 1;
const VECTORS = 2;
const WEIGHTS = 3;
const ROW_BYTES = 4;
const OUT = 5;
const BASE = [6, 7, 8, 9];
const I = 10;
const O = 11;
const R = 12;
const WEIGHT = [13, 14, 15, 16];
const ACC = 17;

function body(rowsPerPass: number): number[] {
  const ks = Array.from({ length: rowsPerPass }, (_, k) => k);
  const rowSetup = (k: number) => [
    ...get(ROWS),
    op.i32Load,
    0x02,
    4 * k, // align=4 offset=4k
    ...set(R),
    ...get(VECTORS),
    ...get(R),
    ...get(ROW_BYTES),
    op.i32Mul,
    op.i32Add,
    ...set(BASE[k]!),
    ...get(WEIGHTS),
    ...get(R),
    ...i32(2),
    op.i32Shl,
    op.i32Add,
    op.f32Load,
    0x02,
    0x00,
    op.f64PromoteF32,
    ...simd.splatF64,
    ...set(WEIGHT[k]!),
  ];
  const term = (k: number) => [
    ...get(BASE[k]!),
    ...get(I),
    op.i32Add,
    ...simd.load64Zero,
    ...simd.promoteLowF32,
    ...get(WEIGHT[k]!),
    ...simd.mulF64,
    ...simd.addF64,
  ];
  return [
    ...locals([7, op.i32], [5, op.v128]),
    op.block,
    op.void,
    ...get(PASSES),
    op.i32Eqz,
    op.brIf,
    0,
    op.loop,
    op.void,
    ...ks.flatMap(rowSetup),
    ...i32(0),
    ...set(I),
    ...get(OUT),
    ...set(O),
    op.loop,
    op.void,
    ...get(O),
    ...simd.load,
    ...ks.flatMap(term),
    ...set(ACC),
    ...get(O),
    ...get(ACC),
    ...simd.store,
    ...get(O),
    ...i32(16),
    op.i32Add,
    ...set(O),
    ...get(I),
    ...i32(8),
    op.i32Add,
    ...tee(I),
    ...get(ROW_BYTES),
    op.i32LtU,
    op.brIf,
    0,
    op.end,
    ...get(ROWS),
    ...i32(4 * rowsPerPass),
    op.i32Add,
    ...set(ROWS),
    ...get(PASSES),
    ...i32(1),
    op.i32Sub,
    ...tee(PASSES),
    op.brIf,
    0,
    op.end,
    op.end,
    op.end,
  ];
}

/**
 * The kernel module's bytes: functions `sum4` and `sum1`, memory imported as env.memory, shared (so that
 * an embedding worker can sum over the same table, offThreadEmbedder.ts).
 */
export function weightedSumKernelBytes(): Uint8Array {
  const four = body(4);
  const one = body(1);
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(1, [0x01, 0x60, 0x06, ...new Array<number>(6).fill(op.i32), 0x00]),
    ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x03, 0x01, ...leb128(65_536)]),
    ...section(3, [0x02, 0x00, 0x00]),
    ...section(7, [0x02, ...name('sum4'), 0x00, 0x00, ...name('sum1'), 0x00, 0x01]),
    ...section(10, [0x02, ...leb128(four.length), ...four, ...leb128(one.length), ...one]),
  ]);
}

type SumFunction = (
  rows: number,
  passes: number,
  vectors: number,
  weights: number,
  rowBytes: number,
  out: number,
) => void;

/** Rows handed to the kernel at once (a multiple of 4, so passes of four rows stay where they were). */
const ROWS_AT_ONCE = 16_384;
/**
 * Threads that can sum over one table at once, each with its scratch area (its rows and its sum): the
 * thread that made it (area 0) and the embedding worker (area 1).
 */
export const SCRATCH_AREAS = 2;
const align16 = (n: number) => Math.ceil(n / 16) * 16;

/** Where the table's parts are in the memory (byte offsets). */
interface Layout {
  vectors: number;
  weights: number;
  /** The first scratch area; area k is at scratch + k * scratchBytes. */
  scratch: number;
  scratchBytes: number;
}

/**
 * What another thread needs to sum over the same table: the compiled module and the shared memory (both
 * can be posted to a worker; the memory's 140 MB are not copied), and where the table is.
 */
export interface SharedRowSums {
  module: object;
  memory: { buffer: SharedArrayBuffer };
  count: number;
  dimensions: number;
  layout: Layout;
}

/**
 * A table of row vectors and their weights in WebAssembly memory, and sums of weighted rows over it. The
 * caller fills `vectors` and `weights` (the offline model reads its cache file straight into `vectors`,
 * so the 140 MB table is never held twice). The memory is shared: `share()` hands the table to another
 * thread, which sums over it with a scratch area of its own (`attach`).
 */
export class WeightedRowSums {
  /** Row r's vector at r * dimensions; filled by the caller. */
  readonly vectors: Float32Array;
  /** Row r's weight; filled by the caller. */
  readonly weights: Float32Array;
  private readonly out: Float64Array;
  private readonly rowsIn: Int32Array;
  private readonly at: { out: number; rows: number };
  private readonly sum4: SumFunction;
  private readonly sum1: SumFunction;

  private constructor(
    private readonly shared: SharedRowSums,
    area: number,
  ) {
    const { memory, count, dimensions, layout } = shared;
    const { exports } = new wasm.Instance(shared.module, { env: { memory } });
    this.sum4 = exports.sum4 as SumFunction;
    this.sum1 = exports.sum1 as SumFunction;
    const { buffer } = memory;
    const scratch = layout.scratch + area * layout.scratchBytes;
    this.at = { out: scratch, rows: scratch + align16(dimensions * 8) };
    this.vectors = new Float32Array(buffer, layout.vectors, count * dimensions);
    this.weights = new Float32Array(buffer, layout.weights, count);
    this.out = new Float64Array(buffer, this.at.out, dimensions);
    this.rowsIn = new Int32Array(buffer, this.at.rows, ROWS_AT_ONCE);
  }

  /**
   * The kernel for a table of `count` rows (all zero until filled), or undefined where it cannot run: an
   * odd number of dimensions (it takes two at a time), a table too large for 32-bit memory, no
   * WebAssembly SIMD or shared memory.
   */
  static create(count: number, dimensions: number): WeightedRowSums | undefined {
    if (!Number.isInteger(count) || count < 0) return undefined;
    if (!Number.isInteger(dimensions) || dimensions <= 0 || dimensions % 2 !== 0) return undefined;
    const weights = align16(count * dimensions * 4);
    const scratch = align16(weights + count * 4);
    const scratchBytes = align16(dimensions * 8) + ROWS_AT_ONCE * 4;
    const layout: Layout = { vectors: 0, weights, scratch, scratchBytes };
    const pages = Math.ceil((scratch + SCRATCH_AREAS * scratchBytes) / PAGE);
    if (pages > 65_536) return undefined;
    try {
      // A fixed size: the memory never grows, so views of it stay valid.
      const memory = new wasm.Memory({ initial: pages, maximum: pages, shared: true });
      const module = new wasm.Module(weightedSumKernelBytes());
      return new WeightedRowSums({ module, memory, count, dimensions, layout }, 0);
    } catch {
      return undefined;
    }
  }

  /**
   * The same table, summed with scratch area `area` (1 up to SCRATCH_AREAS - 1; area 0 is the creating
   * thread's). Each thread sums with its own area only; the table must not change meanwhile.
   */
  static attach(shared: SharedRowSums, area: number): WeightedRowSums {
    if (!Number.isInteger(area) || area < 1 || area >= SCRATCH_AREAS)
      throw new RangeError(`Scratch area must be 1 to ${SCRATCH_AREAS - 1}, not ${area}.`);
    return new WeightedRowSums(shared, area);
  }

  /** What `attach` needs on another thread. */
  share(): SharedRowSums {
    return this.shared;
  }

  /**
   * The sum of the rows' weighted vectors, in float64: for each dimension the rows' terms added in row
   * order, four rows at a time as GloveSentenceModel's JavaScript sum does. A new array each call.
   */
  sum(rows: readonly number[]): Float64Array {
    const { out, rowsIn, at } = this;
    const { vectors, weights } = this.shared.layout;
    const rowBytes = this.shared.dimensions * 4;
    out.fill(0);
    let from = 0;
    for (; rows.length - from >= 4; from += ROWS_AT_ONCE) {
      const take = Math.min(ROWS_AT_ONCE, (rows.length - from) & ~3);
      for (let k = 0; k < take; k++) rowsIn[k] = rows[from + k]!;
      this.sum4(at.rows, take >> 2, vectors, weights, rowBytes, at.out);
      if (take < ROWS_AT_ONCE) {
        from += take;
        break;
      }
    }
    const tail = rows.length - from;
    for (let k = 0; k < tail; k++) rowsIn[k] = rows[from + k]!;
    this.sum1(at.rows, tail, vectors, weights, rowBytes, at.out);
    return out.slice();
  }
}
