import { assertPutChange, assertWellFormedRecord, keywordText, MemloomError, type MemoryChange, type MemoryRecord } from '@memloom/core';
import type { Database, Statement } from 'better-sqlite3';
import { BACKEND } from './connection.js';
import { PendingText } from './pending-text.js';
import { recordValues, WRITABLE_COLUMNS } from './rows.js';
import { indexTerms, INSERT_TEXT_ROWS, scopeTerms } from './text.js';
import { beforePatch } from './version-patch.js';

/** A change to a live vector (`vector` undefined: deleted). */
export interface LiveVectorChange {
  /** The live vector table it was made in. */
  table: string;
  rowId: number;
  vector: Buffer | undefined;
  userKey: string;
}

/** Who hears of the live vectors a write transaction changes, before it commits. */
export interface LiveVectorListener {
  /** One change, in order. */
  changed(change: LiveVectorChange): void;
  /** The transaction's entry in `vector_changes`, after its last change. */
  logged(seq: number): void;
}

/**
 * How many of the newest `vector_changes` entries (one per write transaction
 * that changed a vector) are kept; a connection further behind reads every
 * vector again.
 */
export const VECTOR_LOG_KEPT = 10_000;

/** The vector tables a write keeps in step: the live one, and the re-index target's while one runs. */
export interface VectorTables {
  live: string | undefined;
  staged: string | undefined;
}

/**
 * What a write needs of a memory's current row: where it is, its revision,
 * and the columns that indexes or its FTS row are built from. The other
 * columns are written whatever they held.
 */
const CURRENT_COLUMNS = ['row_id', 'revision', 'id', 'user_id', 'agent_id', 'session_id', 'created_at', 'content', 'context'] as const;

type CurrentRow = [
  rowId: number,
  revision: number,
  id: string,
  userId: string | null,
  agentId: string | null,
  sessionId: string | null,
  createdAt: string,
  content: string,
  context: string | null,
];

/** Indexed columns: an UPDATE that names one rewrites its index entries, so they are named only when they changed. */
const INDEXED = ['id', 'user_id', 'agent_id', 'session_id', 'created_at'] as const;
const INDEXED_AT = INDEXED.map((column) => WRITABLE_COLUMNS.indexOf(column));
const CURRENT_AT = INDEXED.map((column) => CURRENT_COLUMNS.indexOf(column));
const UNINDEXED_AT = WRITABLE_COLUMNS.flatMap((column, index) => ((INDEXED as readonly string[]).includes(column) ? [] : [index]));
const CONTENT_AT = WRITABLE_COLUMNS.indexOf('content');
const CONTEXT_AT = WRITABLE_COLUMNS.indexOf('context');
/** Versions are inserted this many to a statement (see `writePending`). */
const VERSIONS_PER_INSERT = 64;
const VERSION_COLUMNS = 9;
const VERSION_VALUES = `(${new Array(VERSION_COLUMNS).fill('?').join(', ')})`;
const INSERT_VERSION = `INSERT INTO versions (memory_row, version, at, change_trigger, change_action, reason, before_json, before_patch, after_json) VALUES ${VERSION_VALUES}`;
const INSERT_VERSIONS = `${INSERT_VERSION}${`, ${VERSION_VALUES}`.repeat(VERSIONS_PER_INSERT - 1)}`;

/** The bits of user_id, agent_id and session_id: the FTS row's scope tokens are built from them. */
const SCOPE_BITS = 0b01110;

/** Where each CurrentRow column is in `recordValues` (-1: row_id, which is not one of them). */
const CURRENT_FROM_VALUES = CURRENT_COLUMNS.map((column) => (column === 'row_id' ? -1 : WRITABLE_COLUMNS.indexOf(column)));

/** The CurrentRow a record leaves in `memories`. */
function currentOf(rowId: number, values: readonly (string | number | null)[]): CurrentRow {
  return CURRENT_FROM_VALUES.map((at) => (at < 0 ? rowId : values[at])) as CurrentRow;
}

/** An UPDATE of `memories` and the positions in `recordValues` of the columns it sets, in order. */
interface RowUpdate {
  statement: Statement;
  written: readonly number[];
}

/**
 * Writes inside one transaction, for `apply`, `deleteByScope` and the
 * re-index. Each keeps a memory's row, vector, FTS row and versions in step.
 */
