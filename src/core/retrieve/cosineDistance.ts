/**
 * sqlite-vec's `vec_distance_cosine` of two float32 vectors, to the bit: its npm build sums in float32,
 * one element at a time (dot product and both squared norms), then returns `1 - dot / (√a · √b)` rounded to
 * float32. Products of two float32 values are exact in a double, so rounding each product and each sum with
 * Math.fround gives the same float32 steps. NaN (a zero vector) is what SQLite turns into NULL.
 *
 * Rescoring from the vectors file (src/db/vectorFile.ts) computes this rather than asking SQLite, and must
 * return the same scores as the exact path so that both rank ties alike.
 */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let aSquares = 0;
  let bSquares = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot = Math.fround(dot + Math.fround(x * y));
    aSquares = Math.fround(aSquares + Math.fround(x * x));
    bSquares = Math.fround(bSquares + Math.fround(y * y));
  }
  return Math.fround(1 - dot / (Math.sqrt(aSquares) * Math.sqrt(bSquares)));
}
