import { MemloomError } from '@memloom/core';
import type { Database } from 'better-sqlite3';
import { BACKEND } from './connection.js';

/** The schema this version of the package writes (`PRAGMA user_version`). */
export const SCHEMA_VERSION = 5;

/** The `meta` key naming the version of core's tokenizer the FTS terms were made with. */
export const TERMS_META_KEY = 'tokenizer';

/** `PRAGMA application_id` of a memloom file: "MLOM". */
export const APPLICATION_ID = 0x4d4c4f4d;

/**
 * The FTS5 tokenizer: splits on whitespace only, because core's `keywordTerms` has
 * already made the terms. Format characters (C*: the zero-width non-joiner
 * inside Persian words, the soft hyphen) stay inside a term, as they do in
 * core's terms; so does U+180E (the Mongolian vowel separator), a format
 * character that SQLite's Unicode tables still file as a space. Characters
 * SQLite's tables do not know are term characters too.
 */
export const TERMS_TOKENIZER = `unicode61 remove_diacritics 0 categories 'L* M* N* P* S* C*' tokenchars '\u180E'`;

/** The text table; the tokenizer of schemas 1 to 4 split terms at format characters. */
function createTextTable(database: Database, tokenizer: string): void {
  database.exec(`
    CREATE VIRTUAL TABLE memory_text USING fts5(
      terms, scope_terms, content = '', contentless_delete = 1, tokenize = "${tokenizer}"
    );
  `);
}

/**
 * Migration n takes a database from schema n - 1 to n. They run on open,
 * all in one transaction, never on a file from a newer schema.
 */
const MIGRATIONS: ReadonlyArray<(database: Database) => void> = [
  // 1: records, versions, text terms, re-index bookkeeping. The vector table
  // is created when the dimension is known (see createVectorTable).
  (database) => {
    database.exec(`
      CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;

      CREATE TABLE memories (
        row_id INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT,
        agent_id TEXT,
        session_id TEXT,
        content TEXT NOT NULL,
        level TEXT NOT NULL,
        weight REAL NOT NULL,
        base_weight REAL NOT NULL,
        importance REAL NOT NULL,
        base_importance REAL NOT NULL,
        category TEXT NOT NULL,
        memory_type TEXT NOT NULL,
        source TEXT NOT NULL,
        verified INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_accessed_at TEXT NOT NULL,
        sources TEXT NOT NULL,
        tags TEXT NOT NULL,
        metadata TEXT NOT NULL,
        revision INTEGER NOT NULL
      );
      CREATE INDEX memories_by_user ON memories (user_id, created_at);
      CREATE INDEX memories_by_agent ON memories (agent_id);
      CREATE INDEX memories_by_session ON memories (session_id);

      -- A rowid table: its rows (two JSON records, ~1.5 KB) fit in a leaf page, where a
      -- WITHOUT ROWID table would spill each into an overflow page of its own.
      CREATE TABLE versions (
        memory_row INTEGER NOT NULL,
        version INTEGER NOT NULL,
        at TEXT NOT NULL,
        change_trigger TEXT NOT NULL,
        change_action TEXT NOT NULL,
        reason TEXT NOT NULL,
        before_json TEXT,
        after_json TEXT NOT NULL
      );
      CREATE UNIQUE INDEX versions_by_memory ON versions (memory_row, version);

      CREATE TABLE reindex_staged (
        row_id INTEGER PRIMARY KEY,
        revision INTEGER NOT NULL
      );
    `);
    // Contentless: the index only; rows are deleted by rowid without reading their text back.
    createTextTable(database, `unicode61 remove_diacritics 0 categories 'L* M* N* P* S* Co'`);
  },
  // 2: a version's `before` is kept as a patch against its `after` (version-patch.ts), not
  // as a second whole record. Rows written by schema 1 keep before_json and are read as they are.
  (database) => {
    database.exec('ALTER TABLE versions ADD COLUMN before_patch TEXT');
  },
  // 3: a memory's context (`MemoryRecord.context`), NULL when it has none. Its terms join the
  // content's in the FTS row when the memory is next written; rows from schema 2 have no context.
  (database) => {
    database.exec('ALTER TABLE memories ADD COLUMN context TEXT');
  },
  // 4: which rows' live vectors each write transaction changed (a JSON array of row ids), in
  // commit order (vector-mirror.ts): a connection holding the vectors in memory catches up on
  // other connections' commits from here instead of reading every vector again. Only the
  // newest entries are kept.
  (database) => {
    database.exec('CREATE TABLE vector_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, row_ids TEXT NOT NULL)');
  },
  // 5: the text table under a tokenizer that keeps format characters inside terms (schema 4's
  // split "می‌خواهم" into two terms that core's tokenize never makes, so a search for "می" found
  // it here and in no other store). A tokenizer cannot be changed in place: the table is made
  // again, empty, and forgetting the terms' tokenizer version makes open() fill it (refreshTerms).
  (database) => {
    database.exec('DROP TABLE memory_text');
    createTextTable(database, TERMS_TOKENIZER);
    writeMeta(database, TERMS_META_KEY, undefined);
  },
];