export class Writer {
  private readonly statements = new Map<string, Statement>();
  /** By the mask of indexed columns an update names (see `update`). */
  private readonly rowUpdates: (RowUpdate | undefined)[] = [];
  private readonly text = new PendingText();
  /**
   * The current rows `change` works on, read for a whole batch at once
   * (`prefetch`) and kept as this transaction writes them; undefined for an
   * id with no row. Emptied when the transaction ends.
   */
  private readonly rows = new Map<string, CurrentRow | undefined>();
  /** Rows whose live vector this transaction changed, for its `vector_changes` entry. */
  private readonly liveRows = new Set<number>();
  /** The values of the versions not inserted yet, VERSION_COLUMNS to a version (see `writePending`). */
  private readonly pendingVersions: (string | number | null)[] = [];
  /** Memories `remove` took out whose row and versions are not deleted yet (see `writePending`). */
  private readonly removedRows: number[] = [];

  constructor(
    private readonly database: Database,
    private readonly listener: LiveVectorListener = { changed: () => {}, logged: () => {} },
  ) {}

  /** Run `task` inside the caller's transaction; the FTS changes it made are written at its end. */
  within<T>(task: () => T): T {
    try {
      const result = task();
      this.writePending();
      if (this.liveRows.size > 0) this.logLiveRows();
      this.text.flush({
        deleteMany: () => this.sql('DELETE FROM memory_text WHERE rowid IN (SELECT value FROM json_each(?))'),
        insertMany: () => this.sql(INSERT_TEXT_ROWS),
      });
      return result;
    } finally {
      this.text.clear();
      this.rows.clear();
      this.liveRows.clear();
      this.removedRows.length = 0;
      this.pendingVersions.length = 0;
    }
  }

  /** Read the rows of these ids in one statement, for the `change` calls that follow in this transaction. */
  prefetch(ids: readonly string[]): void {
    const found = this.sql(`SELECT ${CURRENT_COLUMNS.join(', ')} FROM memories WHERE id IN (SELECT value FROM json_each(?))`, true).all(
      JSON.stringify(ids),
    ) as CurrentRow[];
    for (const id of ids) this.rows.set(id, undefined);
    for (const row of found) this.rows.set(row[2], row);
  }

  /**
   * The order to apply the changes of these (prefetched) ids in: by the row
   * each id has now, new ids last (the sort is stable, so the changes to one
   * id keep the order given). Memory ids need not follow the rows (imported
   * ids, random UUIDs, a caller's own): in the order given, a large batch may
   * touch the table, its indexes and the vector chunks at random; in row
   * order, each page once and in sequence.
   */
  rowOrder(ids: readonly string[]): number[] {
    const rowIds = ids.map((id) => this.rows.get(id)?.[0] ?? Number.MAX_SAFE_INTEGER);
    return ids.map((_, index) => index).sort((a, b) => (rowIds[a] as number) - (rowIds[b] as number));
  }

