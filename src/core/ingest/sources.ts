import { createHash } from 'node:crypto';
import { createReadStream, statSync, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { isLitterInDrop, isOsLitter } from '../../shared/osLitter';
import type { UnpackingProgress } from '../../shared/uploads';
import { DomainError, InvalidInput } from '../errors';
import { EventLoopTurns } from './eventLoopTurns';
import { InvalidDocument, PayloadTooLarge, UnsupportedFileType, type UnsupportedEntry } from './errors';
import type { IngestLimits } from './limits';
import { FORMAT_BY_EXTENSION, type DocumentFormat } from './types';
import { checkZip, extractZip } from './zip';
import { classifyArchiveFile, printableName } from './zipEntryNames';
import { archiveLimitsFor, sizeAgainstLimit } from './zipLimits';

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
  /**
   * `name` is the file's path in a drop on the studio (`handbook/guides/intro.md`), each file of a
   * dropped folder sent as an input of its own: OS litter inside a dropped folder is left out, as the
   * walk of a folder given to ingest leaves it out (isLitterInDrop). A file dropped by itself is read.
   */
  fromDrop?: boolean;
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
  /**
   * A file refused because another took its name: that name. Its row, named by where the file came from
   * (`d2/note.md`, `kb.zip/a.md`), is listed right after the row of the file that took it.
   */
  clashesWith?: string;
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

export interface CollectOptions {
  /** Stops the walk of folders and the extraction of archives (between entries); its reason is thrown. */
  signal?: AbortSignal;
  /** The files of the archive being extracted written so far (ZIP extraction of many entries takes seconds). */
  onUnpacking?: (progress: UnpackingProgress) => void;
}

/**
 * Turns the user's inputs (files, folders, ZIP archives) into source files. ZIPs, given directly or
 * found in a folder, are extracted under workDir with every archive check; an unsupported type named
 * directly, in a folder or inside a ZIP refuses the whole request (spec §2: rejected at upload time,
 * naming the type), every such file named by its path in what was given (`kb.zip/inner.zip`).
 */
export async function collectSources(
  inputs: IngestInput[],
  workDir: string,
  limits: IngestLimits,
  { signal, onUnpacking }: CollectOptions = {},
): Promise<CollectedSources> {
  const files: SourceFile[] = [];
  const rejected: RejectedSource[] = [];
  const unsupported: UnsupportedEntry[] = [];

  // Each source name and the file that took it: where it came from (for messages) and its resolved path.
  const seen = new Map<string, { origin: string; path: string }>();
  // Every file a folder or archive held (ingested, refused or a silent duplicate): none in all is refused.
  let yielded = 0;
  /**
   * `shown` is where the file came from, for messages: its path as given (a file named directly), or
   * `archive/entry` (an entry of `archive`); a folder's files are shown by their name.
   */
  const addFile = (
    path: string,
    name: string,
    bytes: number,
    disposable: boolean,
    shown = name,
    archive?: string,
  ) => {
    yielded++;
    // One spelling of a name in every way it reaches us: macOS file names often come decomposed (NFD),
    // Windows and most ZIP tools write them composed (NFC); `café.md` from each was two documents.
    const source = name.normalize('NFC');
    const origin = shown.normalize('NFC');
    const kind = classifySource(source);
    const earlier = seen.get(source);
    if (earlier !== undefined) {
      // The same file reached twice (`a.md ./a.md /abs/a.md`, a folder named twice) is ingested once.
      if (earlier.path === resolve(path)) return;
      // Reported under where it came from (`simple.zip/a.csv`), not the name it shares: two rows named
      // `a.csv`, one ingested and one refused, left the creator guessing which copy was stored.
      rejected.push({
        source: origin,
        format: 'format' in kind ? kind.format : extname(source).slice(1),
        error: new InvalidDocument(origin, duplicateNameMessage(earlier.origin, source, archive)),
        clashesWith: source,
      });
      return;
    }
    seen.set(source, { origin, path: resolve(path) });
    if ('type' in kind) {
      unsupported.push({ entry: printableName(source), type: kind.type });
      return;
    }
    const { format } = kind;
    if (format !== 'jsonl' && bytes > limits.maxFileBytes) {
      rejected.push({
        source,
        format,
        error: new PayloadTooLarge(tooLargeMessage(source, bytes, limits.maxFileBytes)),
      });
      return;
    }
    files.push({ source, path, bytes, format, disposable });
  };

  let archives = 0;
  const addZip = async (path: string, name: string): Promise<string[]> => {
    const dest = join(workDir, `archive-${archives++}`);
    // The limits the upload precheck applies too (archiveLimitsFor), so both refuse the same archives.
    const options = { source: name, signal, ...archiveLimitsFor(limits) };
    if (unsupported.length > 0) {
      // The ingestion is refused already: the archive is only checked, for the entries to name with it.
      const checked = await checkZip(path, options);
      yielded += checked.files.length;
      refuseEntries(name, checked.unsupported);
      return checked.ignored;
    }
    let extracted: Awaited<ReturnType<typeof extractZip>>;
    try {
      extracted = await extractZip(path, dest, {
        ...options,
        onProgress: (filesDone, filesTotal) => onUnpacking?.({ archive: name, filesDone, filesTotal }),
      });
    } catch (err) {
      if (!(err instanceof UnsupportedFileType)) throw err;
      // Named with the archive, as the upload precheck names them: "inner.zip" alone left the creator
      // looking for it among the files given, and the other inputs' refused types are named too.
      refuseEntries(name, err.entries);
      return [];
    }
    // Extracted into workDir, which the ingestion removes when it ends.
    for (const f of extracted.files) addFile(f.path, f.entry, f.bytes, true, `${name}/${f.entry}`, name);
    return extracted.ignored;
  };
  const refuseEntries = (archive: string, entries: UnsupportedEntry[]) => {
    yielded += entries.length;
    for (const { entry, type } of entries)
      unsupported.push({ entry: `${printableName(archive)}/${entry}`, type });
  };
  // Folders and archives that held no file to ingest, with the OS litter skipped in them.
  const empty: EmptyInput[] = [];
  // OS litter in the folders of a drop, by the dropped folder's name: reported as a folder's would be
  // when nothing else was given.
  const dropLitter = new Map<string, string[]>();
  const given = new Set<string>();
  // Inputs are looked at with synchronous stats, as a folder's files are (walk): a drop of 7,083 files
  // awaited one asynchronous stat after another for 0.4 s.
  const turns = new EventLoopTurns();
  for (const input of inputs) {
    // Named by what the path resolves to: `ingest .` inside `docs/` gives `docs/intro.md`, as
    // `ingest docs` from its parent does, never `./intro.md` or `../docs/intro.md`.
    const name = input.name ?? basename(resolve(input.path));
    signal?.throwIfAborted();
    const info = statOf(input.path, input.name ?? shownPath(input.path));
    // The same path given twice under the same name (`a.md a.md`, `docs docs/`) is read once.
    const key = `${resolve(input.path)}\0${name}`;
    if (given.has(key)) continue;
    given.add(key);
    await turns.take();
    const before = yielded;
    const ignored: string[] = [];
    if (info.isFile() && input.fromDrop === true && isLitterInDrop(name)) {
      const slash = name.indexOf('/');
      const folder = name.slice(0, slash);
      dropLitter.set(folder, [...(dropLitter.get(folder) ?? []), name.slice(slash + 1)]);
    } else if (info.isDirectory()) {
      const walked = await walk(input.path, { files: [], notFollowed: [] }, turns, signal);
      for (const file of walked.files) {
        const rel = relativeName(input.path, file.path);
        if (isOsLitter(rel)) {
          ignored.push(rel);
          continue;
        }
        // A ZIP in a folder is an archive given to ingest, as in a folder dropped on the studio
        // (each of its files an input): extracted, its entries named as in the archive.
        if (isZip(rel)) await addZip(file.path, `${name}/${rel}`);
        else addFile(file.path, `${name}/${rel}`, file.bytes, input.disposable === true);
      }
      if (yielded === before) {
        empty.push({
          shown: input.name ?? shownPath(input.path),
          archive: false,
          ignored,
          notFollowed: walked.notFollowed.map((path) => relativeName(input.path, path)),
        });
      }
    } else if (!info.isFile()) {
      // A FIFO, socket or device given by name: reading it could wait forever (a FIFO with no writer).
      // Refused by itself, as a folder's walk skips such entries; the other inputs are still ingested.
      yielded++;
      const shown = input.name ?? shownPath(input.path);
      const kind = classifySource(name);
      rejected.push({
        source: shown,
        format: 'format' in kind ? kind.format : extname(name).slice(1),
        error: new InvalidDocument(
          shown,
          'not a regular file (a FIFO, socket or device); give files, folders or ZIP archives.',
        ),
      });
    } else if (isZip(name)) {
      ignored.push(...(await addZip(input.path, name)));
      if (yielded === before) empty.push({ shown: name, archive: true, ignored });
    } else {
      // Shown by its path as given: two files named `note.md` from two folders are told apart.
      addFile(input.path, name, info.size, input.disposable === true, input.name ?? shownPath(input.path));
    }
  }
  // A folder with nothing to ingest beside other inputs is no mistake worth stopping for (a drop of
  // several folders); given alone, or with only other empty ones, it would end in "(none)" and exit 0.
  if (yielded === 0) {
    for (const [shown, ignored] of dropLitter) empty.push({ shown, archive: false, ignored });
    if (empty.length > 0) throw nothingToIngest(empty);
  }
  if (unsupported.length) throw new UnsupportedFileType(unsupported);
  files.sort((a, b) => a.source.localeCompare(b.source));
  return { files, rejected };
}

/**
 * Why a file (an entry of `archive`, or a file given), whose name `source` the file shown as `taker`
 * took first, was not ingested. An archive's entry is renamed inside its archive (`a.md took it first
 * as "a.md"` said the same name twice).
 */
function duplicateNameMessage(taker: string, source: string, archive: string | undefined): string {
  const as = taker === source ? '' : ` as "${source}"`;
  const fix =
    archive === undefined
      ? 'rename one of them to keep both'
      : `rename the entry inside ${archive} to keep both, or leave ${archive} out to keep only ${taker}`;
  return `not ingested: the name appears twice in this ingestion, and ${taker} took it first${as}; ${fix}.`;
}

interface EmptyInput {
  shown: string;
  archive: boolean;
  ignored: string[];
  /** A folder's symbolic links and special files (FIFOs, sockets, devices), skipped by its walk. */
  notFollowed?: string[];
}

const SUPPORTED = `${Object.keys(FORMAT_BY_EXTENSION).join(', ')}, .jsonl (pre-built embeddings) and .zip archives`;

/** The refusal of inputs that hold no file to ingest, worded as the upload precheck's for an archive. */
function nothingToIngest(empty: EmptyInput[]): InvalidDocument {
  const shown = empty.map((e) => printableName(e.shown)).join(', ');
  if (empty.length > 1) {
    return new InvalidDocument(
      shown,
      `no file to ingest: these folders and archives are empty, or hold only OS litter, which is skipped, or symbolic links, which are not followed (supported: ${SUPPORTED}).`,
    );
  }
  const [{ archive, ignored, notFollowed = [] }] = empty as [EmptyInput];
  const what = archive ? 'the archive' : 'the folder';
  const held = [
    ...(ignored.length > 0 ? [`OS litter (${describeIgnored(ignored)}), which is skipped`] : []),
    // "The folder is empty" sent the creator looking at a folder full of (linked) files.
    ...(notFollowed.length > 0
      ? [
          `symbolic links or special files (${describeIgnored(notFollowed)}), which are not followed: a folder's walk stays inside it`,
        ]
      : []),
  ];
  const why =
    held.length === 0
      ? `${what} is empty${archive ? ', or holds only folders' : ''}`
      : `${what} holds only ${held.join(', and ')}`;
  return new InvalidDocument(shown, `no file to ingest: ${why} (supported: ${SUPPORTED}).`);
}

const describeIgnored = (ignored: string[]): string => {
  const shown = ignored.slice(0, 3).map((name) => `"${printableName(name)}"`);
  return ignored.length > shown.length
    ? `${shown.join(', ')} and ${ignored.length - shown.length} more`
    : shown.join(', ');
};

/** A folder's files with their sizes, and the entries its walk did not follow (absolute paths). */
interface Walked {
  files: { path: string; bytes: number }[];
  notFollowed: string[];
}

/** Whether a file is taken as a ZIP archive to extract: by its name's extension, as documents' formats are. */
export const isZip = (name: string): boolean => extname(name).toLowerCase() === '.zip';

/** `path` inside `root`, with forward slashes, as documents are named. */
const relativeName = (root: string, path: string): string => relative(root, path).split(sep).join('/');

/** A path as the user gave it, unless that says nothing by itself (`.`, `..`, `./`): then resolved. */
function shownPath(path: string): string {
  return /^\.{0,2}$/.test(basename(path)) ? resolve(path) : path;
}

/** An input's stat, or the refusal naming it: no such file, or a folder on its way that may not be entered. */
function statOf(path: string, shown: string): Stats {
  let info: Stats | undefined;
  try {
    info = statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      throw new InvalidInput(`${shown}: cannot be reached (permission denied, ${code}).`);
    // A file where a folder should be (ENOTDIR), a name too long: there is no such file.
  }
  if (!info) throw new InvalidInput(`${shown}: no such file or folder.`);
  return info;
}

/**
 * Every file under `dir`, with its size. Files are sized with a synchronous stat of the entry just
 * listed: awaiting one asynchronous stat after another took the 7,083 files of the 100 MB mixed
 * corpus 0.3-0.4 s, during which nothing else had started (docs/performance.md, twentieth pass). The
 * event loop still gets a turn every TURN_EVERY_MS of it, for folders of very many files.
 */
async function walk(
  dir: string,
  out: Walked,
  turns: EventLoopTurns,
  signal: AbortSignal | undefined,
): Promise<Walked> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Refused whole, as a path that does not exist: ingesting the rest would silently leave it out.
    if (code === 'EACCES' || code === 'EPERM')
      throw new InvalidInput(
        `${dir}: the folder cannot be read (permission denied, ${code}); make it readable for this user, or leave it out.`,
      );
    throw err;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, out, turns, signal);
    else if (entry.isFile()) {
      out.files.push({ path, bytes: statSync(path).size });
      await turns.take();
      signal?.throwIfAborted();
    }
    // Symbolic links and special files are skipped: a folder must not reach outside itself.
    else out.notFollowed.push(path);
  }
  return out;
}

export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A file refused for its size, its size and the limit told apart even when both round the same. */
export function tooLargeMessage(source: string, bytes: number, limit: number): string {
  const shown = sizeAgainstLimit(bytes, limit);
  return `${source}: the file is ${shown.size}; the limit is ${shown.limit} per file.`;
}
