/**
 * What the hand-encoded WebAssembly kernels (retrieve/hammingKernel.ts, embed/weightedSumKernel.ts) share:
 * the binary format's integers and sections, and the part of the WebAssembly API they use.
 */

/** The prefix of the SIMD instructions. */
export const SIMD = 0xfd;

/** The opcodes the kernels use (void, i32 and v128 are the block and value types). */
export const op = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  brIf: 0x0d,
  select: 0x1b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  f32Load: 0x2a,
  i32Load16U: 0x2f,
  i32Store: 0x36,
  i32Store16: 0x3b,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32LtU: 0x49,
  i32GtU: 0x4b,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32Shl: 0x74,
  f64PromoteF32: 0xbb,
  void: 0x40,
  v128: 0x7b,
  i32: 0x7f,
} as const;

/** The module header: magic and version 1. */
export const MODULE_HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00] as const;

/** An unsigned LEB128 integer. */
export function leb128(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** A signed LEB128 integer (the immediate of i32.const). */
export function sleb128(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** A section: its id, its size, its content. */
export const section = (id: number, content: number[]) => [id, ...leb128(content.length), ...content];

/** local.get, local.set and local.tee of local `i` (the kernels' locals are numbered under 128). */
export const get = (i: number) => [op.localGet, i];
export const set = (i: number) => [op.localSet, i];
export const tee = (i: number) => [op.localTee, i];
/** i32.const n. */
export const i32Const = (n: number) => [op.i32Const, ...sleb128(n)];
/** A function's local declarations: runs of [count, type]. */
export const locals = (...runs: [number, number][]) => [runs.length, ...runs.flat()];

/** A name (ASCII), as imports and exports spell it. */
export const name = (text: string) => [text.length, ...Array.from(text, (c) => c.charCodeAt(0))];

/** The part of the WebAssembly API used here (the Node typings of this project do not declare it). */
export interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: {
    new (descriptor: { initial: number; maximum: number; shared: true }): { buffer: SharedArrayBuffer };
    new (descriptor: { initial: number; maximum: number }): { buffer: ArrayBuffer };
  };
}

export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The size of a WebAssembly memory page. */
export const PAGE = 65_536;
