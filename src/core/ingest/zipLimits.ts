import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import type { IngestLimits } from './limits';

const MB = 1024 * 1024;
const GB = 1024 * MB;

export interface ZipLimits {
  /** Entries in the archive, counting folders and OS litter. */
  maxEntries: number;
  /** Uncompressed size of one document file (spec §8: 50 MB per file). */
  maxFileBytes: number;
  /** Uncompressed size of one `.jsonl` file of pre-built embeddings (read as a stream, line by line). */
  maxEmbeddingsFileBytes: number;
  /** Uncompressed size of all files together. */
  maxTotalBytes: number;
  /** Size of the archive itself (spec §8: 10 GB per bulk archive). */
  maxArchiveBytes: number;
  /**
   * Uncompressed total over archive size. Text compresses 3-20×; deflate tops out near 1,032×. A higher
   * ratio is a zip bomb (a small upload that fills the disk) once the total passes `ratioFloorBytes`.
   */
  maxCompressionRatio: number;
  /** Below this uncompressed total, any ratio is fine (a tiny archive of a blank CSV is not a bomb). */
  ratioFloorBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 100_000,
  maxFileBytes: 50 * MB,
  maxEmbeddingsFileBytes: 10 * GB,
  maxTotalBytes: 10 * GB,
  maxArchiveBytes: 10 * GB,
  maxCompressionRatio: 100,
  ratioFloorBytes: 64 * MB,
};

/**
 * The archive limits an ingestion under `limits` applies: the archive's own size bounds its total, and
 * JSONL embeddings, which are streamed, may be as large; documents are parsed in memory, hence their limit.
 */
export const archiveLimitsFor = (limits: IngestLimits): Partial<ZipLimits> => ({
  maxArchiveBytes: limits.maxArchiveBytes,
  maxTotalBytes: limits.maxArchiveBytes,
  maxFileBytes: limits.maxFileBytes,
  maxEmbeddingsFileBytes: limits.maxArchiveBytes,
});

/** The most an archive of `archiveBytes` may inflate to under the ratio rule. */
export const ratioBudget = (archiveBytes: number, limits: ZipLimits): number =>
  Math.max(limits.ratioFloorBytes, archiveBytes * limits.maxCompressionRatio);

export function formatBytes(bytes: number): string {
  if (bytes >= GB) return `${trimZero(bytes / GB)} GB`;
  if (bytes >= MB) return `${trimZero(bytes / MB)} MB`;
  if (bytes >= 1024) return `${trimZero(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

const trimZero = (n: number): string => n.toFixed(1).replace(/\.0$/, '');

/**
 * A size refused against its limit, both as a message says them: rounded (formatBytes), unless they
 * would then read the same. A file of 50 MB and 10 bytes read "is 50 MB; the limit is 50 MB"; it is
 * now "is 52,428,810 bytes; the limit is 52,428,800 bytes (50 MB)".
 */
export function sizeAgainstLimit(bytes: number, limit: number): { size: string; limit: string } {
  const size = formatBytes(bytes);
  const rounded = formatBytes(limit);
  if (size !== rounded) return { size, limit: rounded };
  const exact = (n: number) => `${n.toLocaleString('en-US')} bytes`;
  return { size: exact(bytes), limit: `${exact(limit)} (${rounded})` };
}

/**
 * Passes an entry's inflated bytes through, counting them as they come (so a bomb stops after at most
 * one chunk past a limit, whatever its headers claim) and checking the CRC-32 that yauzl leaves unchecked.
 */
export class InflatedBytesMeter extends Transform {
  private crc = 0;
  bytes = 0;

  constructor(
    private readonly onBytes: (count: number) => void,
    private readonly expectedCrc: number,
    private readonly onCrcMismatch: () => Error,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.onBytes(chunk.length);
    } catch (err) {
      callback(err as Error);
      return;
    }
    this.bytes += chunk.length;
    this.crc = zlib.crc32(chunk, this.crc);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.crc >>> 0 === this.expectedCrc >>> 0 ? null : this.onCrcMismatch());
  }
}
