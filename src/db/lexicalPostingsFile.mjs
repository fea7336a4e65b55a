// The full-text postings saved to disk (lexicalIndexWorker.mjs writes and reads them), so a server started
// again has them in a fraction of a second instead of reading FTS5's whole index again (8-11 s at
// 500,000 chunks). A cache only: FTS5 stays the record, and a file that is missing, cut short, altered or
// of another tokenizer is not used.
//
// Layout: "KBSPOSTS", the header's length (uint32, little-endian), the SHA-256 of the header and the
// arrays (32 bytes), the header (JSON: format version, the state's key, tokenizer, index totals, listings,
// document ids, each array's name, type and length), then each array's bytes in the machine's byte order,
// the header and every array starting at a multiple of 8 bytes.
// Plain JavaScript that imports only Node's modules, so it runs as it is beside any bundle.
import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statfsSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { threadId } from 'node:worker_threads';

const MAGIC = 'KBSPOSTS';
const VERSION = 1;
const TYPES = { Float64Array, Uint32Array, Uint16Array, Uint8Array };
/** The arrays a file holds, in order: the postings' (shared memory) then the documents' (handed over). */
const POSTINGS_ARRAYS = [
  'ids',
  'lengths',
  'listingOf',
  'termBytes',
  'termOffsets',
  'starts',
  'positions',
  'counts',
];
const DOCUMENT_ARRAYS = ['first', 'last', 'counts'];

/** The magic, the header's length and the digest. */
const PREFIX = 8 + 4 + 32;

const padded = (bytes) => Math.ceil(bytes / 8) * 8;
const bytesOf = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** The file's partial copy while one thread of this process writes it. */
const partialPath = (path) => `${path}.${process.pid}-${threadId}.tmp`;

/**
 * Writes `built` ({ key, data, documents }) to `path`: whole into a partial file beside it, synced, then
 * renamed over it, so the name never shows a partial file. Throws when it cannot; nothing is left behind.
 * Leaves at least `spareBytes` free on the disk.
 */
export function writePostingsFile(path, built, tokenize, spareBytes) {
  const { key, data, documents } = built;
  const arrays = [
    ...POSTINGS_ARRAYS.map((name) => [name, data[name]]),
    ...DOCUMENT_ARRAYS.map((name) => [`documents.${name}`, documents[name]]),
  ];
  const header = Buffer.from(
    JSON.stringify({
      version: VERSION,
      key,
      tokenize,
      indexRows: data.indexRows,
      indexTokens: data.indexTokens,
      listings: data.listings,
      documentIds: documents.ids,
      arrays: arrays.map(([name, array]) => ({ name, type: array.constructor.name, length: array.length })),
    }),
  );
  const hash = createHash('sha256').update(header);
  for (const [, array] of arrays) hash.update(bytesOf(array));
  const headerEnd = padded(PREFIX + header.length);
  const total = arrays.reduce((sum, [, array]) => sum + padded(array.byteLength), headerEnd);
  mkdirSync(dirname(path), { recursive: true });
  const disk = statfsSync(dirname(path));
  const free = disk.bavail * disk.bsize;
  if (free - total < spareBytes) {
    throw new Error(
      `not saved: ${Math.round(total / 2 ** 20)} MB would leave under ${Math.round(spareBytes / 2 ** 20)} MB free`,
    );
  }
  const partial = partialPath(path);
  const fd = openSync(partial, 'w');
  try {
    const start = Buffer.alloc(headerEnd);
    start.write(MAGIC, 0, 'latin1');
    start.writeUInt32LE(header.length, 8);
    hash.digest().copy(start, 12);
    header.copy(start, PREFIX);
    writeAll(fd, start);
    const zeros = new Uint8Array(8);
    for (const [, array] of arrays) {
      writeAll(fd, bytesOf(array));
      writeAll(fd, zeros.subarray(0, padded(array.byteLength) - array.byteLength));
    }
    fsyncSync(fd);
    closeSync(fd);
    renameSync(partial, path);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
    rmSync(partial, { force: true });
    throw err;
  }
}

