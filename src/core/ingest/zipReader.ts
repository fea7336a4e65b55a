import fs from 'node:fs';
import { Readable } from 'node:stream';
import yauzl, { type Options, type ZipFile } from 'yauzl';

const BLOCK_BYTES = 256 * 1024;

type ReadCallback = (err: Error | null, bytesRead?: number) => void;

/**
 * The archive file for yauzl. yauzl's own reader makes two fs.read calls per central-directory record,
 * which made listing 60,000 entries take seconds; while `readAhead` is on (listing the central directory,
 * which is read front to back) this one serves small reads from a 256 KB block. Entry data is streamed
 * straight from the file with positional reads, so entries can be read in parallel.
 */
class BlockFileReader extends yauzl.RandomAccessReader {
  readAhead = true;
  private block: { start: number; bytes: Buffer } | undefined;

  constructor(
    private readonly fd: number,
    private readonly fileSize: number,
  ) {
    super();
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: ReadCallback,
  ): void {
    const block = this.block;
    if (block && position >= block.start && position + length <= block.start + block.bytes.length) {
      block.bytes.copy(buffer, offset, position - block.start, position - block.start + length);
      process.nextTick(callback, null, length);
      return;
    }
    if (!this.readAhead || length >= BLOCK_BYTES) {
      fs.read(this.fd, buffer, offset, length, position, (err, bytesRead) => callback(err, bytesRead));
      return;
    }
    const bytes = Buffer.allocUnsafe(Math.min(BLOCK_BYTES, this.fileSize - position));
    fs.read(this.fd, bytes, 0, bytes.length, position, (err, bytesRead) => {
      if (err) return callback(err);
      this.block = { start: position, bytes: bytes.subarray(0, bytesRead) };
      const available = Math.max(0, Math.min(length, bytesRead));
      bytes.copy(buffer, offset, 0, available);
      callback(null, available);
    });
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return new RangeReadStream(this.fd, start, end);
  }

  override close(callback: (err: Error | null) => void): void {
    this.block = undefined;
    fs.close(this.fd, callback);
  }
}

/**
 * Bytes [start, end) of a shared descriptor, by positional reads. fs.ReadStream would do, except that
 * destroying one (as yauzl and pipeline do) closes the descriptor the other entries still read from.
 */
class RangeReadStream extends Readable {
  private position: number;

  constructor(
    private readonly fd: number,
    start: number,
    private readonly end: number,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.position = start;
  }

  override _read(size: number): void {
    const length = Math.min(size, this.end - this.position);
    if (length <= 0) {
      this.push(null);
      return;
    }
    const buffer = Buffer.allocUnsafe(length);
    fs.read(this.fd, buffer, 0, length, this.position, (err, bytesRead) => {
      if (err) return this.destroy(err);
      this.position += bytesRead;
      // A short file ends the stream early; yauzl then reports the missing bytes.
      this.push(bytesRead === 0 ? null : buffer.subarray(0, bytesRead));
    });
  }
}

export interface OpenedZip {
  zipfile: ZipFile;
  /** Call once the central directory has been listed: later reads jump around the file. */
  endListing(): void;
}

/** Opens an archive for yauzl with the block reader; the file is closed by zipfile.close(). */
export async function openZipFile(zipPath: string, options: Options): Promise<OpenedZip> {
  // A plain descriptor, not a FileHandle: a FileHandle would close it when garbage-collected.
  const fd = await new Promise<number>((resolve, reject) =>
    fs.open(zipPath, 'r', (err, opened) => (err ? reject(err) : resolve(opened))),
  );
  const size = await new Promise<number>((resolve, reject) =>
    fs.fstat(fd, (err, stats) => (err ? fs.close(fd, () => reject(err)) : resolve(stats.size))),
  );
  const reader = new BlockFileReader(fd, size);
  return new Promise((resolve, reject) => {
    yauzl.fromRandomAccessReader(reader, size, options, (err, zipfile) => {
      if (!err) return resolve({ zipfile, endListing: () => (reader.readAhead = false) });
      fs.close(fd, () => reject(err));
    });
  });
}
