import type { WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { isOsLitter } from '../../shared/osLitter';
import { DomainError } from '../errors';
import {
  EncryptedDocument,
  InvalidDocument,
  PayloadTooLarge,
  UnsupportedFileType,
  type UnsupportedEntry,
} from './errors';
import {
  EntryPathRegistry,
  classifyArchiveFile,
  cleanEntryName,
  decodeEntryName,
  printableName,
  type ArchiveFileFormat,
} from './zipEntryNames';
import {
  DEFAULT_ZIP_LIMITS,
  InflatedBytesMeter,
  formatBytes,
  ratioBudget,
  sizeAgainstLimit,
  type ZipLimits,
} from './zipLimits';
import { openZipFile, type OpenedZip } from './zipReader';

export type { ArchiveFileFormat } from './zipEntryNames';
export { DEFAULT_ZIP_LIMITS, type ZipLimits } from './zipLimits';

export interface ExtractedFile {
  /** Path inside the archive, forward slashes, without `./` or empty segments. */
  entry: string;
  /** Where it was written: destDir/<n>, numbered in the archive's order, never named after the entry. */
  path: string;
  bytes: number;
  format: ArchiveFileFormat;
}

export interface ExtractedArchive {
  files: ExtractedFile[];
  /** OS litter left out (`__MACOSX/…`, `.DS_Store`, dot-files, …), as cleaned entry paths. */
  ignored: string[];
}

export interface ZipOptions extends Partial<ZipLimits> {
  /** The archive's name in messages (the upload's file name); default the base name of zipPath. */
  source?: string;
  /**
   * Stops the listing and the writing between entries (and an entry being written): what was written is
   * removed, and the signal's reason is thrown. A cancelled ingestion of 8,000 entries went on for 6 s.
   */
  signal?: AbortSignal;
}

export interface ExtractOptions extends ZipOptions {
  /** The files written so far of those to write (folders and OS litter left out): once before the first, then after each. */
  onProgress?: (filesDone: number, filesTotal: number) => void;
}

/**
 * What writing one file needs from its central-directory record. yauzl's Entry objects weigh about
 * 600 bytes each (raw name, extra fields, comment); these keep 100,000 planned files to a few MB.
 */
interface PlannedFile {
  path: string;
  format: ArchiveFileFormat;
  localHeaderOffset: number;
  compressedSize: number;
  uncompressedSize: number;
  deflated: boolean;
  crc32: number;
}

const UNIX_FILE_TYPE_MASK = 0o170000;
const UNIX_SYMLINK = 0o120000;
const DOS_DIRECTORY_ATTRIBUTE = 0x10;
const PARALLEL_WRITES = 8;

/** An archive's central directory, checked whole: what extraction would write, and what it would refuse. */
export interface CheckedArchive {
  /** The files extraction would write, as cleaned entry paths. */
  files: string[];
  /** OS litter left out (`__MACOSX/…`, `.DS_Store`, dot-files, …), as cleaned entry paths. */
  ignored: string[];
  /** Entries of unsupported types (extraction refuses them all together, before writing anything). */
  unsupported: UnsupportedEntry[];
}

/**
 * Runs every check extraction makes on the central directory (archive size, entry count, paths,
 * symlinks, encryption, compression methods, duplicate names, declared sizes, compression ratio)
 * without writing anything, so an upload can be refused before it is accepted. Throws as extractZip
 * would, except for unsupported types, which are returned so that a caller can name them all.
 */
export async function checkZip(zipPath: string, options: ZipOptions = {}): Promise<CheckedArchive> {
  return withCheckedArchive(zipPath, options, ({ planned, ignored, unsupported }) => ({
    files: planned.map((p) => p.path),
    ignored,
    unsupported,
  }));
}

/**
 * Extracts a ZIP archive under destDir, entry by entry, never holding the archive or an entry in
 * memory. The central directory is checked whole first (paths, symlinks, encryption, types, declared
 * sizes) so a refused archive writes nothing; inflated bytes are counted again while writing. On any
 * failure, everything written under destDir is removed.
 *
 * Each file is written as destDir/1, destDir/2, … in the archive's order; its entry path is returned
 * beside it and names it everywhere else. A name the archive allows may be one the disk does not: a
 * segment of 120 CJK characters is 360 bytes (Linux allows 255), and a deep path passes PATH_MAX. Named
 * after their entries, such archives were accepted and then failed as an internal error.
 */
export async function extractZip(
  zipPath: string,
  destDir: string,
  { onProgress, ...options }: ExtractOptions = {},
): Promise<ExtractedArchive> {
  const written = new WrittenPaths();
  try {
    return await withCheckedArchive(zipPath, options, async (archive) => {
      if (archive.unsupported.length > 0) throw new UnsupportedFileType(archive.unsupported);
      const files = await writeFiles(archive, path.resolve(destDir), written, onProgress);
      return { files, ignored: archive.ignored };
    });
  } catch (err) {
    await written.remove();
    throw err;
  }
}

interface OpenedArchive {
  zipfile: ZipFile;
  source: string;
  limits: ZipLimits;
  signal: AbortSignal | undefined;
  planned: PlannedFile[];
  ignored: string[];
  unsupported: UnsupportedEntry[];
}

/** Opens the archive, checks its size, entry count and central directory, and hands them to `use`. */
async function withCheckedArchive<T>(
  zipPath: string,
  options: ZipOptions,
  use: (archive: OpenedArchive) => T | Promise<T>,
): Promise<T> {
  const { source = path.basename(zipPath), signal, ...limitOverrides } = options;
  signal?.throwIfAborted();
  const limits: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...definedOnly(limitOverrides) };
  const archiveBytes = (await fs.stat(zipPath)).size;
  if (archiveBytes > limits.maxArchiveBytes) {
    const shown = sizeAgainstLimit(archiveBytes, limits.maxArchiveBytes);
    throw new PayloadTooLarge(
      `${source}: the archive is ${shown.size}; the limit is ${shown.limit} per archive.`,
    );
  }
  const { zipfile, endListing } = await openZip(zipPath, source);
  try {
    if (zipfile.entryCount > limits.maxEntries) {
      throw new PayloadTooLarge(
        `${source}: the archive has ${zipfile.entryCount.toLocaleString('en-US')} entries; the limit is ${limits.maxEntries.toLocaleString('en-US')} entries per archive.`,
      );
    }
    const plan = await planExtraction(zipfile, source, limits, archiveBytes, signal);
    endListing();
    return await use({ zipfile, source, limits, signal, ...plan });
  } finally {
    zipfile.close();
  }
}

