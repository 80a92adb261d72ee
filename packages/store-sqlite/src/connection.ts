import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MemloomError, missingStoreError, readOnlyStoreError } from '@memloom/core';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

export const BACKEND = 'sqlite';

const SQLITE_HEADER = 'SQLite format 3\u0000';

/** True for a path SQLite keeps in memory only. */
export function isMemoryPath(path: string): boolean {
  return path === ':memory:' || path === '';
}

/**
 * Open the file without writing to it: refuse (STORE_CORRUPT) a file that is
 * not an SQLite database before SQLite sees it, refuse (INVALID_OPTIONS) a
 * path that is a folder or lies under a file, and create the folder of a
 * file that does not exist yet, unless `mustExist` (then MISSING_RESOURCE,
 * and nothing is created). A file this process may not write (its mode, a
 * read-only mount) is opened read-only: it can be read, never written.
 */
export function openConnection(path: string, busyTimeoutMs: number, mustExist = false): Database {
  const onDisk = !isMemoryPath(path);
  let readonly = false;
  if (onDisk) {
    try {
      if (existsSync(path)) {
        assertSqliteHeader(path);
        // Writable, but with a -shm or -wal file this process may not write beside it: SQLite reads it
        // (a connection opened to write fails every write), so it is read as a file it may not write.
        readonly = !writable(path) || unwritableWalFile(path) !== undefined;
      } else {
        // A path under a file is a wrong option whether or not the store must exist.
        assertFolderPossible(path);
        if (mustExist) throw missingFile(path);
        mkdirSync(dirname(path), { recursive: true });
      }
    } catch (error) {
      // A folder that cannot be made (a file in its place, no permission) or a file that cannot be read.
      throw toStoreError(error, `cannot open ${path}`);
    }
  }
  let database: Database;
  try {
    // fileMustExist: a file removed since the check above is not made again either.
    database = new BetterSqlite3(path, { timeout: busyTimeoutMs, fileMustExist: onDisk && mustExist, readonly });
  } catch (error) {
    if (onDisk && mustExist && !existsSync(path)) throw missingFile(path, error);
    throw toStoreError(error, `cannot open ${path}`);
  }
  return database;
}

/**
 * STORE_ERROR for a write to a file opened read-only (`openConnection`), or through a read-only
 * connection given (core's `readOnlyStoreError`): `details: { path, readonly: true }`, and `file` when
 * the cause is a -shm or -wal file beside it that this process may not write.
 */
export function readOnlyError(path: string, doing: string): MemloomError {
  // The file's own mode first: a reader's -shm and -wal take the mode of a file it may not write.
  const walFile = writable(path) ? unwritableWalFile(path) : undefined;
  return readOnlyStoreError({
    backend: BACKEND,
    doing,
    what: path,
    why: walFile ? `: SQLite writes it through ${walFile}, which this process may not write ${walAdvice(path, walFile)}` : ' (its permissions, or a read-only disk)',
    details: { path, ...(walFile ? { file: walFile } : {}) },
  });
}

/** What to do about a -shm or -wal file in the way: its owner is another user (a reader's), or this one (left with a read-only mode). */
function walAdvice(path: string, walFile: string): string {
  const uid = process.getuid?.();
  const remove = `once no process has the store open, remove ${path}-shm and ${path}-wal if the -wal file is empty (a reader's is)`;
  if (uid !== undefined && statSync(walFile).uid !== uid) {
    return `(SQLite leaves a read-only reader's -shm and -wal files behind, owned by the reader, with the mode the file had); ${remove}, or have their owner changed to this user`;
  }
  return `(it is this user's, with the mode the file had when a read-only reader made it); make the -shm and -wal files writable (chmod u+w), or ${remove}`;
}

/** A -shm or -wal file beside the database that this process may not write (a reader's: of another user, or of this one while the file was read-only), if any. */
function unwritableWalFile(path: string): string | undefined {
  return [`${path}-shm`, `${path}-wal`].find((file) => existsSync(file) && !writable(file));
}

/** Whether this process may write the file (as root, always, unless the disk is mounted read-only: permissions do not bind root). */
function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function missingFile(path: string, cause?: unknown): MemloomError {
  return missingStoreError({ backend: BACKEND, where: `at ${path}`, what: 'the file does not exist', check: 'the path', details: { path }, cause });
}

/** Load sqlite-vec into a connection. */
export function loadVectorExtension(database: Database): void {
  try {
    sqliteVec.load(database);
  } catch (error) {
    throw new MemloomError({
      code: 'MISSING_RESOURCE',
      backend: BACKEND,
      message: `cannot load the sqlite-vec extension: ${(error as Error).message}`,
      cause: error,
    });
  }
}

/** A path that is not a regular file: a folder (the likely mistake, said as such) or something else. */
function notAFile(path: string, folder: boolean): MemloomError {
  return new MemloomError({
    code: 'INVALID_OPTIONS',
    backend: BACKEND,
    message: folder
      ? `path ${path} is a folder; give the path of the database file, such as ${join(path, 'memory.db')}`
      : `path ${path} is not a regular file; give the path of a database file`,
    details: { path },
  });
}