/** Which embedder a vector table holds vectors of. Kept in `meta` as JSON. */
export interface VectorBinding {
  dimension: number;
  embedderId: string;
  table: string;
}

export interface FileState {
  schemaVersion: number;
  applicationId: number;
  tables: number;
}

/** Read what the file says about itself; touching sqlite_master parses the schema, so damage shows here. */
export function readFileState(database: Database): FileState {
  return {
    schemaVersion: database.pragma('user_version', { simple: true }) as number,
    applicationId: database.pragma('application_id', { simple: true }) as number,
    tables: (database.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n,
  };
}

/** Refuse a file this package must not write to. */
export function assertUsable(state: FileState, path: string): void {
  if (state.schemaVersion > SCHEMA_VERSION) {
    throw new MemloomError({
      code: 'SCHEMA_TOO_NEW',
      backend: BACKEND,
      message: `${path} was written by a newer @memloom/store-sqlite (schema ${state.schemaVersion}; this one knows up to ${SCHEMA_VERSION}). It was left untouched; upgrade @memloom/store-sqlite to open it`,
      details: { path, schemaVersion: state.schemaVersion, supported: SCHEMA_VERSION },
    });
  }
  const foreign = state.schemaVersion > 0 ? state.applicationId !== APPLICATION_ID : state.tables > 0;
  if (foreign) {
    throw new MemloomError({
      code: 'STORE_CORRUPT',
      backend: BACKEND,
      message: `${path} is an SQLite database, but not a memloom one; it was left untouched. Point the store at another path`,
      details: { path },
    });
  }
}

/** Bring the schema up to date; call inside a write transaction, after assertUsable. */
export function migrate(database: Database): void {
  const current = database.pragma('user_version', { simple: true }) as number;
  for (let version = current + 1; version <= SCHEMA_VERSION; version++) MIGRATIONS[version - 1]!(database);
  if (current < SCHEMA_VERSION) {
    database.pragma(`application_id = ${APPLICATION_ID}`);
    database.pragma(`user_version = ${SCHEMA_VERSION}`);
  }
}

export function readMeta(database: Database, key: string): string | undefined {
  const row = database.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function writeMeta(database: Database, key: string, value: string | undefined): void {
  if (value === undefined) database.prepare('DELETE FROM meta WHERE key = ?').run(key);
  else database.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
}

/**
 * A sqlite-vec table for vectors of one dimension, partitioned by user so a
 * search inside one user's scope reads that user's chunks only. Vectors are
 * stored unit-length and compared by L2 distance, which orders them exactly
 * as cosine does and is the faster scan in sqlite-vec.
 */
export function createVectorTable(database: Database, name: string, dimension: number, chunkSize: number): void {
  if (!/^memory_vectors_\d+$/.test(name)) throw new Error(`unexpected vector table name ${name}`);
  database.exec(
    `CREATE VIRTUAL TABLE ${name} USING vec0(embedding float[${dimension}] distance_metric=l2, user_key text partition key, chunk_size=${chunkSize})`,
  );
}

export function dropVectorTable(database: Database, name: string): void {
  if (!/^memory_vectors_\d+$/.test(name)) throw new Error(`unexpected vector table name ${name}`);
  database.exec(`DROP TABLE IF EXISTS ${name}`);
}
