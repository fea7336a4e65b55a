import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import yauzl, { type Entry } from 'yauzl';
import { FORMAT_BY_EXTENSION, type DocumentFormat } from './types';

/** A file extracted from an archive is a document, or a JSONL file of pre-built embeddings. */
export type ArchiveFileFormat = DocumentFormat | 'embeddings';

const UTF8_NAMES_FLAG = 0x800;

/**
 * An entry's name as text. A name flagged UTF-8 (general-purpose bit 11), or carrying Info-ZIP's
 * Unicode Path extra field (0x7075, whose checksum must match the name), is read as yauzl reads it.
 * Without the flag the ZIP specification says CP437, but most archivers write UTF-8 and leave the flag
 * unset (Info-ZIP's zip 3.0, macOS's Archive Utility): an unflagged name that is valid UTF-8 is read
 * as UTF-8 ("ü" was stored as "├╝"), any other as CP437. A real CP437 name is seldom valid UTF-8: its
 * accented letters (0x80-0xA5) would have to come right after a box-drawing character, or two of them
 * after a Greek letter or "ß". An ASCII name reads the same either way but for its control bytes, which
 * UTF-8 keeps as control characters (cleanEntryName refuses them, as in a flagged name) where CP437
 * made them symbols ("\n" read "◙").
 */
export function decodeEntryName(
  entry: Pick<Entry, 'generalPurposeBitFlag' | 'fileNameRaw' | 'extraFields'>,
): string {
  const { generalPurposeBitFlag, fileNameRaw, extraFields } = entry;
  const flags = isUtf8(fileNameRaw) ? generalPurposeBitFlag | UTF8_NAMES_FLAG : generalPurposeBitFlag;
  // strictFileNames: backslashes are left for cleanEntryName, which reads them as separators.
  return yauzl.getFileNameLowLevel(flags, fileNameRaw, extraFields, true);
}

export type CleanedName = { ok: true; path: string; isDirectory: boolean } | { ok: false; problem: string };

/**
 * An entry name as a safe relative path with forward slashes, or why it is unsafe. Backslashes are
 * read as separators first (some Windows tools write them), so `..\..\x` is caught as `..` segments.
 * `.` and empty segments are dropped; `:` is refused because on Windows it names a drive or an
 * alternate data stream.
 */
export function cleanEntryName(raw: string): CleanedName {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(raw)) return { ok: false, problem: 'contains control characters' };
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/')) return { ok: false, problem: 'is an absolute path' };
  if (/^[A-Za-z]:/.test(name)) return { ok: false, problem: 'starts with a drive letter' };
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    return { ok: false, problem: 'has a ".." segment that would write outside the extraction folder' };
  }
  if (segments.some((s) => s.includes(':'))) return { ok: false, problem: 'contains ":"' };
  return { ok: true, path: segments.join('/'), isDirectory: name.endsWith('/') || segments.length === 0 };
}

const SHORT_ESCAPES: Record<string, string> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};
// C0 and C1 controls, DEL, line/paragraph separators and bidirectional overrides: they could break a
// message across lines or make a name display as another.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * An entry name as it may appear in a message: control characters escaped as JSON writes them (`\n`,
 * `\u0000`), so a hostile name cannot forge extra lines or reorder the text around it.
 */
export function printableName(name: string): string {
  return name.replace(
    UNPRINTABLE,
    (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export type FileVerdict = { ok: true; format: ArchiveFileFormat } | { ok: false; type: string };

/**
 * The type an unsupported-type refusal gives a ZIP inside an archive. Only archives given to ingest (or
 * found in a folder) are unpacked, so the refusal says so: "Supported: … .zip archives" beside a bare
 * "(nested archive)" read as a contradiction.
 */
export const NESTED_ARCHIVE_TYPE =
  'nested archive: archives inside archives are not unpacked; add its files to the outer archive instead';

/** Which format a file inside an archive has, by extension; archives inside archives are refused. */
export function classifyArchiveFile(entryPath: string): FileVerdict {
  const ext = path.posix.extname(entryPath).toLowerCase();
  if (ext === '.jsonl') return { ok: true, format: 'embeddings' };
  const format = FORMAT_BY_EXTENSION[ext];
  if (format) return { ok: true, format };
  if (ext === '.zip') return { ok: false, type: NESTED_ARCHIVE_TYPE };
  return { ok: false, type: ext || 'no extension' };
}

/**
 * Detects names that collide once written to disk: exact duplicates, names equal on case-insensitive
 * file systems (macOS, Windows) or after Unicode normalization (macOS writes NFD), and a file whose
 * path is also a folder of another entry.
 */
export class EntryPathRegistry {
  private readonly files = new Map<string, string>();
  private readonly folders = new Map<string, string>();

  /** Registers a file path; returns the earlier entry it collides with, if any. */
  add(entryPath: string): string | undefined {
    const key = entryPath.normalize('NFC').toLowerCase();
    const clash = this.files.get(key) ?? this.folders.get(key);
    if (clash !== undefined) return clash;
    const segments = key.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      const file = this.files.get(folder);
      if (file !== undefined) return file;
      if (!this.folders.has(folder)) this.folders.set(folder, entryPath);
    }
    this.files.set(key, entryPath);
    return undefined;
  }
}
