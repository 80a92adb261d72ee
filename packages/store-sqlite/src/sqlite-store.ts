import { resolve } from 'node:path';
import {
  assertDeleteScope,
  assertQueryInput,
  assertQueryScope,
  byScoreThenId,
  listCursor,
  MemloomError,
  numericPageQuery,
  type ListQuery,
  type MemoryChange,
  type MemoryFilter,
  type MemoryPage,
  type MemoryRecord,
  type MemoryStore,
  type MemoryVersion,
  type PageQuery,
  type ReindexStatus,
  type Scope,
  type ScoredMemory,
  type StagedVector,
  type StoreCapabilities,
  type StoreOpenOptions,
  type TextQuery,
  type VectorQuery,
} from '@memloom/core';
import type { Database, Statement } from 'better-sqlite3';
import { assertPathShape, BACKEND, isMemoryPath, readOnlyError, withBusyRetry } from './connection.js';
import { openDatabase } from './open-database.js';
import { resolveDefaultSqlitePath, resolveOptions, type ResolvedOptions, type SqliteStoreOptions } from './options.js';
import { RECORD_COLUMNS, rowToRecord, rowToVersion, VERSION_COLUMNS, type MemoryRow, type VersionRow } from './rows.js';
import {
  createVectorTable,
  dropVectorTable,
  readMeta,
  writeMeta,
  type VectorBinding,
} from './schema.js';
import { exactSearch, knnSearch, MAX_KNN, mirrorNeighbours, partitionOf, searchText, sqliteVecNeighbours, type Statements } from './search.js';
import { refreshTerms, termsOutdated } from './terms-version.js';
import { matchExpression } from './text.js';
import { VectorMirror, type VectorMirrorStatus } from './vector-mirror.js';
import { floatsOfBlob, fromVectorBlob, toVectorBlob } from './vectors.js';
import { buildWhere } from './where.js';
import { userKey, validateChange, Writer, type VectorTables } from './writes.js';

/** A MemoryStore in one SQLite file, with the re-index methods always present. */
export interface SqliteStore extends MemoryStore {
  /** The database file (absolute), or `:memory:`. */
  readonly path: string;
  textSearch(query: TextQuery): Promise<ScoredMemory[]>;
  beginReindex(target: StoreOpenOptions): Promise<ReindexStatus>;
  pendingReindex(limit: number): Promise<MemoryRecord[]>;
  stageReindex(vectors: readonly StagedVector[]): Promise<number>;
  commitReindex(): Promise<void>;
  abortReindex(): Promise<void>;
  /** The in-memory copy of the vectors (option `vectorMirror`): whether searches use it, and what it holds. */
  vectorMirrorStatus(): VectorMirrorStatus;
}

/**
 * The embedded default store: records, versions, FTS5 text terms and
 * sqlite-vec vectors in one SQLite file (WAL mode), every write in one
 * transaction. See the package README for the layout and guarantees.
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteMemoryStore(resolveOptions(options));
}

/** The store at the documented default path (MEMLOOM_SQLITE_PATH, else ./.memloom/memory.db). */
export function createDefaultSqliteStore(options: Omit<SqliteStoreOptions, 'path' | 'database'> = {}): SqliteStore {
  return createSqliteStore({ ...options, path: resolveDefaultSqlitePath() });
}

class SqliteMemoryStore implements SqliteStore {
  readonly name = BACKEND;
  readonly path: string;
  readonly capabilities: StoreCapabilities;
  private readonly options: ResolvedOptions;
  private database: Database | undefined;
  private writer: Writer | undefined;
  /** Prepared statements, cached by their text. */
  private readonly statements: Statements = { sql: (text) => this.sql(text), raw: (text) => this.raw(text) };
  private readonly prepared = new Map<string, Statement>();
  private readonly mirror: VectorMirror;
  private closed = false;
  /**
   * The embedder this store serves: the one its last `open()` was given, or
   * the target of a re-index it committed. Another process may re-index the
   * file meanwhile; this store's vectors and queries are then of the old
   * embedder, and writes and searches with them are refused.
   */
  private openedFor: StoreOpenOptions | undefined;
  /** The target of this store's last `beginReindex`, until it commits or aborts. */
  private begunTarget: StoreOpenOptions | undefined;

