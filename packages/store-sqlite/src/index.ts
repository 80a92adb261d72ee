export { createSqliteStore, createDefaultSqliteStore } from './sqlite-store.js';
export type { SqliteStore } from './sqlite-store.js';
export { DEFAULT_SQLITE_PATH, SQLITE_PATH_ENV, resolveDefaultSqlitePath } from './options.js';
export type { SqliteStoreOptions } from './options.js';
export { SCHEMA_VERSION } from './schema.js';
export type { VectorMirrorStatus } from './vector-mirror.js';