  /** One change; throws CONFLICT (rolling the whole transaction back) when the revision moved on. */
  change(change: MemoryChange, blob: Buffer | undefined, tables: VectorTables): void {
    const id = change.op === 'delete' ? change.id : change.memory.id;
    let current = this.rows.get(id);
    if (current === undefined && !this.rows.has(id)) {
      current = this.sql(`SELECT ${CURRENT_COLUMNS.join(', ')} FROM memories WHERE id = ?`, true).get(id) as CurrentRow | undefined;
    }
    const revision = current?.[1];
    if (change.op === 'delete') {
      if (change.expectedRevision !== undefined && revision !== change.expectedRevision) throw conflict(id);
      if (current) this.remove(current[0], tables);
      this.rows.set(id, undefined);
      return;
    }
    // The numbering was checked before the transaction (validateChange).
    if ((revision ?? 0) !== change.expectedRevision) throw conflict(id);
    if (!current && !blob) {
      throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: `memory ${id} is new and needs a vector` });
    }
    const rowId = current ? this.update(current, change.memory, blob, tables) : this.insert(change.memory, blob as Buffer, tables);
    const { version } = change;
    const patch = version.before === null ? undefined : beforePatch(version.before, version.after);
    this.pendingVersions.push(
      rowId,
      version.version,
      version.at,
      version.trigger,
      version.action,
      version.reason,
      version.before === null || patch !== undefined ? null : JSON.stringify(version.before),
      patch ?? null,
      JSON.stringify(version.after),
    );
    if (this.pendingVersions.length === VERSION_COLUMNS * VERSIONS_PER_INSERT) this.insertVersions();
  }

  /** Delete a memory with its vectors, text row, history and staged re-index vector (its row and history in `writePending`). */
  remove(rowId: number, tables: VectorTables): void {
    this.removedRows.push(rowId);
    this.text.remove(rowId);
    if (tables.live) {
      this.sql(`DELETE FROM ${tables.live} WHERE rowid = ?`).run(BigInt(rowId));
      this.logLive(tables.live, rowId, undefined, '');
    }
    this.unstage(rowId, tables);
  }

  /**
   * Write the versions and the deletes of rows collected so far. A statement for each opens its
   * table and indexes again: versions go VERSIONS_PER_INSERT to a statement, and the rows and
   * versions of removed memories in one statement each (a maintenance pass over 100,000 memories
   * spent about half as long in these statements). The versions go first, so a memory written then
   * removed in one batch loses them too. Called before a row is inserted while a removed memory's
   * row is pending (the new row may take its id), and at the transaction's end (`change` reads
   * the rows of a batch before it, `prefetch`, and keeps removed ones as absent).
   */
  private writePending(): void {
    this.insertVersions();
    if (this.removedRows.length === 0) return;
    const rows = JSON.stringify(this.removedRows);
    this.removedRows.length = 0;
    this.sql('DELETE FROM memories WHERE row_id IN (SELECT value FROM json_each(?))').run(rows);
    this.sql('DELETE FROM versions WHERE memory_row IN (SELECT value FROM json_each(?))').run(rows);
  }

  /** Insert the versions collected: VERSIONS_PER_INSERT in one statement, fewer one by one. */
  private insertVersions(): void {
    const values = this.pendingVersions;
    if (values.length === VERSION_COLUMNS * VERSIONS_PER_INSERT) {
      this.sql(INSERT_VERSIONS).run(values);
    } else {
      for (let at = 0; at < values.length; at += VERSION_COLUMNS) this.sql(INSERT_VERSION).run(values.slice(at, at + VERSION_COLUMNS));
    }
    values.length = 0;
  }

  /** Note a change to a live vector for the transaction's log entry, and tell the listener. */
  private logLive(table: string, rowId: number, vector: Buffer | undefined, userKey: string): void {
    this.liveRows.add(rowId);
    this.listener.changed({ table, rowId, vector, userKey });
  }

  /** The transaction's one `vector_changes` entry; entries older than the newest VECTOR_LOG_KEPT go. */
  private logLiveRows(): void {
    const seq = Number(this.sql('INSERT INTO vector_changes (row_ids) VALUES (?)').run(JSON.stringify([...this.liveRows])).lastInsertRowid);
    if (seq > VECTOR_LOG_KEPT) this.sql('DELETE FROM vector_changes WHERE seq <= ?').run(seq - VECTOR_LOG_KEPT);
    this.listener.logged(seq);
  }

  /** Forget a staged re-index vector, so the memory is pending again. */
  unstage(rowId: number, tables: VectorTables): void {
    if (!tables.staged) return;
    if (this.sql('DELETE FROM reindex_staged WHERE row_id = ?').run(rowId).changes > 0) {
      this.sql(`DELETE FROM ${tables.staged} WHERE rowid = ?`).run(BigInt(rowId));
    }
  }

  /**
   * Put a vector for `rowId` into `table`: `insert` a new one, `update` one in
   * place (same user), or `move` it to another user's partition (partition
   * keys cannot be updated in place).
   */
  putVector(table: string, rowId: number, blob: Buffer, userKey: string, mode: 'insert' | 'update' | 'move'): void {
    if (mode === 'update') {
      this.sql(`UPDATE ${table} SET embedding = ? WHERE rowid = ?`).run(blob, BigInt(rowId));
      return;
    }
    if (mode === 'move') this.sql(`DELETE FROM ${table} WHERE rowid = ?`).run(BigInt(rowId));
    this.sql(`INSERT INTO ${table} (rowid, embedding, user_key) VALUES (?, ?, ?)`).run(BigInt(rowId), blob, userKey);
  }

  /** The UPDATE of every unindexed column and the indexed ones in `mask`, prepared once per mask. */
  private rowUpdate(mask: number): RowUpdate {
    let update = this.rowUpdates[mask];
    if (!update) {
      const written = [...UNINDEXED_AT, ...INDEXED_AT.filter((_, bit) => mask & (1 << bit))];
      const statement = this.database.prepare(`UPDATE memories SET ${written.map((at) => `${WRITABLE_COLUMNS[at] as string} = ?`).join(', ')} WHERE row_id = ?`);
      update = { statement, written };
      this.rowUpdates[mask] = update;
    }
    return update;
  }

  /** A prepared statement, cached by its text; `raw` ones return rows as arrays. */
  sql(text: string, raw = false): Statement {
    const key = raw ? `raw:${text}` : text;
    let statement = this.statements.get(key);
    if (!statement) {
      statement = this.database.prepare(text);
      if (raw) statement.raw(true);
      this.statements.set(key, statement);
    }
    return statement;
  }

  private insert(memory: MemoryRecord, blob: Buffer, tables: VectorTables): number {
    // A new row may take the row id of a removed memory whose row and versions are not deleted yet.
    if (this.removedRows.length > 0) this.writePending();
    const values = recordValues(memory);
    const result = this.sql(`INSERT INTO memories (${WRITABLE_COLUMNS.join(', ')}) VALUES (${WRITABLE_COLUMNS.map(() => '?').join(', ')})`).run(values);
    const rowId = Number(result.lastInsertRowid);
    this.rows.set(memory.id, currentOf(rowId, values));
    this.text.put(rowId, indexTerms(keywordText(memory)), scopeTerms(memory.scope), false);
    const table = requireTable(tables);
    this.putVector(table, rowId, blob, userKey(memory.scope.userId), 'insert');
    this.logLive(table, rowId, blob, userKey(memory.scope.userId));
    return rowId;
  }

  private update(current: CurrentRow, memory: MemoryRecord, blob: Buffer | undefined, tables: VectorTables): number {
    const rowId = current[0];
    const values = recordValues(memory);
    // Every unindexed column, and the indexed ones that changed: their indexes are left alone otherwise.
    let mask = 0;
    for (let bit = 0; bit < INDEXED_AT.length; bit++) {
      if (values[INDEXED_AT[bit] as number] !== current[CURRENT_AT[bit] as number]) mask |= 1 << bit;
    }
    const { statement, written } = this.rowUpdate(mask);
    const parameters: (string | number | null)[] = new Array(written.length + 1);
    for (let index = 0; index < written.length; index++) parameters[index] = values[written[index] as number] as string | number | null;
    parameters[written.length] = rowId;
    statement.run(parameters);
    this.rows.set(memory.id, currentOf(rowId, values));
    if ((mask & SCOPE_BITS) !== 0 || values[CONTENT_AT] !== current[7] || values[CONTEXT_AT] !== current[8]) {
      this.text.put(rowId, indexTerms(keywordText(memory)), scopeTerms(memory.scope), true);
    }
    const table = requireTable(tables);
    const movedUser = (memory.scope.userId ?? null) !== current[3];
    if (blob) {
      // A new vector under the current embedder: the staged one is out of date.
      this.putVector(table, rowId, blob, userKey(memory.scope.userId), movedUser ? 'move' : 'update');
      this.logLive(table, rowId, blob, userKey(memory.scope.userId));
      this.unstage(rowId, tables);
    } else if (movedUser) {
      const row = this.sql(`SELECT embedding FROM ${table} WHERE rowid = ?`).get(BigInt(rowId)) as { embedding: Buffer } | undefined;
      if (row) {
        this.putVector(table, rowId, row.embedding, userKey(memory.scope.userId), 'move');
        this.logLive(table, rowId, row.embedding, userKey(memory.scope.userId));
      }
      this.unstage(rowId, tables);
    }
    return rowId;
  }
}

