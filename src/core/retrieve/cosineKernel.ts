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
  tee,
  wasm,
} from '../wasm/moduleBytes';

/**
 * The cosine distances of a batch of candidate vectors to one query, for rescoring (src/db/vectorFile.ts),
 * in WebAssembly: the same float32 operations in the same order as sqlite-vec's `vec_distance_cosine`
 * (cosineDistance.ts; WebAssembly rounds every f32.mul and f32.add and never fuses them), so the
 * distances are bit-identical to the SQL ones. One element at a time leaves each candidate's sums a chain
 * of dependent additions, so four candidates are summed side by side: their chains overlap.
 * In JavaScript the same sums took 2.6 µs a 1,024-dimension vector (Math.fround at every step); here
 * about a fifth of that (docs/performance.md, "Dense retrieval at scale", thirteenth pass).
 *
 * The module is encoded byte by byte, as hammingKernel.ts's is. Its function, in WAT:
 *
 *   (func $parts (param $query i32) (param $vectors i32) (param $groups i32) (param $bytes i32) (param $out i32)
 *     (local $i i32) (local $p1 $p2 $p3 i32) (local $d0 … $d3 f32) (local $s0 … $s3 f32) (local $x $y f32)
 *     block  (br_if 0 (i32.eqz $groups))
 *       loop                                 ;; four candidates, one after the other in $vectors
 *         $p1 = $vectors + $bytes;  $p2 = $p1 + $bytes;  $p3 = $p2 + $bytes
 *         $d0 … $s3 = 0;  $i = 0
 *         loop                               ;; one element
 *           $x = f32.load ($query + $i)
 *           for k < 4: $y = f32.load ($pk + $i)        ($p0 is $vectors)
 *                      $dk = $dk + $x * $y;  $sk = $sk + $y * $y
 *           $i += 4
 *           br_if 0 (i32.lt_u $i $bytes)
 *         end
 *         f32.store offset=4k ($out) $dk;  f32.store offset=16+4k ($out) $sk
 *         $out += 32;  $vectors += 4 * $bytes
 *         br_if 0 (local.tee $groups (i32.sub $groups 1))
 *       end
 *     end)
 */

const f32 = {
  type: 0x7d,
  load: [0x2a, 0x02, 0x00], // f32.load align=4 offset=0
  store: (offset: number) => [0x38, 0x02, ...leb128(offset)], // f32.store align=4
  zero: [0x43, 0x00, 0x00, 0x00, 0x00], // f32.const 0
  add: 0x92,
  mul: 0x94,
} as const;

// Parameters 0..4, then 4 i32 locals, then 10 f32 locals.
const QUERY = 0;
const VECTORS = 1;
const GROUPS = 2;
const BYTES = 3;
const OUT = 4;
const I = 5;
const P = [VECTORS, 6, 7, 8];
const DOT = [9, 10, 11, 12];
const SQUARES = [13, 14, 15, 16];
const X = 17;
const Y = 18;

function body(): number[] {
  const ks = [0, 1, 2, 3];
  const element = (k: number) => [
    ...get(P[k]!),
    ...get(I),
    op.i32Add,
    ...f32.load,
    ...set(Y),
    ...get(DOT[k]!),
    ...get(X),
    ...get(Y),
    f32.mul,
    f32.add,
    ...set(DOT[k]!),
    ...get(SQUARES[k]!),
    ...get(Y),
    ...get(Y),
    f32.mul,
    f32.add,
    ...set(SQUARES[k]!),
  ];
  const store = (k: number) => [
    ...get(OUT),
    ...get(DOT[k]!),
    ...f32.store(4 * k),
    ...get(OUT),
    ...get(SQUARES[k]!),
    ...f32.store(16 + 4 * k),
  ];
  return [
    ...locals([4, op.i32], [10, f32.type]),
    op.block,
    op.void,
    ...get(GROUPS),
    op.i32Eqz,
    op.brIf,
    0,
    op.loop,
    op.void,
    ...ks.slice(1).flatMap((k) => [...get(P[k - 1]!), ...get(BYTES), op.i32Add, ...set(P[k]!)]),
    ...ks.flatMap((k) => [...f32.zero, ...set(DOT[k]!), ...f32.zero, ...set(SQUARES[k]!)]),
    ...i32(0),
    ...set(I),
    op.loop,
    op.void,
    ...get(QUERY),
    ...get(I),
    op.i32Add,
    ...f32.load,
    ...set(X),
    ...ks.flatMap(element),
    ...get(I),
    ...i32(4),
    op.i32Add,
    ...tee(I),
    ...get(BYTES),
    op.i32LtU,
    op.brIf,
    0,
    op.end,
    ...ks.flatMap(store),
    ...get(OUT),
    ...i32(32),
    op.i32Add,
    ...set(OUT),
    ...get(P[3]!),
    ...get(BYTES),
    op.i32Add,
    ...set(VECTORS),
    ...get(GROUPS),
    ...i32(1),
    op.i32Sub,
    ...tee(GROUPS),
    op.brIf,
    0,
    op.end,
    op.end,
    op.end,
  ];
}

