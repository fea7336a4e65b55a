import { createHash } from 'node:crypto';
import { createReadStream, statSync, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, extname, join, relative, sep } from 'node:path';
import { DomainError } from '../errors';
import { EventLoopTurns } from './eventLoopTurns';
import { InvalidDocument, PayloadTooLarge, UnsupportedFileType, type UnsupportedEntry } from './errors';
import type { IngestLimits } from './limits';
import type { DocumentFormat } from './types';
import { extractZip } from './zip';
import { classifyArchiveFile, isOsLitter, printableName } from './zipEntryNames';
import { archiveLimitsFor, formatBytes } from './zipLimits';

export type SourceFormat = DocumentFormat | 'jsonl';

/** A file, folder or ZIP archive to ingest. */
export interface IngestInput {
  path: string;
  /** The source name (the file's name by default). */
  name?: string;
  /**
   * The caller removes the file after the ingestion (a received upload): it is moved into the source
   * store rather than copied. A folder's files are then disposable too.
   */
  disposable?: boolean;
}

/** One file to ingest: where it is on disk and the name it has inside the knowledge base. */
export interface SourceFile {
  source: string;
  path: string;
  bytes: number;
  format: SourceFormat;
  /** The file may be moved away once read: an input marked disposable, or an entry extracted from a ZIP. */
  disposable: boolean;
}

/** A file that could not even be read as a source (too large, its name given twice). */
export interface RejectedSource {
  source: string;
  format: string;
  error: DomainError;
}

export interface CollectedSources {
  files: SourceFile[];
  rejected: RejectedSource[];
}

/** The format of a file by its name, or the type to name in an unsupported-type refusal. */
export function classifySource(name: string): { format: SourceFormat } | { type: string } {
  const verdict = classifyArchiveFile(name.replace(/\\/g, '/'));
  if (!verdict.ok) return { type: verdict.type };
  return { format: verdict.format === 'embeddings' ? 'jsonl' : verdict.format };
}

/**
 * Turns the user's inputs (files, folders, ZIP archives) into source files. ZIPs, given directly or
 * found in a folder, are extracted under workDir with every archive check; an unsupported type named
 * directly, in a folder or inside a ZIP refuses the whole request (spec §2: rejected at upload time,
 * naming the type).
 */
export async function collectSources(
  inputs: IngestInput[],
  workDir: string,
  limits: IngestLimits,
): Promise<CollectedSources> {
  const files: SourceFile[] = [];
  const rejected: RejectedSource[] = [];
  const unsupported: UnsupportedEntry[] = [];

  const seen = new Map<string, string>();
  const addFile = (path: string, source: string, bytes: number, disposable: boolean, origin = source) => {
    const earlier = seen.get(source);
    if (earlier !== undefined) {
      // Reported under where it came from (`simple.zip/a.csv`), not the name it shares: two rows named
      // `a.csv`, one ingested and one refused, left the creator guessing which copy was stored.
      rejected.push({
        source: origin,
        format: extname(source).slice(1),
        error: new InvalidDocument(
          origin,
          `not ingested: the name appears twice in this ingestion, and ${earlier} took it first as "${source}"; rename one of them to keep both.`,
        ),
      });
      return;
    }
    seen.set(source, origin);
    const kind = classifySource(source);
    if ('type' in kind) {
      unsupported.push({ entry: printableName(source), type: kind.type });
      return;
    }
    const { format } = kind;
    if (format !== 'jsonl' && bytes > limits.maxFileBytes) {
      rejected.push({
        source,
        format,
        error: new PayloadTooLarge(
          `${source}: the file is ${formatBytes(bytes)}; the limit is ${formatBytes(limits.maxFileBytes)} per file.`,
        ),
      });
      return;
    }
    files.push({ source, path, bytes, format, disposable });
  };

  let archives = 0;
  const addZip = async (path: string, name: string) => {
    const dest = join(workDir, `archive-${archives++}`);
    // The limits the upload precheck applies too (archiveLimitsFor), so both refuse the same archives.
    const extracted = await extractZip(path, dest, { source: name, ...archiveLimitsFor(limits) });
    // Extracted into workDir, which the ingestion removes when it ends.
    for (const f of extracted.files) addFile(f.path, f.entry, f.bytes, true, `${name}/${f.entry}`);
  };
  const isZip = (name: string) => extname(name).toLowerCase() === '.zip';
  // Inputs are looked at with synchronous stats, as a folder's files are (walk): a drop of 7,083 files
  // awaited one asynchronous stat after another for 0.4 s.
  const turns = new EventLoopTurns();
  for (const input of inputs) {
    const name = input.name ?? basename(input.path);
    const info = statOrUndefined(input.path);
    if (!info) throw new InvalidDocument(name, 'no such file or folder.');
    await turns.take();
    if (info.isDirectory()) {
      for (const file of await walk(input.path, [], turns)) {
        const rel = relative(input.path, file.path).split(sep).join('/');
        if (isOsLitter(rel)) continue;
        // A ZIP in a folder is an archive given to ingest, as in a folder dropped on the studio
        // (each of its files an input): extracted, its entries named as in the archive.
        if (isZip(rel)) await addZip(file.path, `${name}/${rel}`);
        else addFile(file.path, `${name}/${rel}`, file.bytes, input.disposable === true);
      }
    } else if (isZip(name)) {
      await addZip(input.path, name);
    } else {
      addFile(input.path, name, info.size, input.disposable === true);
    }
  }
  if (unsupported.length) throw new UnsupportedFileType(unsupported);
  files.sort((a, b) => a.source.localeCompare(b.source));
  return { files, rejected };
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined; // Not reachable (EACCES, a file where a folder should be): no such file.
  }
}

/**
 * Every file under `dir`, with its size. Files are sized with a synchronous stat of the entry just
 * listed: awaiting one asynchronous stat after another took the 7,083 files of the 100 MB mixed
 * corpus 0.3-0.4 s, during which nothing else had started (docs/performance.md, twentieth pass). The
 * event loop still gets a turn every TURN_EVERY_MS of it, for folders of very many files.
 */
async function walk(
  dir: string,
  out: { path: string; bytes: number }[],
  turns: EventLoopTurns,
): Promise<{ path: string; bytes: number }[]> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, out, turns);
    else if (entry.isFile()) {
      out.push({ path, bytes: statSync(path).size });
      await turns.take();
    }
    // Symbolic links and special files are skipped: a folder must not reach outside itself.
  }
  return out;
}

export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
