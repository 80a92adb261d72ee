import { MemloomError } from '@memloom/core';
import type { Database } from 'better-sqlite3';
import { BACKEND, loadVectorExtension, openConnection, toStoreError } from './connection.js';
import type { ResolvedOptions } from './options.js';
import { assertUsable, migrate, readFileState, SCHEMA_VERSION } from './schema.js';

/**
 * Open (or take) the connection and make it ready: refuse files this
 * package must not touch before writing anything, then WAL and pragmas,
 * then migrations under the write lock. Closes what it opened on failure.
 */
export function openDatabase(path: string, options: ResolvedOptions): Database {
  const injected = options.database;
  const database = injected ?? openConnection(path, options.busyTimeoutMs);
  try {
    const state = readFileState(database);
    assertUsable(state, path);
    loadVectorExtension(database);
    if (!database.memory) {
      database.pragma('journal_mode = WAL');
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
    throw toStoreError(error, `opening ${path}`);
  }
  return database;
}
