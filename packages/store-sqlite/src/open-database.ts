import { MemloomError, missingStoreError } from '@memloom/core';
import type { Database } from 'better-sqlite3';
import { BACKEND, loadVectorExtension, openConnection, readOnlyError, toStoreError } from './connection.js';
import type { ResolvedOptions } from './options.js';
import { assertUsable, migrate, readFileState, SCHEMA_VERSION } from './schema.js';

/**
 * The page size of a new database file (SQLite's default is 4,096). sqlite-vec
 * keeps each chunk of vectors as one blob over a chain of overflow pages,
 * which it walks from the start to reach one vector (every delete does, twice):
 * 8 KiB pages halve those chains and the pages each commit and checkpoint
 * handle. At 100,000 memories, in alternating bench runs at load 1.1, a
 * maintenance pass took 4.83 and 5.12 s against 5.47 and 5.75 s, adds in
 * batches ran 15 % faster, searches took the same, the file was 1 % smaller;
 * 16 KiB pages made vector searches slower (63 ms against 55 ms unscoped).
 */
export const PAGE_SIZE_BYTES = 8192;

/**
 * Open (or take) the connection and make it ready: refuse files this
 * package must not touch before writing anything, then WAL and pragmas,
 * then migrations under the write lock. Closes what it opened on failure.
 */
export function openDatabase(path: string, options: ResolvedOptions): Database {
  const injected = options.database;
  const database = injected ?? openConnection(path, options.busyTimeoutMs, options.mustExist);
  try {
    const state = readFileState(database);
    assertUsable(state, path);
    // An empty file (made by `touch`, or by SQLite for a reader) holds no store: mustExist writes none into it.
    if (options.mustExist && !injected && !database.memory && state.schemaVersion === 0 && state.tables === 0) throw emptyFile(path);
    loadVectorExtension(database);
    // Only a database with nothing in it yet takes a page size: its first write fixes it for good
    // (a WAL file cannot change it), so this comes before WAL mode is turned on; files made with
    // SQLite's default of 4,096 bytes keep it.
    if (state.schemaVersion === 0 && state.tables === 0) database.pragma(`page_size = ${PAGE_SIZE_BYTES}`);
    if (!database.memory) {
      // A read-only file keeps its journal mode (a memloom file is in WAL mode already: setting it is a write).
      if (!database.readonly) database.pragma('journal_mode = WAL');
      // WAL with NORMAL: a commit is atomic and survives a process crash; only a power loss may drop the last commits.
      database.pragma('synchronous = NORMAL');
      database.pragma(`mmap_size = ${options.mmapSizeBytes}`);
      database.pragma('cache_size = -32768');
    }
    if (injected) database.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    if (options.checkIntegrity) {
      const result = database.pragma('quick_check', { simple: true });
      if (result !== 'ok') throw new MemloomError({ code: 'STORE_CORRUPT', backend: BACKEND, message: `${path} failed quick_check: ${String(result)}` });
    }
    if (state.schemaVersion < SCHEMA_VERSION) {
      // A file that needs writing before it can be read (a new store, an older schema) is refused as such.
      if (database.readonly) throw readOnlyError(path, state.schemaVersion === 0 ? 'making a store' : `migrating from schema ${state.schemaVersion} to ${SCHEMA_VERSION}`);
      // Another process may be migrating the same file: check again under the write lock.
      database
        .transaction(() => {
          assertUsable(readFileState(database), path);
          migrate(database);
        })
        .immediate();
    }
  } catch (error) {
    if (!injected && database.open) database.close();
    throw toStoreError(error, `opening ${path}`, path);
  }
  return database;
}

function emptyFile(path: string): MemloomError {
  return missingStoreError({ backend: BACKEND, where: `at ${path}`, what: 'the file is empty', check: 'the path', details: { path } });
}
