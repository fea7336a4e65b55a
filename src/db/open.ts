import { accessSync, constants, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { getLoadablePath } from 'sqlite-vec';
import { claimScratch } from '../core/uploads/scratch';
import { DatabaseLost, DataDirNotADirectory, storageFailure } from '../core/uploads/storageErrors';
import { migrate } from './migrations';

export type Db = Database.Database;

export interface OpenOptions {
  /**
   * Path of a better_sqlite3.node built for another runtime. Electron passes its own build here so the
   * copy in node_modules stays the one plain Node (CLI, tests, serve) loads.
   */
  nativeBinding?: string;
  /** Stop migrating at this version (tests of upgrades from old databases). */
  migrateTo?: number;
}

export const DATABASE_FILE = 'kbstudio.db';
/** Scratch space of ingestions (received uploads, extracted archives, staging databases). */
export const SCRATCH_DIR = 'tmp';
/** The listings' vectors files (src/db/vectorFile.ts): copies of `embeddings`, written again when stale. */
export const VECTOR_FILES_DIR = 'vectors';
/** The full-text postings saved for the next start (src/db/lexicalPostingsFile.mjs): a cache of FTS5's index. */
export const LEXICAL_POSTINGS_FILE = join('postings', 'full-text.postings');

/** Query log rows that could not be written when the services closed, written at the next start. */
export const QUERY_LOG_SPILL_FILE = 'query-log-kept.jsonl';
/**
 * The page size of a new database. With SQLite's default 4 KB, a chunk row of 1.5-2.5 KB of text shares a
 * page with one other, a 1,024-d float blob spills into an overflow page, and every B-tree (the chunks,
 * FTS5's segments, vec0's chunk blobs) is deeper and written a page more often: a 100,000-line import
 * took 20% less time and CPU with 16 KB pages (docs/performance.md, thirty-third pass). Larger pages
 * gained nothing more. SQLite fixes the size when the file is created: an existing database keeps its own.
 */
export const PAGE_SIZE = 16384;

/**
 * Opens (creating if needed) the data directory's database, loads sqlite-vec and migrates it, then
 * clears the scratch files a killed process left behind. A directory that cannot be written, or a full
 * disk, fails with a message naming the directory.
 */
export function openDataDir(dataDir: string, options: OpenOptions = {}): Db {
  try {
    makeDataDir(dataDir);
    const file = join(dataDir, DATABASE_FILE);
    refuseLostDatabase(dataDir, file);
    refuseReadOnlyDatabase(file);
    const db = openDatabase(file, options);
    try {
      claimScratch(join(dataDir, SCRATCH_DIR));
    } catch (err) {
      db.close();
      throw err;
    }
    return db;
  } catch (err) {
    throw storageFailure(err, dataDir) ?? err;
  }
}

/**
 * A database file of 0 bytes (SQLite would take it for a new, empty database) beside kept original
 * documents: the database was lost, and opening it as new would have the next start prune them all.
 */
function refuseLostDatabase(dataDir: string, file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return; // No database yet: a new data directory (or one whose database was removed on purpose).
  }
  if (size > 0) return;
  const kept = countFiles(join(dataDir, 'sources'));
  if (kept > 0) throw new DatabaseLost(file, kept);
}

/**
 * SQLite opens a database file this user may not write read-only, without a word, and the first write
 * fails; worse, the -wal and -shm files it creates then take the file's read-only mode, and keep the
 * database unwritable after its own mode is restored. So a file of the database that cannot be written
 * is refused before SQLite opens it, naming the file.
 */
function refuseReadOnlyDatabase(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      accessSync(path, constants.W_OK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

function countFiles(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

/** Creates the data directory; where it, or a folder it would be in, is a file, says which. */
function makeDataDir(dataDir: string): void {
  try {
    // Private to this user where the system has modes (wallet secrets and provider keys stored as is
    // outside the desktop app's keychain, the original documents): a folder made by --data-dir or
    // KBSTUDIO_DATA_DIR outside a private home was readable by every local user. An existing one is
    // left as its owner set it.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw err;
    // The one of the directory and its parents that is a file (a stat of a path under it is ENOTDIR).
    let path = dataDir;
    while (dirname(path) !== path && !isFile(path)) path = dirname(path);
    throw new DataDirNotADirectory(dataDir, path);
  }
}

function isFile(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const db = new Database(file, options.nativeBinding ? { nativeBinding: options.nativeBinding } : {});
  try {
    // Before anything is written: on an existing database (or one in WAL mode) this changes nothing.
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.loadExtension(vecExtensionPath());
    migrate(db, options.migrateTo);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Inside a packaged app the extension lives in app.asar.unpacked, where SQLite can dlopen it. */
export function vecExtensionPath(): string {
  return getLoadablePath().replace(/app\.asar([\\/])/, 'app.asar.unpacked$1');
}