/** The kernel module's bytes: function `parts`, memory imported as env.memory. */
export function cosineKernelBytes(): Uint8Array {
  const code = body();
  return new Uint8Array([
    ...MODULE_HEADER,
    ...section(1, [0x01, 0x60, 0x05, ...new Array<number>(5).fill(op.i32), 0x00]),
    ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, 0x01]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, ...name('parts'), 0x00, 0x00]),
    ...section(10, [0x01, ...leb128(code.length), ...code]),
  ]);
}

type PartsFunction = (query: number, vectors: number, groups: number, bytes: number, out: number) => void;

let compiled: object | undefined;
const kernelModule = () => (compiled ??= new wasm.Module(cosineKernelBytes()));

/**
 * Room for `size` candidate vectors of `dimensions` float32 and the query, in WebAssembly memory: the
 * caller reads candidates straight into `slot(k)`, then asks their distances.
 */
export class CosineBatch {
  private readonly bytes: Uint8Array;
  private readonly query: Float32Array;
  private readonly parts: Float32Array;
  private readonly run: PartsFunction;
  private readonly at: { vectors: number; out: number };
  /** The query's sum of squares (float32, as sqlite-vec sums it), for the query set last. */
  private querySquares = 0;

  private constructor(
    readonly dimensions: number,
    /** Candidates a batch holds (a multiple of 4). */
    readonly size: number,
  ) {
    const vectorBytes = dimensions * 4;
    this.at = { vectors: vectorBytes, out: vectorBytes * (size + 1) };
    const pages = Math.ceil((this.at.out + size * 8) / PAGE);
    const memory = new wasm.Memory({ initial: pages, maximum: pages });
    this.run = new wasm.Instance(kernelModule(), { env: { memory } }).exports.parts as PartsFunction;
    this.bytes = new Uint8Array(memory.buffer);
    this.query = new Float32Array(memory.buffer, 0, dimensions);
    this.parts = new Float32Array(memory.buffer, this.at.out, size * 2);
  }

  /**
   * A batch for vectors of `dimensions`, holding `size` of them (rounded up to a multiple of 4); undefined
   * where WebAssembly cannot run it (the caller computes cosineDistance in JavaScript instead).
   */
  static create(dimensions: number, size: number): CosineBatch | undefined {
    if (!Number.isInteger(dimensions) || dimensions <= 0 || !Number.isInteger(size) || size <= 0) {
      return undefined;
    }
    try {
      return new CosineBatch(dimensions, Math.ceil(size / 4) * 4);
    } catch {
      return undefined;
    }
  }

  /** Sets the query the next distances are to. */
  setQuery(vector: Float32Array): void {
    if (vector.length !== this.dimensions) {
      throw new RangeError(`The query has ${vector.length} dimensions, not ${this.dimensions}.`);
    }
    this.query.set(vector);
    let squares = 0;
    for (let i = 0; i < vector.length; i++)
      squares = Math.fround(squares + Math.fround(vector[i]! * vector[i]!));
    this.querySquares = squares;
  }

  /** Where candidate k's bytes go (a view of the memory: read the vector straight into it). */
  slot(k: number): Uint8Array {
    const vectorBytes = this.dimensions * 4;
    const start = this.at.vectors + k * vectorBytes;
    return this.bytes.subarray(start, start + vectorBytes);
  }

  /**
   * The distances of candidates 0..count-1 to the query into `out` (cosineDistance's values: NaN for a
   * zero vector).
   */
  distances(count: number, out: Float64Array): void {
    if (count > this.size) throw new RangeError(`A batch holds ${this.size} vectors, not ${count}.`);
    const groups = Math.ceil(count / 4);
    // The slots past `count` in the last group hold what was read there before: summed, never used.
    this.run(0, this.at.vectors, groups, this.dimensions * 4, this.at.out);
    const queryNorm = Math.sqrt(this.querySquares);
    for (let k = 0; k < count; k++) {
      const group = k >> 2;
      const lane = k & 3;
      const dot = this.parts[group * 8 + lane]!;
      const squares = this.parts[group * 8 + 4 + lane]!;
      out[k] = Math.fround(1 - dot / (queryNorm * Math.sqrt(squares)));
    }
  }
}
