import { isAbsolute, relative, resolve } from 'node:path';
import { DomainError } from '../errors';

const FULL = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** The disk holding the data directory ran out of space: nothing of the interrupted work was kept. */
export class DiskFull extends DomainError {
  constructor(readonly dataDir: string) {
    super(
      'internal_error',
      `The disk is full: no space is left for the data directory ${dataDir}. Nothing of the failed operation was stored; free some space and try again.`,
    );
  }
}

/** The data directory cannot be written (read-only mount, permissions). */
export class DataDirNotWritable extends DomainError {
  constructor(
    readonly dataDir: string,
    cause: string,
  ) {
    super(
      'internal_error',
      `The data directory ${dataDir} cannot be written (${cause}). Make it writable for this user, or choose another data directory.`,
    );
  }
}

/** The data directory, or a folder it would be created in, is a file. */
export class DataDirNotADirectory extends DomainError {
  constructor(
    readonly dataDir: string,
    readonly file: string,
  ) {
    super(
      'invalid_request',
      file === dataDir
        ? `The data directory ${dataDir} is a file, not a directory: choose another data directory.`
        : `The data directory ${dataDir} cannot be created: ${file} is a file, not a directory: choose another data directory.`,
    );
  }
}

/** The database file cannot be read as a database (truncated, overwritten, not SQLite at all). */
export class DatabaseDamaged extends DomainError {
  constructor(
    readonly dataDir: string,
    cause: string,
  ) {
    super(
      'internal_error',
      `The database of the data directory ${dataDir} (kbstudio.db) is damaged (${cause}). Nothing was changed. Restore it from a backup, or move the data directory aside to start afresh.`,
    );
  }
}

/**
 * The data directory keeps original documents (sources/) but its database holds nothing: it was
 * truncated or replaced. Opening it as new would prune those documents at the next start.
 */
export class DatabaseLost extends DomainError {
  constructor(
    readonly file: string,
    readonly keptSources: number,
  ) {
    super(
      'internal_error',
      `The database ${file} is empty, yet the data directory keeps ${keptSources} original document${keptSources === 1 ? '' : 's'} in sources/: the database was truncated or replaced. Nothing was changed. Restore it from a backup, or move the data directory aside to start afresh.`,
    );
  }
}

/** The `code` of a Node errno or SQLite error (`EACCES`, `SQLITE_FULL`), or '' for none. */
export const codeOf = (err: unknown): string => String((err as { code?: unknown } | null)?.code ?? '');

/** The path a Node errno error is about, if it names one (SQLite's errors do not). */
const pathOf = (err: unknown): string | undefined => {
  const path = (err as { path?: unknown } | null)?.path;
  return typeof path === 'string' ? path : undefined;
};

/** Whether `path` is `dir` or inside it; a failure naming no path is taken as the data directory's. */
function isInside(path: string | undefined, dir: string): boolean {
  if (path === undefined) return true;
  const rel = relative(resolve(dir), resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** SQLite refused a write because another connection held the write lock past the busy timeout. */
export const isDatabaseBusy = (err: unknown): boolean => codeOf(err).startsWith('SQLITE_BUSY');

/**
 * A storage failure (a full disk, a read-only or forbidden directory) as a clear domain error, or
 * undefined for anything else. better-sqlite3 reports SQLite's codes (`SQLITE_FULL`, `SQLITE_READONLY…`,
 * `SQLITE_CANTOPEN`), Node its errno names.
 */
export function storageFailure(err: unknown, dataDir: string): DomainError | undefined {
  if (err instanceof DomainError) return undefined;
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (FULL.has(code)) return new DiskFull(dataDir);
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return new DatabaseDamaged(dataDir, message.startsWith(code) ? message : `${code}: ${message}`);
  }
  // A forbidden path outside the data directory (a file given to ingest, a keypair to import) is that
  // file's problem, not the data directory's: it was blamed on the data directory, as a 500.
  if (NOT_WRITABLE.has(code) && !isInside(pathOf(err), dataDir)) return undefined;
  if (NOT_WRITABLE.has(code) || code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN') {
    return new DataDirNotWritable(dataDir, message.startsWith(code) ? message : `${code}: ${message}`);
  }
  return undefined;
}