/** The partition key for a user: absent and every given id stay distinct. */
export function userKey(userId: string | undefined | null): string {
  return userId === undefined || userId === null ? '' : `=${userId}`;
}

function requireTable(tables: VectorTables): string {
  if (!tables.live) {
    throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'the store has no vector dimension yet; call open() first' });
  }
  return tables.live;
}

function conflict(id: string): MemloomError {
  return new MemloomError({ code: 'CONFLICT', backend: BACKEND, message: `memory ${id} was changed by someone else`, details: { id } });
}

/** The shape every change must have before a transaction starts; revision rules are checked inside it. */
export function validateChange(change: MemoryChange): void {
  if (!change || (change.op !== 'put' && change.op !== 'delete')) {
    throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'a change must be { op: "put" | "delete", ... }' });
  }
  if (change.op === 'delete') {
    if (typeof change.id !== 'string' || change.id === '') throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'a delete needs an id' });
    return;
  }
  const { memory, version } = change;
  if (!memory || typeof memory.id !== 'string' || memory.id === '' || typeof memory.content !== 'string' || !version) {
    throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: 'a put needs a memory with an id and content, and a version' });
  }
  // Core's checks of every store: numbering, scope, context, and metadata (a JSON column, and the history JSON text).
  assertPutChange(change, BACKEND);
  // Text columns are UTF-8: a lone half of a UTF-16 pair would read back as U+FFFD while the version's JSON kept it.
  assertWellFormedRecord(memory, BACKEND);
}