function writeAll(fd, bytes) {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
}

/**
 * The postings saved at `path` ({ key, data, documents }, the data's arrays in shared memory), or
 * undefined when there is no file; throws, saying why, for a file that cannot be used.
 */
export function readPostingsFile(path, tokenize) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Buffer.alloc(PREFIX);
    if (readSync(fd, start, 0, PREFIX, 0) !== PREFIX || start.toString('latin1', 0, 8) !== MAGIC) {
      throw new Error('not a postings file');
    }
    const headerLength = start.readUInt32LE(8);
    if (PREFIX + headerLength > size) throw new Error('its header is cut short');
    const headerBytes = Buffer.alloc(headerLength);
    readFully(fd, headerBytes, PREFIX);
    const header = JSON.parse(headerBytes.toString('utf8'));
    if (header.version !== VERSION) throw new Error(`format version ${header.version}, not ${VERSION}`);
    if (header.tokenize !== tokenize) {
      throw new Error(`saved for the tokenizer '${header.tokenize}', not '${tokenize}'`);
    }
    const names = [...POSTINGS_ARRAYS, ...DOCUMENT_ARRAYS.map((name) => `documents.${name}`)];
    if (
      !Array.isArray(header.arrays) ||
      header.arrays.length !== names.length ||
      header.arrays.some(
        (a, i) =>
          a.name !== names[i] ||
          !Object.hasOwn(TYPES, a.type) ||
          !Number.isSafeInteger(a.length) ||
          a.length < 0,
      )
    ) {
      throw new Error('its arrays are not those of the postings');
    }
    let at = padded(PREFIX + headerLength);
    const expected = header.arrays.reduce(
      (sum, a) => sum + padded(a.length * TYPES[a.type].BYTES_PER_ELEMENT),
      at,
    );
    if (expected !== size) throw new Error(`${size} bytes where its header describes ${expected}`);
    const hash = createHash('sha256').update(headerBytes);
    const arrays = {};
    for (const { name, type, length } of header.arrays) {
      const Type = TYPES[type];
      // The postings' arrays go to shared memory, as a read of the index puts them (the lexical thread
      // searches them too); the documents' are handed over.
      const buffer = name.startsWith('documents.')
        ? new ArrayBuffer(length * Type.BYTES_PER_ELEMENT)
        : new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT);
      const array = new Type(buffer);
      readFully(fd, bytesOf(array), at);
      hash.update(bytesOf(array));
      arrays[name] = array;
      at += padded(array.byteLength);
    }
    if (!hash.digest().equals(start.subarray(12, PREFIX))) {
      throw new Error('its bytes do not match their checksum');
    }
    const data = {
      indexRows: header.indexRows,
      indexTokens: header.indexTokens,
      listings: header.listings,
      ...Object.fromEntries(POSTINGS_ARRAYS.map((name) => [name, arrays[name]])),
    };
    const documents = {
      ids: header.documentIds,
      ...Object.fromEntries(DOCUMENT_ARRAYS.map((name) => [name, arrays[`documents.${name}`]])),
    };
    const rows = data.ids.length;
    const terms = data.starts.length - 1;
    if (
      data.lengths.length !== rows ||
      data.listingOf.length !== rows ||
      data.termOffsets.length !== terms + 1 ||
      data.starts[terms] !== data.positions.length ||
      data.counts.length !== data.positions.length ||
      !Array.isArray(documents.ids) ||
      DOCUMENT_ARRAYS.some((name) => documents[name].length !== documents.ids.length)
    ) {
      throw new Error('its arrays do not fit together');
    }
    return { key: header.key, data, documents };
  } finally {
    closeSync(fd);
  }
}

function readFully(fd, bytes, position) {
  for (let at = 0; at < bytes.length;) {
    const read = readSync(fd, bytes, at, bytes.length - at, position + at);
    if (read === 0) throw new Error('it is cut short');
    at += read;
  }
}
