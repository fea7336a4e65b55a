import { EmbeddingModelUnavailable } from '../errors';

/**
 * A provider's vector as a unit-length Float32Array, or an `EmbeddingModelUnavailable` saying what is
 * wrong with it. Accepts a JSON number array, or a base64 string of little-endian float32 values (what
 * OpenAI-compatible servers send for `encoding_format: 'base64'`, which some send regardless).
 */
export function unitVector(model: string, value: unknown, dimensions: number, what: string): Float32Array {
  const vector = typeof value === 'string' ? decodeBase64Floats(value) : numbers(value);
  if (!vector) throw new EmbeddingModelUnavailable(model, `${what} is not a list of numbers.`);
  if (vector.length !== dimensions) {
    throw new EmbeddingModelUnavailable(
      model,
      `${what} has ${vector.length} dimensions, but the model has ${dimensions}.`,
    );
  }
  return normalizeInPlace(vector);
}

/** Scales to unit length unless already there (hosted models' vectors usually are) or zero. */
export function normalizeInPlace(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  if (sum > 0 && Math.abs(sum - 1) > 1e-6) {
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i]! *= scale;
  }
  return vector;
}

function numbers(value: unknown): Float32Array | undefined {
  if (!Array.isArray(value)) return undefined;
  const vector = new Float32Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const x = value[i] as unknown;
    if (typeof x !== 'number' || !Number.isFinite(x)) return undefined;
    vector[i] = x;
  }
  return vector;
}

function decodeBase64Floats(text: string): Float32Array | undefined {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) return undefined;
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector.every(Number.isFinite) ? vector : undefined;
}

/**
 * Embeds the texts that have something to embed and gives blank ones the zero vector, which the
 * `Embedder` contract allows for a text a model has nothing to say about: the hosted APIs reject an
 * empty input outright, and one empty chunk must not fail a whole upload.
 */
export async function embedNonBlank(
  texts: string[],
  dimensions: number,
  embed: (texts: string[], positions: number[]) => Promise<Float32Array[]>,
): Promise<Float32Array[]> {
  const out = new Array<Float32Array>(texts.length);
  const positions: number[] = [];
  texts.forEach((text, i) => {
    if (text.trim() === '') out[i] = new Float32Array(dimensions);
    else positions.push(i);
  });
  if (positions.length > 0) {
    const vectors = await embed(
      positions.map((i) => texts[i]!),
      positions,
    );
    positions.forEach((at, j) => (out[at] = vectors[j]!));
  }
  return out;
}

/** The start of a text, for error messages that must name it without quoting a whole chunk. */
export function preview(text: string, length = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}
