import { resolve } from 'node:path';
import { describeValue, MemloomError } from '@memloom/core';
import type { Database } from 'better-sqlite3';
import { BACKEND } from './connection.js';

/**
 * Where the embedded default keeps its memories, relative to the working
 * directory: one file, with `-wal` and `-shm` files beside it while open.
 */
export const DEFAULT_SQLITE_PATH = '.memloom/memory.db';

/** Environment variable that overrides DEFAULT_SQLITE_PATH. */
export const SQLITE_PATH_ENV = 'MEMLOOM_SQLITE_PATH';

export interface SqliteStoreOptions {
  /**
   * The database file, created with its folder when missing (unless
   * `mustExist`), or `':memory:'` for a store that lives and dies with the
   * process. Relative paths resolve against the working directory. Required
   * unless `database` is given. A file this process may not write (its mode,
   * a read-only disk, or -shm and -wal files of another user beside it) is
   * opened read-only: it is read and searched (recording no access time;
   * keyword terms of an older tokenizer are searched as they are), and writes
   * are STORE_ERROR saying it is read-only.
   */
  path?: string;
  /**
   * Open `path` only if the file exists: a missing one is MISSING_RESOURCE
   * naming the path, and neither the file nor its folder is created (for
   * tools that only read, where a mistyped path must not leave an empty
   * store behind). No effect on `':memory:'` or a given `database`.
   * @default false (a missing file is created, with its folder)
   */
  mustExist?: boolean;
  /**
   * An open better-sqlite3 connection to use instead of opening `path` (for
   * tests or a custom build). sqlite-vec is loaded into it. `close()` leaves
   * it open: whoever opened it closes it. One opened `readonly` is read as a
   * file this process may not write is: searches record no access time, and
   * writes are STORE_ERROR.
   * @default undefined (the store opens `path` itself)
   */
  database?: Database;
  /**
   * How long one attempt waits for another connection's write lock, in
   * milliseconds. A write that still finds the file locked is retried a few
   * times with backoff before it fails with STORE_ERROR.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Vectors per sqlite-vec chunk. Each user's vectors live in chunks of
   * their own, so one chunk (chunkSize x dimension x 4 bytes) is the least a
   * user costs on disk; larger chunks scan a little faster. Used when the
   * vector table is created; a multiple of 8.
   * @default 256
   */
  vectorChunkSize?: number;
  /**
   * Bytes of the file SQLite may read through a memory map (`PRAGMA
   * mmap_size`). Searches that scan many vectors read them without a copy
   * through the page cache; 0 turns it off.
   * @default 1073741824 (1 GiB of address space, used only as the file grows)
   */
  mmapSizeBytes?: number;
  /**
   * Run SQLite's `quick_check` when the file is opened, reading every page.
   * Damage is otherwise reported (STORE_CORRUPT) when a read reaches it.
   * @default false
   */
  checkIntegrity?: boolean;
  /**
   * Keep a copy of the live vectors in process memory and search it with
   * core's FlatVectorIndex (an exact SIMD scan, about six times faster than
   * sqlite-vec's) instead of sqlite-vec. Same answers; costs 4 bytes per
   * dimension per memory held, plus a 64-byte code for approximate lookups
   * (about 200 MB for 100,000 memories of 484 dimensions). It holds the users
   * searched: a user's vectors are read at the first search in their scope,
   * every vector at the first search without a user; the store's very first
   * vector search is sqlite-vec's, so a process that searches once reads
   * none. Kept in step with this connection's writes
   * and, through the file's change log, with other processes'. Falls back to
   * sqlite-vec where WebAssembly SIMD is missing.
   * @default true
   */
  vectorMirror?: boolean;
  /**
   * The most process memory the copy of `vectorMirror` may take, in bytes.
   * A store whose vectors need more (when the copy is read, or as it grows)
   * searches with sqlite-vec instead, as with `vectorMirror: false`.
   * @default 1073741824 (1 GiB: about 530,000 memories of 484 dimensions)
   */
  vectorMirrorMaxBytes?: number;
  /**
   * When core looks for the memory a new one may merge into (an `approximate`
   * vector query), a user with at least this many memories is searched
   * through bit codes in the `vectorMirror` copy (core's `FlatVectorIndex`):
   * about 1 ms instead of 8 ms at 100,000 memories of 484 dimensions, with a
   * small chance of missing the nearest memory (measured in the README).
   * Searches are exact whatever this says. `Infinity` keeps every lookup exact.
   * @default 5000
   */
  vectorApproximateFrom?: number;
}

