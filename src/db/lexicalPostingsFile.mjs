// The full-text postings saved to disk (lexicalIndexWorker.mjs writes and reads them), so a server started
// again has them in a fraction of a second instead of reading FTS5's whole index again (8-11 s at
// 500,000 chunks). A cache only: FTS5 stays the record, and a file that is missing, cut short, altered or
// of another tokenizer is not used.
//
// Layout: "KBSPOSTS", the header's length (uint32, little-endian), the CRC-32 of the header and the
// arrays (uint32, little-endian, then 28 zero bytes: version 1 held a SHA-256 there), the header (JSON: format version, the state's key, tokenizer, index totals, listings,
// document ids, each array's name, type and length), then each array's bytes in the machine's byte order,
// the header and every array starting at a multiple of 8 bytes.
// Plain JavaScript that imports only Node's modules, so it runs as it is beside any bundle.
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statfsSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { threadId } from 'node:worker_threads';
import { crc32 } from 'node:zlib';

const MAGIC = 'KBSPOSTS';
// 2: a CRC-32 where version 1 had a SHA-256 (32 ms against 90 ms over 160 MB: the file guards against a
// damaged or cut copy, not against someone forging one).
const VERSION = 2;
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

/** The magic, the header's length and the checksum's 32 bytes. */
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
  let checksum = crc32(header);
  for (const [, array] of arrays) checksum = crc32(bytesOf(array), checksum);
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
    start.writeUInt32LE(checksum, 12);
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
 * Starts reading the postings saved at `path`: resolves once the arrays' reads are under way, on libuv's
 * threads, several at once, with `postings`: a promise of `{ key, data, documents }` (the data's arrays in
 * shared memory) that rejects, saying why, for arrays that cannot be used. The caller's thread is free
 * meanwhile (the worker reads the database's state then). Undefined when there is no file; rejects, saying
 * why, for a file whose header cannot be used.
 */
export async function startReadingPostingsFile(path, tokenize) {
  let file;
  try {
    file = await open(path, 'r');
  } catch (err) {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  }
  let reading;
  try {
    const { size } = await file.stat();
    const start = Buffer.alloc(PREFIX);
    if (
      (await file.read(start, 0, PREFIX, 0)).bytesRead !== PREFIX ||
      start.toString('latin1', 0, 8) !== MAGIC
    ) {
      throw new Error('not a postings file');
    }
    const headerLength = start.readUInt32LE(8);
    if (PREFIX + headerLength > size) throw new Error('its header is cut short');
    const headerBytes = Buffer.alloc(headerLength);
    await readFully(file, headerBytes, PREFIX);
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
    const arrays = {};
    const reads = [];
    for (const { name, type, length } of header.arrays) {
      const Type = TYPES[type];
      // The postings' arrays go to shared memory, as a read of the index puts them (the lexical thread
      // searches them too); the documents' are handed over.
      const buffer = name.startsWith('documents.')
        ? new ArrayBuffer(length * Type.BYTES_PER_ELEMENT)
        : new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT);
      const array = new Type(buffer);
      reads.push(readFully(file, bytesOf(array), at));
      arrays[name] = array;
      at += padded(array.byteLength);
    }
    reading = Promise.all(reads).then(() => checkedPostings(header, headerBytes, start, arrays));
    const postings = reading.finally(() => file.close());
    return { postings };
  } finally {
    // The header could not be used: nothing more is read.
    if (!reading) await file.close();
  }
}

/** The arrays read, as postings, once their checksum and shapes are those of the header. */
function checkedPostings(header, headerBytes, start, arrays) {
  let checksum = crc32(headerBytes);
  for (const { name } of header.arrays) checksum = crc32(bytesOf(arrays[name]), checksum);
  if (checksum !== start.readUInt32LE(12)) {
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
}

async function readFully(file, bytes, position) {
  for (let at = 0; at < bytes.length;) {
    const { bytesRead } = await file.read(bytes, at, bytes.length - at, position + at);
    if (bytesRead === 0) throw new Error('it is cut short');
    at += bytesRead;
  }
}
