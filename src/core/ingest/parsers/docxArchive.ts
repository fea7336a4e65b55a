import { Readable } from 'node:stream';
import { inflateRawSync } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { EncryptedDocument, InvalidDocument } from '../errors';

/** Bounds a DOCX's ZIP must stay within before mammoth, which inflates parts whole in memory, reads it. */
export interface DocxArchiveLimits {
  /** Sum of the entries' uncompressed sizes. */
  maxUncompressedBytes: number;
  maxEntries: number;
  /** Uncompressed / compressed size of one entry, checked for entries over 1 MiB. */
  maxCompressionRatio: number;
}

export const DEFAULT_DOCX_LIMITS: DocxArchiveLimits = {
  maxUncompressedBytes: 512 * 2 ** 20,
  maxEntries: 10_000,
  maxCompressionRatio: 200,
};

// Small parts (styles, settings) can compress at any ratio without being a danger.
const RATIO_FLOOR_BYTES = 2 ** 20;
const OLE_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const XML_PART = /\.(xml|rels)$/i;
/**
 * Deflated parts up to this size are inflated at once (zlib, synchronously, the output capped at the
 * declared size): a styles part of 200 KB takes well under a millisecond, where a stream took dozens of
 * event-loop turns. Larger parts are streamed, so the thread is never held long.
 */
const SYNC_INFLATE_MAX_BYTES = 2 ** 20;
const DEFLATE = 8;

export interface DocxProperties {
  title?: string;
  author?: string;
}

/**
 * Checks the archive before it is parsed: the central directory's declared sizes, entry count and
 * compression ratios, encryption; then inflates every XML part (at once up to 1 MB, as a stream above), so
 * a part whose data is larger than its header declares is caught before mammoth inflates it whole.
 * Returns the title and author from docProps/core.xml.
 */
export async function screenDocxArchive(
  bytes: Uint8Array,
  source: string,
  limits: DocxArchiveLimits = DEFAULT_DOCX_LIMITS,
): Promise<DocxProperties> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.subarray(0, OLE_SIGNATURE.length).equals(OLE_SIGNATURE))
    throw compoundFileRefusal(buffer, source);
  let zip: ZipFile;
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new BufferReader(buffer), buffer.length, {
      lazyEntries: true,
      validateEntrySizes: true,
      // As yauzl's fromBuffer: parts are read after the last entry is listed; closed below.
      autoClose: false,
    });
  } catch (error) {
    throw new InvalidDocument(
      source,
      `not a valid .docx file: it is not a readable ZIP archive (${messageOf(error)}).`,
    );
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new InvalidDocument(
        source,
        `the .docx archive has ${zip.entryCount} entries, more than the ${limits.maxEntries} allowed.`,
      );
    }
    const parts = await screenEntries(zip, source, limits);
    let properties: DocxProperties = {};
    for (const entry of parts) {
      const keep = entry.fileName === 'docProps/core.xml';
      const data = await inflate(zip, buffer, entry, keep).catch((error: unknown) => {
        throw new InvalidDocument(
          source,
          `the .docx archive is damaged: ${entry.fileName}: ${messageOf(error)}.`,
        );
      });
      if (keep) properties = coreProperties(data.toString('utf8'));
    }
    return properties;
  } finally {
    zip.close();
  }
}

async function screenEntries(zip: ZipFile, source: string, limits: DocxArchiveLimits): Promise<Entry[]> {
  const parts: Entry[] = [];
  let total = 0;
  let listed = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      listed++;
      if (entry.isEncrypted()) throw new EncryptedDocument(source);
      total += entry.uncompressedSize;
      if (total > limits.maxUncompressedBytes) {
        throw new InvalidDocument(
          source,
          `the .docx archive would unpack to more than ${megabytes(limits.maxUncompressedBytes)} (a ZIP bomb?); it was not read.`,
        );
      }
      const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
      if (entry.uncompressedSize > RATIO_FLOOR_BYTES && ratio > limits.maxCompressionRatio) {
        throw new InvalidDocument(
          source,
          `the .docx entry ${entry.fileName} is compressed ${Math.round(ratio)}:1, more than the ${limits.maxCompressionRatio}:1 allowed (a ZIP bomb?); it was not read.`,
        );
      }
      if (XML_PART.test(entry.fileName)) parts.push(entry);
      // yauzl announces the end of the list an event-loop turn later: not waited for.
      if (listed === zip.entryCount) break;
    }
  } catch (error) {
    if (error instanceof EncryptedDocument || error instanceof InvalidDocument) throw error;
    throw new InvalidDocument(source, `the .docx archive is damaged (${messageOf(error)}).`);
  }
  return parts;
}