function assertSqliteHeader(path: string): void {
  const stats = statSync(path);
  if (!stats.isFile()) throw notAFile(path, stats.isDirectory());
  const header = Buffer.alloc(16);
  const descriptor = openSync(path, 'r');
  let read: number;
  try {
    read = readSync(descriptor, header, 0, 16, 0);
  } finally {
    closeSync(descriptor);
  }
  // An empty file is a new database to SQLite; anything else must carry its header.
  if (read === 0) return;
  if (read < 16 || header.toString('latin1') !== SQLITE_HEADER) {
    throw new MemloomError({
      code: 'STORE_CORRUPT',
      backend: BACKEND,
      message: `${path} is not an SQLite database; it was left untouched. Point the store at another path, or move the file away`,
      details: { path },
    });
  }
}

/**
 * A path that is a folder, or lies under a file, refused (INVALID_OPTIONS)
 * when the store is created, so that configuration naming it is blamed for it.
 * Checked again on open (it may change in between).
 */
export function assertPathShape(path: string): void {
  if (isMemoryPath(path)) return;
  // existsSync, not statSync's throwIfNoEntry: a path under a file is ENOTDIR, which this must report itself.
  const stats = existsSync(path) ? statSync(path) : undefined;
  if (stats?.isDirectory()) throw notAFile(path, true);
  if (!stats) assertFolderPossible(path);
}

/** The nearest existing folder above `path` must be a folder: a file there would leave mkdir an EEXIST to say. */
function assertFolderPossible(path: string): void {
  let above = dirname(path);
  while (!existsSync(above) && dirname(above) !== above) above = dirname(above);
  if (existsSync(above) && !statSync(above).isDirectory()) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: BACKEND,
      message: `path ${path} lies under ${above}, which is a file, not a folder; give a path whose folders are folders`,
      details: { path, file: above },
    });
  }
}

interface SqliteFailure {
  code?: unknown;
  message?: unknown;
}

/** SQLITE_BUSY and SQLITE_LOCKED (with their extended codes): another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  const code = (error as SqliteFailure | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Wrap a driver failure: damage becomes STORE_CORRUPT, anything else STORE_ERROR. MemloomErrors pass
 * through. `path`, the database file's, names its folder when that folder is what is read-only.
 */
export function toStoreError(error: unknown, doing: string, path?: string): MemloomError {
  if (MemloomError.isInstance(error)) return error;
  const code = (error as SqliteFailure | undefined)?.code;
  const text = error instanceof Error ? error.message : String(error);
  const corrupt = typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
  if (code === 'SQLITE_READONLY_DIRECTORY' || (code === 'SQLITE_CANTOPEN' && path !== undefined && cannotMakeShm(path))) {
    // SQLite says "attempt to write a readonly database" for it, on a read too; on a read-only disk
    // (EROFS, such as a docker `:ro` mount) it says only "unable to open database file".
    const folder = path === undefined ? 'its folder' : dirname(path);
    return readOnlyStoreError({
      backend: BACKEND,
      doing,
      what: folder,
      why: `, and SQLite cannot read a database in WAL mode without making its -shm and -wal files beside it (${text}); make the folder writable, or copy the database into one that is`,
      cause: error,
      details: { ...(path === undefined ? {} : { path: folder }), sqliteCode: code },
    });
  }
  return new MemloomError({
    code: corrupt ? 'STORE_CORRUPT' : 'STORE_ERROR',
    backend: BACKEND,
    message: corrupt ? `${doing}: the database file is damaged (${text}); it was not modified. Restore it from a backup` : `${doing}: ${text}`,
    cause: error,
    ...codeDetails(error),
  });
}

/** The failure's code, as SQLite's (`sqliteCode`) or, from the file system (EACCES making the folder), the system's (`systemCode`). */
function codeDetails(error: unknown): { details?: Record<string, string> } {
  const { code, syscall } = (error ?? {}) as SqliteFailure & { syscall?: unknown };
  if (typeof code !== 'string') return {};
  if (code.startsWith('SQLITE_')) return { details: { sqliteCode: code } };
  return typeof syscall === 'string' ? { details: { systemCode: code, syscall } } : {};
}

/**
 * Whether SQLite could not open the file for want of a -shm file it may not make: none exists, and the
 * folder is not writable. (`immutable=1` would let SQLite read without one, but it turns off every lock
 * and change check: beside a writer, such as a host writing a folder a container mounts `:ro`, a reader
 * could see a commit half made, and SQLite warns of wrong results and SQLITE_CORRUPT then.)
 */
function cannotMakeShm(path: string): boolean {
  return !existsSync(`${path}-shm`) && !writable(dirname(path));
}

/** Retries after SQLITE_BUSY, on top of the busy timeout each attempt already waited. */
const BUSY_RETRIES = 6;

/**
 * Run `task` (one transaction or one read), retrying while another
 * connection holds the lock so that "database is locked" never reaches the
 * caller unless the lock outlasts every retry.
 */
export async function withBusyRetry<T>(task: () => T, doing: string): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return task();
    } catch (error) {
      if (!isBusy(error) || attempt >= BUSY_RETRIES) {
        if (isBusy(error)) {
          throw new MemloomError({
            code: 'STORE_ERROR',
            backend: BACKEND,
            message: `${doing}: another connection kept the database locked through ${BUSY_RETRIES + 1} attempts; try again later`,
            cause: error,
          });
        }
        throw toStoreError(error, doing);
      }
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt + Math.random() * 20));
    }
  }
}