/**
 * The path the embedded default uses: `MEMLOOM_SQLITE_PATH` when set, else
 * DEFAULT_SQLITE_PATH under `cwd`, as an absolute path.
 */
export function resolveDefaultSqlitePath(env: Record<string, string | undefined> = process.env, cwd: string = process.cwd()): string {
  const fromEnv = env[SQLITE_PATH_ENV]?.trim();
  if (fromEnv === ':memory:') return fromEnv;
  return resolve(cwd, fromEnv ? fromEnv : DEFAULT_SQLITE_PATH);
}

export type ResolvedOptions = SqliteStoreOptions & {
  vectorChunkSize: number;
  busyTimeoutMs: number;
  mmapSizeBytes: number;
  vectorMirror: boolean;
  vectorMirrorMaxBytes: number;
  vectorApproximateFrom: number;
};

// Every option of SqliteStoreOptions, no more and no fewer: the compiler checks the list both ways.
const OPTION_KEYS = new Set(
  Object.keys({ path: true, mustExist: true, database: true, busyTimeoutMs: true, vectorChunkSize: true, mmapSizeBytes: true, checkIntegrity: true, vectorMirror: true, vectorMirrorMaxBytes: true, vectorApproximateFrom: true } satisfies Record<keyof SqliteStoreOptions, true>),
);

/** Check options at the boundary and fill in the defaults; INVALID_OPTIONS names the field (an unknown one too). */
export function resolveOptions(options: SqliteStoreOptions): ResolvedOptions {
  if (!options || typeof options !== 'object') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: 'createSqliteStore needs an options object with a path' });
  }
  if (options.database !== undefined && (typeof options.database !== 'object' || options.database === null || typeof (options.database as { prepare?: unknown }).prepare !== 'function')) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: 'options.database must be an open better-sqlite3 Database' });
  }
  if (options.database === undefined && (typeof options.path !== 'string' || options.path.trim() === '')) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: "options.path must be a file path or ':memory:'" });
  }
  const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.has(key));
  if (unknown.length > 0) {
    // A misspelt option (vectorMirow) would otherwise be ignored, and its default used without a word.
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${[...OPTION_KEYS].join(', ')})` });
  }
  if (options.mustExist !== undefined && typeof options.mustExist !== 'boolean') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `mustExist must be true or false, got ${describeValue(options.mustExist)}` });
  }
  const vectorChunkSize = options.vectorChunkSize ?? 256;
  if (!Number.isInteger(vectorChunkSize) || vectorChunkSize < 8 || vectorChunkSize % 8 !== 0) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `vectorChunkSize must be a positive multiple of 8, got ${describeValue(vectorChunkSize)}` });
  }
  const mmapSizeBytes = options.mmapSizeBytes ?? 1024 ** 3;
  if (!Number.isInteger(mmapSizeBytes) || mmapSizeBytes < 0) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `mmapSizeBytes must be an integer >= 0, got ${describeValue(mmapSizeBytes)}` });
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isFinite(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `busyTimeoutMs must be a number >= 0, got ${describeValue(busyTimeoutMs)}` });
  }
  const vectorMirror = options.vectorMirror ?? true;
  if (typeof vectorMirror !== 'boolean') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `vectorMirror must be true or false, got ${describeValue(vectorMirror)}` });
  }
  const vectorMirrorMaxBytes = options.vectorMirrorMaxBytes ?? 1024 ** 3;
  if (!Number.isInteger(vectorMirrorMaxBytes) || vectorMirrorMaxBytes <= 0) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: BACKEND, message: `vectorMirrorMaxBytes must be a positive integer, got ${describeValue(vectorMirrorMaxBytes)}` });
  }
  const vectorApproximateFrom = options.vectorApproximateFrom ?? 5_000;
  if (vectorApproximateFrom !== Infinity && !(Number.isInteger(vectorApproximateFrom) && vectorApproximateFrom >= 1)) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: BACKEND,
      message: `vectorApproximateFrom must be a positive integer or Infinity, got ${describeValue(vectorApproximateFrom)}`,
    });
  }
  return { ...options, vectorChunkSize, busyTimeoutMs, mmapSizeBytes, vectorMirror, vectorMirrorMaxBytes, vectorApproximateFrom };
}