async function inflate(zip: ZipFile, archive: Buffer, entry: Entry, keep: boolean): Promise<Buffer> {
  if (entry.compressionMethod === DEFLATE && entry.uncompressedSize <= SYNC_INFLATE_MAX_BYTES)
    return inflateAtOnce(zip, archive, entry);
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.openReadStreamPromise(entry)) {
    if (keep) chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A deflated part inflated in one call, refused when its data does not inflate to the declared size. */
async function inflateAtOnce(zip: ZipFile, archive: Buffer, entry: Entry): Promise<Buffer> {
  const { fileDataStart } = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
  const end = fileDataStart + entry.compressedSize;
  if (end > archive.length) throw new Error('its data runs past the end of the archive');
  const declared = entry.uncompressedSize;
  let data: Buffer;
  try {
    // One byte more than declared may come out, so a part that inflates to more is caught without
    // inflating the rest of it.
    data = inflateRawSync(archive.subarray(fileDataStart, end), { maxOutputLength: declared + 1 });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(declared);
    throw error;
  }
  if (data.length > declared) throw tooLarge(declared);
  if (data.length < declared)
    throw new Error(`it inflates to ${data.length} bytes, fewer than the ${declared} its header declares`);
  return data;
}

const tooLarge = (declared: number) =>
  new Error(`it inflates to more than the ${declared} bytes its header declares`);

/**
 * The archive in memory, read by yauzl. Unlike yauzl's own buffer reader, a read answers in a microtask,
 * not a macrotask: the screen of a file read ahead of its turn then finishes while this thread works on
 * earlier files, instead of advancing one step per event-loop turn between them (700 ms a file, in a
 * 10 MB mixed ingestion, before mammoth could start).
 */
class BufferReader extends yauzl.RandomAccessReader {
  constructor(private readonly source: Buffer) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return Readable.from([this.source.subarray(start, end)], { objectMode: false });
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null, bytesRead?: number) => void,
  ): void {
    // As fs.read (and yauzl's buffer reader): a read past either end is cut short, not an error.
    const count = Math.max(0, Math.min(length, buffer.length - offset, this.source.length - position));
    if (count > 0) this.source.copy(buffer, offset, position, position + count);
    queueMicrotask(() => callback(null, count));
  }
}

/** A Word file that is not a ZIP: an encrypted OOXML package, or a Word 97-2003 .doc renamed. */
function compoundFileRefusal(buffer: Buffer, source: string): Error {
  if (buffer.includes(Buffer.from('EncryptedPackage', 'utf16le'))) return new EncryptedDocument(source);
  return new InvalidDocument(
    source,
    'this is a Word 97-2003 (.doc) file, not .docx. Save it as .docx and upload it again.',
  );
}

function coreProperties(xml: string): DocxProperties {
  const properties: DocxProperties = {};
  const title = xmlElementText(xml, 'dc:title');
  const author = xmlElementText(xml, 'dc:creator');
  if (title) properties.title = title;
  if (author) properties.author = author;
  return properties;
}

function xmlElementText(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml);
  return match?.[1] ? decodeXmlEntities(match[1]).trim() || undefined : undefined;
}

function decodeXmlEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (entity, code: string) => {
    if (code[0] !== '#') return named[code] ?? entity;
    const point =
      code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
    return point <= 0x10ffff ? String.fromCodePoint(point) : entity;
  });
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MB`;
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
}