async function openZip(zipPath: string, source: string): Promise<OpenedZip> {
  try {
    return await openZipFile(zipPath, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (err) {
    if (isSystemError(err)) throw err;
    throw new InvalidDocument(source, `not a ZIP archive, or a damaged one (${(err as Error).message}).`);
  }
}

async function planExtraction(
  zipfile: ZipFile,
  source: string,
  limits: ZipLimits,
  archiveBytes: number,
  signal: AbortSignal | undefined,
): Promise<{ planned: PlannedFile[]; ignored: string[]; unsupported: UnsupportedEntry[] }> {
  const planned: PlannedFile[] = [];
  const ignored: string[] = [];
  const unsupported: UnsupportedEntry[] = [];
  const registry = new EntryPathRegistry();
  let declaredTotal = 0;
  const entries = zipfile.eachEntry();
  for (;;) {
    signal?.throwIfAborted();
    let next: IteratorResult<Entry>;
    try {
      next = await entries.next();
    } catch (err) {
      throw toArchiveError(err, source);
    }
    if (next.done) break;
    const entry = next.value;
    const rawName = decodeEntryName(entry);
    const cleaned = cleanEntryName(rawName);
    if (!cleaned.ok)
      throw new InvalidDocument(
        source,
        `entry "${printableName(rawName)}" ${cleaned.problem}; the archive is refused.`,
      );
    if (isOsLitter(cleaned.path)) {
      ignored.push(cleaned.path);
      continue;
    }
    if (((entry.externalFileAttributes >>> 16) & UNIX_FILE_TYPE_MASK) === UNIX_SYMLINK) {
      throw new InvalidDocument(
        source,
        `entry "${printableName(cleaned.path)}" is a symbolic link; archives may contain only files and folders.`,
      );
    }
    if (
      cleaned.isDirectory ||
      ((entry.externalFileAttributes & DOS_DIRECTORY_ATTRIBUTE) !== 0 && entry.uncompressedSize === 0)
    ) {
      continue;
    }
    if (entry.isEncrypted()) throw new EncryptedDocument(`${source}: ${printableName(cleaned.path)}`);
    if (!entry.canDecodeFileData()) {
      throw new InvalidDocument(
        source,
        `entry "${printableName(cleaned.path)}" uses compression method ${entry.compressionMethod}, which is not supported; re-create the archive with standard (Deflate) compression.`,
      );
    }
    const verdict = classifyArchiveFile(cleaned.path);
    if (!verdict.ok) {
      unsupported.push({ entry: printableName(cleaned.path), type: verdict.type });
      continue;
    }
    const clash = registry.add(cleaned.path);
    if (clash !== undefined) {
      throw new InvalidDocument(
        source,
        clash === cleaned.path
          ? `entry "${printableName(cleaned.path)}" appears more than once in the archive.`
          : `entries "${printableName(clash)}" and "${printableName(cleaned.path)}" collide on disk (names differing only in case or Unicode form, or a file named like a folder).`,
      );
    }
    const maxBytes = fileLimit(verdict.format, limits);
    if (entry.uncompressedSize > maxBytes) {
      const shown = sizeAgainstLimit(entry.uncompressedSize, maxBytes);
      throw new PayloadTooLarge(
        `${source}: "${printableName(cleaned.path)}" is ${shown.size} uncompressed; the limit is ${shown.limit} per file.`,
      );
    }
    declaredTotal += entry.uncompressedSize;
    if (declaredTotal > limits.maxTotalBytes) throw totalTooLarge(source, limits);
    // yauzl refuses an entry that inflates past its declared size, so the declared total bounds the disk used.
    if (declaredTotal > ratioBudget(archiveBytes, limits))
      throw zipBomb(source, declaredTotal, archiveBytes, limits);
    planned.push({
      path: cleaned.path,
      format: verdict.format,
      localHeaderOffset: entry.relativeOffsetOfLocalHeader,
      compressedSize: entry.compressedSize,
      uncompressedSize: entry.uncompressedSize,
      deflated: entry.compressionMethod === 8,
      crc32: entry.crc32,
    });
  }
  return { planned, ignored, unsupported };
}

/**
 * Writes the planned files a few at a time: small files are bound by file-system round trips, not
 * bandwidth, and yauzl reads entries independently. Every writer settles before a failure is reported,
 * so the cleanup that follows sees every file that was created. An abort is seen before each entry.
 */
async function writeFiles(
  archive: OpenedArchive,
  root: string,
  written: WrittenPaths,
  onProgress: ExtractOptions['onProgress'],
): Promise<ExtractedFile[]> {
  const { zipfile, planned, source, limits, signal } = archive;
  const files: ExtractedFile[] = new Array<ExtractedFile>(planned.length);
  const totals = { inflated: 0 };
  let nextIndex = 0;
  let done = 0;
  let failure: { error: unknown } | undefined;
  if (planned.length > 0) await written.makeDir(root);
  onProgress?.(0, planned.length);
  const worker = async (): Promise<void> => {
    while (failure === undefined && nextIndex < planned.length) {
      if (signal?.aborted) {
        failure = { error: signal.reason };
        break;
      }
      const index = nextIndex++;
      try {
        files[index] = await writeFile(
          zipfile,
          planned[index]!,
          path.join(root, String(index + 1)),
          source,
          limits,
          written,
          totals,
          signal,
        );
        onProgress?.(++done, planned.length);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_WRITES, planned.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return files;
}

async function writeFile(
  zipfile: ZipFile,
  file: PlannedFile,
  target: string,
  source: string,
  limits: ZipLimits,
  written: WrittenPaths,
  totals: { inflated: number },
  signal: AbortSignal | undefined,
): Promise<ExtractedFile> {
  const { path: entryPath, format } = file;
  const maxBytes = fileLimit(format, limits);
  let fileBytes = 0;
  const meter = new InflatedBytesMeter(
    (count) => {
      fileBytes += count;
      totals.inflated += count;
      if (fileBytes > maxBytes) {
        throw new PayloadTooLarge(
          `${source}: "${printableName(entryPath)}" inflates to more than ${formatBytes(maxBytes)}; the limit is ${formatBytes(maxBytes)} per file.`,
        );
      }
      if (totals.inflated > limits.maxTotalBytes) throw totalTooLarge(source, limits);
    },
    file.crc32,
    () =>
      new InvalidDocument(
        source,
        `entry "${printableName(entryPath)}" is damaged (CRC-32 checksum mismatch).`,
      ),
  );
  const output = await written.createFile(target);
  try {
    await pipeline(await openEntryData(zipfile, file), meter, output, { signal });
  } catch (err) {
    output.destroy();
    if (signal?.aborted) throw signal.reason;
    throw toEntryError(err, source, entryPath);
  }
  return { entry: entryPath, path: target, bytes: meter.bytes, format };
}

/** Files and folders this extraction created, so a failure can remove exactly those. */
class WrittenPaths {
  private readonly files: string[] = [];
  private readonly dirs: string[] = [];

  async makeDir(dir: string): Promise<void> {
    const created = await fs.mkdir(dir, { recursive: true });
    if (created !== undefined) this.dirs.push(created);
  }

  /** Opens a new file exclusively: never overwrites, never follows a symlink planted at the path. */
  async createFile(target: string): Promise<WriteStream> {
    const handle = await fs.open(target, 'wx');
    this.files.push(target);
    return handle.createWriteStream();
  }

  async remove(): Promise<void> {
    await Promise.all(this.files.map((f) => fs.rm(f, { force: true })));
    for (const dir of this.dirs.reverse()) await fs.rm(dir, { recursive: true, force: true });
  }
}

/** yauzl's openReadStream, from the few fields kept (encryption and method were checked when planning). */
async function openEntryData(zipfile: ZipFile, file: PlannedFile): Promise<Readable> {
  const header = Object.assign(new yauzl.Entry(), {
    relativeOffsetOfLocalHeader: file.localHeaderOffset,
    compressedSize: file.compressedSize,
  });
  const { fileDataStart } = await zipfile.readLocalFileHeaderPromise(header, { minimal: true });
  // Not openReadStreamLowLevelPromise: in yauzl 3.4.0 it calls openReadStream with the wrong arguments.
  return new Promise((resolve, reject) => {
    zipfile.openReadStreamLowLevel(
      fileDataStart,
      file.compressedSize,
      0,
      file.compressedSize,
      file.deflated,
      file.uncompressedSize,
      (err, stream) => (err ? reject(err) : resolve(stream)),
    );
  });
}

const fileLimit = (format: ArchiveFileFormat, limits: ZipLimits): number =>
  format === 'embeddings' ? limits.maxEmbeddingsFileBytes : limits.maxFileBytes;

const totalTooLarge = (source: string, limits: ZipLimits): PayloadTooLarge =>
  new PayloadTooLarge(
    `${source}: the archive's files total more than ${formatBytes(limits.maxTotalBytes)} uncompressed; the limit is ${formatBytes(limits.maxTotalBytes)} per upload.`,
  );

const zipBomb = (source: string, total: number, archiveBytes: number, limits: ZipLimits): InvalidDocument =>
  new InvalidDocument(
    source,
    `the archive's files inflate to more than ${formatBytes(total)} from ${formatBytes(archiveBytes)} (over ${limits.maxCompressionRatio}× compression), which is refused as a zip bomb; re-create it with ordinary compression or split it.`,
  );

function toArchiveError(err: unknown, source: string): unknown {
  if (err instanceof DomainError || isSystemError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/encrypt/i.test(message)) return new EncryptedDocument(source);
  return new InvalidDocument(source, `the archive is damaged (${message}).`);
}

function toEntryError(err: unknown, source: string, entryPath: string): unknown {
  if (err instanceof DomainError || isSystemError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/too many bytes/i.test(message)) {
    return new InvalidDocument(
      source,
      `entry "${printableName(entryPath)}" inflates to more data than its header declares (a zip bomb or a damaged archive).`,
    );
  }
  return new InvalidDocument(source, `entry "${printableName(entryPath)}" is damaged (${message}).`);
}

/** fs errors (ENOSPC, EACCES, ...) are the machine's problem, not the archive's: they pass through. */
function isSystemError(err: unknown): boolean {
  return err instanceof Error && 'syscall' in err;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