  constructor(options: ResolvedOptions) {
    this.options = options;
    const injected = options.database;
    const memory = injected ? injected.memory : isMemoryPath(options.path as string);
    this.path = memory ? ':memory:' : resolve(injected ? injected.name : (options.path as string));
    // A folder, or a path under a file, is a wrong option: said now, where the options came from.
    if (!injected) assertPathShape(this.path);
    this.capabilities = { textSearch: true, persistent: !memory, multiProcess: !memory, reindex: true, listPage: true, listAfter: true, readMany: true };
    this.mirror = new VectorMirror(options.vectorMirror, options.vectorMirrorMaxBytes, options.vectorApproximateFrom);
  }

  // -------------------------------------------------------------------------
  // open / close
  // -------------------------------------------------------------------------

  async open(options: StoreOpenOptions): Promise<void> {
    const database = this.connect();
    if (!Number.isInteger(options?.dimension) || options.dimension <= 0 || typeof options.embedderId !== 'string' || options.embedderId === '') {
      throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'open() needs a positive integer dimension and an embedderId' });
    }
    // Reads of the file's settings go through the typed error mapping: a damaged page is STORE_CORRUPT naming the file.
    const reading = `reading the settings of ${this.path}`;
    let binding = await this.read(reading, () => this.binding());
    if (!binding) {
      binding = await this.write(`recording the vector dimension in ${this.path}`, () => {
        const existing = this.binding();
        if (existing) return existing;
        const created: VectorBinding = { dimension: options.dimension, embedderId: options.embedderId, table: 'memory_vectors_1' };
        createVectorTable(database, created.table, created.dimension, this.options.vectorChunkSize);
        writeMeta(database, 'vectors', JSON.stringify(created));
        return created;
      });
    }
    // A file this process may not write keeps its terms: searched with them (an older tokenizer's terms
    // match a little differently) until a process that may write it opens it.
    if (!database.readonly && (await this.read(reading, () => termsOutdated(database)))) {
      await this.write(`re-indexing the keywords of ${this.path} for the current tokenizer`, () => refreshTerms(database));
    }
    const pending = await this.read(reading, () => this.reindexTarget());
    const advice = pending
      ? `a re-index to ${pending.embedderId} is in progress; run reindex({ store, embedder }) from @memloom/core again to finish it`
      : `to switch, run reindex({ store, embedder }) from @memloom/core with the new embedder: it re-embeds every memory, shows progress, and resumes if interrupted`;
    if (binding.dimension !== options.dimension) {
      throw new MemloomError({
        code: 'DIMENSION_MISMATCH',
        backend: BACKEND,
        message: `${this.path} holds vectors of dimension ${binding.dimension} from ${binding.embedderId}; the embedder ${options.embedderId} gives ${options.dimension}. ${advice}`,
        details: { expected: binding.dimension, actual: options.dimension, embedderId: binding.embedderId },
      });
    }
    if (binding.embedderId !== options.embedderId) {
      throw new MemloomError({
        code: 'EMBEDDER_MISMATCH',
        backend: BACKEND,
        message: `${this.path} was indexed by ${binding.embedderId}, not ${options.embedderId}. ${advice}`,
        details: { stored: binding.embedderId, requested: options.embedderId },
      });
    }
    this.openedFor = { dimension: binding.dimension, embedderId: binding.embedderId };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const database = this.database;
    this.database = undefined;
    this.prepared.clear();
    this.mirror.forget();
    if (database && !this.options.database && database.open) database.close();
  }

  // -------------------------------------------------------------------------
  // reads
  // -------------------------------------------------------------------------

  async get(id: string): Promise<MemoryRecord | undefined> {
    return this.read('reading a memory', () => {
      const row = this.raw(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE m.id = ?`).get(id) as MemoryRow | undefined;
      return row ? rowToRecord(row) : undefined;
    });
  }

  async getMany(ids: readonly string[]): Promise<MemoryRecord[]> {
    assertQueryInput({ ids }, 'getMany', BACKEND);
    if (ids.length === 0) return [];
    return this.read('reading memories', () => {
      const rows = this.raw(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as MemoryRow[];
      const byId = new Map(rows.map((row) => [row[1] as string, row]));
      return ids.flatMap((id) => {
        const row = byId.get(id);
        return row ? [rowToRecord(row)] : [];
      });
    });
  }

  async list(query: ListQuery): Promise<MemoryRecord[]> {
    assertQueryScope(query, 'list', BACKEND);
    assertQueryInput({ ...(query.limit !== undefined ? { limit: query.limit } : {}), ...(query.offset !== undefined ? { offset: query.offset } : {}) }, 'list', BACKEND);
    const where = buildWhere(query.scope, query.filter, query.exactScope);
    const column = { createdAt: 'm.created_at', updatedAt: 'm.updated_at', id: 'm.id', stored: 'm.row_id' }[query.orderBy ?? 'createdAt'];
    const direction = query.direction === 'desc' ? 'DESC' : 'ASC';
    // id and row_id are unique: no tie to break.
    const unique = column === 'm.id' || column === 'm.row_id';
    const order = unique ? `${column} ${direction}` : `${column} ${direction}, m.id ${direction}`;
    // After a place: a row value comparison, which SQLite answers from an index on (column, id) when one exists.
    const cursor = listCursor(query, BACKEND);
    const after = !cursor ? '' : ` AND ${unique ? column : `(${column}, m.id)`} ${direction === 'DESC' ? '<' : '>'} ${unique ? '?' : '(?, ?)'}`;
    const afterParams = !cursor ? [] : unique ? [cursor.id] : [cursor.value, cursor.id];
    return this.read('listing memories', () => {
      const rows = this.raw(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE ${where.sql}${after} ORDER BY ${order} LIMIT ? OFFSET ?`).all(
        ...where.params,
        ...afterParams,
        query.limit ?? -1,
        query.offset ?? 0,
      ) as MemoryRow[];
      return rows.map(rowToRecord);
    });
  }

  /** The cursor is the last row id given: row ids stay through updates, and a deleted row's id still marks its place. */
  async listPage(query: PageQuery): Promise<MemoryPage> {
    assertQueryScope(query, 'listPage', BACKEND);
    const { limit, after } = numericPageQuery(query, BACKEND);
    const where = buildWhere(query.scope, query.filter, query.exactScope);
    return this.read('listing memories', () => {
      const rows = this.raw(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE ${where.sql} AND m.row_id > ? ORDER BY m.row_id LIMIT ?`).all(
        ...where.params,
        after,
        limit,
      ) as MemoryRow[];
      const memories = rows.map(rowToRecord);
      return rows.length === limit ? { memories, next: String(rows[rows.length - 1]?.[0]) } : { memories };
    });
  }

  async count(query: { scope?: Scope; filter?: MemoryFilter }): Promise<number> {
    assertQueryScope(query, 'count', BACKEND);
    const where = buildWhere(query.scope, query.filter);
    return this.read('counting memories', () => (this.sql(`SELECT count(*) AS n FROM memories m WHERE ${where.sql}`).get(...where.params) as { n: number }).n);
  }

  async vectorSearch(query: VectorQuery): Promise<ScoredMemory[]> {
    assertQueryScope(query, 'vectorSearch', BACKEND);
    assertQueryInput({ limit: query.limit, vector: query.vector }, 'vectorSearch', BACKEND);
    return this.read('searching vectors', () => {
      const binding = this.binding();
      if (!binding) return [];
      this.assertStillBound(binding, 'a search');
      const blob = toVectorBlob(query.vector, binding.dimension, 'the query vector');
      if (query.limit <= 0) return [];
      const where = buildWhere(query.scope, query.filter, query.exactScope);
      const scope = query.scope ?? {};
      // Scoped by agent or session without a user: the indexes find the few rows, no partition helps.
      const exactScan = scope.userId === undefined && (scope.agentId !== undefined || scope.sessionId !== undefined);
      const exact = (): ScoredMemory[] => exactSearch(this.statements, binding.table, blob, where, query.limit);
      // Exact: ordered by distance, then id, in SQL. Given ids, only their rows are compared: the
      // partition's nearest neighbours would seldom hold them.
      if (exactScan || query.limit > MAX_KNN || query.filter?.ids) return exact();
      const partition = partitionOf(scope);
      const index = this.mirror.current(this.connect(), binding, partition);
      const nearest = index ? mirrorNeighbours(index, floatsOfBlob(blob), partition, query.approximate === true) : sqliteVecNeighbours(this.statements, binding.table, blob, partition);
      // One neighbour more than asked for: when it ties with the last one kept (identical vectors),
      // more are read until the tie ends, so the memories kept are the tie's first by id whichever
      // scan answered (the copy in memory and sqlite-vec order ties differently).
      for (let wanted = query.limit + 1; ; wanted *= 2) {
        const hits = knnSearch(this.statements, nearest, where, wanted, exact).sort(byScoreThenId);
        const tied = hits.length === wanted && query.limit > 0 && hits[wanted - 1]!.score === hits[query.limit - 1]!.score;
        if (!tied || wanted > MAX_KNN) return hits.slice(0, query.limit);
      }
    });
  }

  async textSearch(query: TextQuery): Promise<ScoredMemory[]> {
    assertQueryScope(query, 'textSearch', BACKEND);
    assertQueryInput({ limit: query.limit, text: query.text }, 'textSearch', BACKEND);
    const match = matchExpression(query.text, query.scope, query.exactScope);
    if (!match || query.limit <= 0) {
      this.connect();
      return [];
    }
    const where = buildWhere(query.scope, query.filter, query.exactScope);
    return this.read('searching text', () => searchText(this.statements, match, where, query));
  }

  async history(id: string): Promise<MemoryVersion[]> {
    return this.read('reading history', () => {
      const rows = this.sql(
        `SELECT ${VERSION_COLUMNS} FROM versions v JOIN memories m ON m.row_id = v.memory_row WHERE m.id = ? ORDER BY v.version`,
      ).all(id) as VersionRow[];
      return rows.map((row) => rowToVersion(id, row));
    });
  }

  /** Every id's versions in one statement (one read transaction), in the order asked. */
  async historyMany(ids: readonly string[]): Promise<MemoryVersion[][]> {
    if (ids.length === 0) return [];
    return this.read('reading history', () => {
      const rows = this.sql(
        `SELECT m.id AS memory_id, ${VERSION_COLUMNS} FROM memories m JOIN versions v ON v.memory_row = m.row_id
         WHERE m.id IN (SELECT value FROM json_each(?)) ORDER BY m.id, v.version`,
      ).all(JSON.stringify(ids)) as (VersionRow & { memory_id: string })[];
      const byId = new Map<string, VersionRow[]>();
      for (const row of rows) {
        const versions = byId.get(row.memory_id) ?? [];
        if (versions.length === 0) byId.set(row.memory_id, versions);
        versions.push(row);
      }
      // Records made for each id asked: an id asked twice gets two copies, as two history calls would.
      return ids.map((id) => (byId.get(id) ?? []).map((row) => rowToVersion(id, row)));
    });
  }

  /** Every id's vector in one statement, in the order asked. */
  async getVectors(ids: readonly string[]): Promise<(number[] | undefined)[]> {
    if (ids.length === 0) return [];
    return this.read('reading vectors', () => {
      const binding = this.binding();
      if (!binding) return ids.map(() => undefined);
      // Another process's re-index: these vectors are another embedder's than the one this store serves.
      this.assertStillBound(binding, 'a read of vectors');
      const rows = this.sql(
        `SELECT m.id, v.embedding FROM memories m JOIN ${binding.table} v ON v.rowid = m.row_id WHERE m.id IN (SELECT value FROM json_each(?))`,
      ).all(JSON.stringify(ids)) as { id: string; embedding: Buffer }[];
      const byId = new Map(rows.map((row) => [row.id, row.embedding]));
      return ids.map((id) => {
        const embedding = byId.get(id);
        return embedding ? fromVectorBlob(embedding) : undefined;
      });
    });
  }

  async getVector(id: string): Promise<number[] | undefined> {
    return this.read('reading a vector', () => {
      const binding = this.binding();
      if (!binding) return undefined;
      this.assertStillBound(binding, 'a read of vectors');
      const row = this.sql(`SELECT v.embedding FROM memories m JOIN ${binding.table} v ON v.rowid = m.row_id WHERE m.id = ?`).get(id) as
        | { embedding: Buffer }
        | undefined;
      return row ? fromVectorBlob(row.embedding) : undefined;
    });
  }

  // -------------------------------------------------------------------------
  // writes
  // -------------------------------------------------------------------------

  async apply(changes: readonly MemoryChange[]): Promise<void> {
    this.connect();
    if (changes.length === 0) return;
    for (const change of changes) validateChange(change);
    await this.write('applying changes', () => {
      const binding = this.binding();
      if (changes.some((change) => change.op === 'put' && change.vector !== undefined)) this.assertStillBound(binding, 'a write of vectors');
      const tables = this.vectorTables(binding);
      // Check every vector before the first row is written, so nothing is half done.
      const blobs = changes.map((change) =>
        change.op === 'put' && change.vector !== undefined
          ? toVectorBlob(change.vector, binding?.dimension ?? change.vector.length, `the vector of memory ${change.memory.id}`)
          : undefined,
      );
      const writer = this.writerFor();
      const ids = changes.map((change) => (change.op === 'delete' ? change.id : change.memory.id));
      writer.prefetch(ids);
      for (const index of writer.rowOrder(ids)) writer.change(changes[index] as MemoryChange, blobs[index], tables);
    });
  }

  async deleteByScope(scope: Scope): Promise<number> {
    assertDeleteScope(scope, BACKEND);
    const where = buildWhere(scope, undefined);
    this.connect();
    return this.write('deleting a scope', () => {
      const tables = this.vectorTables(this.binding());
      const rows = this.sql(`SELECT m.row_id FROM memories m WHERE ${where.sql} ORDER BY m.row_id`).all(...where.params) as { row_id: number }[];
      const writer = this.writerFor();
      for (const row of rows) writer.remove(row.row_id, tables);
      return rows.length;
    });
  }

  async touch(ids: readonly string[], at: string): Promise<void | false> {
    const database = this.connect();
    assertQueryInput({ ids, at }, 'touch', BACKEND);
    // A file this process may not write is read, searches included: they record no access time in it (and say so).
    if (database.readonly) return false;
    if (ids.length === 0) return;
    await this.write('recording access', () => {
      this.sql('UPDATE memories SET last_accessed_at = ? WHERE id IN (SELECT value FROM json_each(?))').run(at, JSON.stringify(ids));
    });
  }

  // -------------------------------------------------------------------------
  // re-index
  // -------------------------------------------------------------------------

  async beginReindex(target: StoreOpenOptions): Promise<ReindexStatus> {
    const database = this.connect();
    if (!Number.isInteger(target?.dimension) || target.dimension <= 0 || typeof target.embedderId !== 'string' || target.embedderId === '') {
      throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'a re-index target needs a positive integer dimension and an embedderId' });
    }
    const status = await this.write('starting a re-index', () => {
      let next = this.reindexTarget();
      if (next && !sameEmbedder(next, target)) {
        dropVectorTable(database, next.table);
        this.sql('DELETE FROM reindex_staged').run();
        writeMeta(database, 'reindex', undefined);
        next = undefined;
      }
      if (!next && sameEmbedder(this.binding(), target)) {
        // Nothing pending, and the store already holds this embedder's vectors (a re-run after a run that
        // finished): nothing to embed and no table to make. pendingReindex gives nothing, commitReindex keeps all.
        const total = this.countMemories();
        return { target: { dimension: target.dimension, embedderId: target.embedderId }, done: total, total };
      }
      if (!next) {
        next = { dimension: target.dimension, embedderId: target.embedderId, table: this.freeVectorTableName() };
        createVectorTable(database, next.table, next.dimension, this.options.vectorChunkSize);
        this.sql('DELETE FROM reindex_staged').run();
        writeMeta(database, 'reindex', JSON.stringify(next));
      }
      return this.reindexStatus(next);
    });
    this.begunTarget = { dimension: target.dimension, embedderId: target.embedderId };
    return status;
  }

  async pendingReindex(limit: number): Promise<MemoryRecord[]> {
    // SQLite reads a negative LIMIT as none: -1 would list every memory.
    assertQueryInput({ limit }, 'pendingReindex', BACKEND);
    return this.read('listing memories to re-index', () => {
      if (this.alreadyOnTarget()) return [];
      this.requireReindex();
      const rows = this.raw(
        `SELECT ${RECORD_COLUMNS} FROM memories m WHERE NOT EXISTS (SELECT 1 FROM reindex_staged s WHERE s.row_id = m.row_id) ORDER BY m.row_id LIMIT ?`,
      ).all(limit) as MemoryRow[];
      return rows.map(rowToRecord);
    });
  }

  async stageReindex(vectors: readonly StagedVector[]): Promise<number> {
    this.connect();
    return this.write('staging re-index vectors', () => {
      if (this.alreadyOnTarget()) return 0;
      const next = this.requireReindex();
      const blobs = vectors.map((staged) => toVectorBlob(staged.vector, next.dimension, `the re-index vector of memory ${staged.id}`));
      const writer = this.writerFor();
      let kept = 0;
      vectors.forEach((staged, index) => {
        const row = this.sql('SELECT row_id, revision, user_id FROM memories WHERE id = ?').get(staged.id) as
          | { row_id: number; revision: number; user_id: string | null }
          | undefined;
        if (!row || row.revision !== staged.revision) return;
        const replacing = this.sql('SELECT 1 FROM reindex_staged WHERE row_id = ?').get(row.row_id) !== undefined;
        writer.putVector(next.table, row.row_id, blobs[index] as Buffer, userKey(row.user_id), replacing ? 'update' : 'insert');
        this.sql('INSERT INTO reindex_staged (row_id, revision) VALUES (?, ?) ON CONFLICT (row_id) DO UPDATE SET revision = excluded.revision').run(
          row.row_id,
          row.revision,
        );
        kept++;
      });
      return kept;
    });
  }

  async commitReindex(): Promise<void> {
    const database = this.connect();
    const switched = await this.write('switching to the re-indexed vectors', (): VectorBinding | undefined => {
      if (this.alreadyOnTarget()) return undefined;
      const next = this.requireReindex();
      const status = this.reindexStatus(next);
      if (status.done < status.total) {
        throw new MemloomError({
          code: 'CONFLICT',
          backend: BACKEND,
          message: `${status.total - status.done} of ${status.total} memories have no vector from ${next.embedderId} yet; run reindex() again`,
          details: { done: status.done, total: status.total },
        });
      }
      const previous = this.binding();
      if (previous) dropVectorTable(database, previous.table);
      writeMeta(database, 'vectors', JSON.stringify(next));
      writeMeta(database, 'reindex', undefined);
      this.sql('DELETE FROM reindex_staged').run();
      return next;
    });
    // This store moved the file to the target: from now on it serves that embedder.
    const target = switched ?? this.begunTarget;
    if (target) this.openedFor = { dimension: target.dimension, embedderId: target.embedderId };
    this.begunTarget = undefined;
    // The copy holds the old table's vectors (maybe of another dimension): the next search reads the new ones.
    if (switched) this.mirror.forget();
  }

  async abortReindex(): Promise<void> {
    const database = this.connect();
    this.begunTarget = undefined;
    await this.write('abandoning a re-index', () => {
      const next = this.reindexTarget();
      if (!next) return;
      dropVectorTable(database, next.table);
      writeMeta(database, 'reindex', undefined);
      this.sql('DELETE FROM reindex_staged').run();
    });
  }

  vectorMirrorStatus(): VectorMirrorStatus {
    return this.mirror.status();
  }

  // -------------------------------------------------------------------------
  // helpers
  // -------------------------------------------------------------------------

  private connect(): Database {
    if (this.closed) throw new MemloomError({ code: 'CLOSED', backend: BACKEND, message: 'store is closed' });
    if (this.database) return this.database;
    const database = openDatabase(this.path, this.options);
    this.database = database;
    this.writer = new Writer(database, this.mirror.listener);
    return database;
  }

  private sql(text: string): Statement {
    const database = this.connect();
    let statement = this.prepared.get(text);
    if (!statement) {
      statement = database.prepare(text);
      this.prepared.set(text, statement);
    }
    return statement;
  }

  /** A statement whose rows are arrays (records: see MemoryRow). */
  private raw(text: string): Statement {
    const key = `raw:${text}`;
    let statement = this.prepared.get(key);
    if (!statement) {
      statement = this.connect().prepare(text).raw(true);
      this.prepared.set(key, statement);
    }
    return statement;
  }

  private writerFor(): Writer {
    this.connect();
    return this.writer as Writer;
  }

  private read<T>(doing: string, task: () => T): Promise<T> {
    this.connect();
    return withBusyRetry(task, doing);
  }

  /** One IMMEDIATE transaction: it takes the write lock first, so it never fails half way for want of it. */
  private write<T>(doing: string, task: () => T): Promise<T> {
    const database = this.connect();
    if (database.readonly) return Promise.reject(readOnlyError(this.path, doing));
    const writer = this.writer as Writer;
    const transaction = database.transaction(() => {
      this.mirror.beginWrite(database);
      return writer.within(task);
    });
    return withBusyRetry(() => {
      const result = transaction.immediate();
      this.mirror.committed();
      return result;
    }, doing);
  }

  private binding(): VectorBinding | undefined {
    const value = readMeta(this.connect(), 'vectors');
    return value === undefined ? undefined : (JSON.parse(value) as VectorBinding);
  }

  private reindexTarget(): VectorBinding | undefined {
    const value = readMeta(this.connect(), 'reindex');
    return value === undefined ? undefined : (JSON.parse(value) as VectorBinding);
  }

  /**
   * The re-index in progress, which must be the one this store began: a
   * store whose target another began over (to another embedder) would stage
   * its vectors in that embedder's table.
   */
  private requireReindex(): VectorBinding {
    const next = this.reindexTarget();
    const began = this.begunTarget;
    if (began && !sameEmbedder(next, began)) {
      // Another store began over this one's re-index (it runs, or it finished), or ended it.
      const other = next ?? this.binding();
      throw new MemloomError({
        code: 'CONFLICT',
        backend: BACKEND,
        message: next
          ? `another store replaced this re-index to ${began.embedderId} with one to ${next.embedderId}; call beginReindex again to take the file over`
          : `another store ended this re-index to ${began.embedderId}: the file now serves ${other?.embedderId ?? 'no embedder'}; call beginReindex again to take the file over`,
        details: { began: began.embedderId, ...(next ? { inProgress: next.embedderId } : { finished: other?.embedderId }) },
      });
    }
    if (!next) throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'no re-index in progress; call beginReindex first' });
    return next;
  }

  private reindexStatus(next: VectorBinding): ReindexStatus {
    const done = (this.sql('SELECT count(*) AS n FROM reindex_staged').get() as { n: number }).n;
    return { target: { dimension: next.dimension, embedderId: next.embedderId }, done, total: this.countMemories() };
  }

  private countMemories(): number {
    return (this.sql('SELECT count(*) AS n FROM memories').get() as { n: number }).n;
  }

  /** This store's `beginReindex` found the file already on its target, and no re-index was started since. */
  private alreadyOnTarget(): boolean {
    return this.begunTarget !== undefined && this.reindexTarget() === undefined && sameEmbedder(this.binding(), this.begunTarget);
  }

  /**
   * EMBEDDER_MISMATCH when another process re-indexed the file since this
   * store was opened: its vectors and queries come from the embedder it was
   * opened for, and would be compared with, or written among, another's.
   */
  private assertStillBound(binding: VectorBinding | undefined, what: string): void {
    const opened = this.openedFor;
    if (!opened || !binding || sameEmbedder(binding, opened)) return;
    throw new MemloomError({
      code: 'EMBEDDER_MISMATCH',
      backend: BACKEND,
      message:
        `${this.path} was re-indexed to ${binding.embedderId} (${binding.dimension} dimensions) by another process since this store was opened for ${opened.embedderId}, ` +
        `so ${what} with ${opened.embedderId}'s vectors was refused; reopen the store with that embedder`,
      details: { stored: binding.embedderId, requested: opened.embedderId },
    });
  }

  private vectorTables(binding: VectorBinding | undefined): VectorTables {
    return { live: binding?.table, staged: this.reindexTarget()?.table };
  }

  private freeVectorTableName(): string {
    const names = (this.sql("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_vectors_[0-9]*'").all() as { name: string }[])
      .map((row) => /^memory_vectors_(\d+)$/.exec(row.name)?.[1])
      .filter((digits): digits is string => digits !== undefined)
      .map(Number);
    return `memory_vectors_${Math.max(0, ...names) + 1}`;
  }
}

/** Whether the store's vectors (or a re-index target) are those of this embedder. */
function sameEmbedder(binding: StoreOpenOptions | undefined, target: StoreOpenOptions): boolean {
  return binding !== undefined && binding.dimension === target.dimension && binding.embedderId === target.embedderId;
}
