import { MemloomError, type MemoryChange, type MemoryRecord } from '@memloom/core';
import type { Database, Statement } from 'better-sqlite3';
import { BACKEND } from './connection.js';
import { PendingText } from './pending-text.js';
import { RECORD_COLUMNS, recordValues, rowIdOf, WRITABLE_COLUMNS, type MemoryRow } from './rows.js';
import { indexTerms, scopeTerms } from './text.js';
import { beforePatch } from './version-patch.js';

/** The vector tables a write keeps in step: the live one, and the re-index target's while one runs. */
export interface VectorTables {
  live: string | undefined;
  staged: string | undefined;
}

/** Columns whose change rewrites the FTS row: its terms and its scope tokens. */
const TEXT_COLUMNS = new Set(['content', 'user_id', 'agent_id', 'session_id']);

/** Where `user_id` and `revision` sit in a MemoryRow. */
const USER_ID = 1 + WRITABLE_COLUMNS.indexOf('user_id');
const REVISION = 1 + WRITABLE_COLUMNS.indexOf('revision');

/**
 * Writes inside one transaction, for `apply`, `deleteByScope` and the
 * re-index. Each keeps a memory's row, vector, FTS row and versions in step.
 */
export class Writer {
  private readonly statements = new Map<string, Statement>();
  private readonly text = new PendingText();
  /**
   * The rows `change` works on, read for a whole batch at once (`prefetch`)
   * and kept as this transaction writes them: [row_id, ...values], or
   * undefined for an id with no row. Emptied when the transaction ends.
   */
  private readonly rows = new Map<string, MemoryRow | undefined>();

  constructor(private readonly database: Database) {}

  /** Run `task` inside the caller's transaction; the FTS changes it made are written at its end. */
  within<T>(task: () => T): T {
    try {
      const result = task();
      this.text.flush({
        deleteMany: () => this.sql('DELETE FROM memory_text WHERE rowid IN (SELECT value FROM json_each(?))'),
        insertMany: () =>
          this.sql("INSERT INTO memory_text (rowid, terms, scope_terms) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)"),
      });
      return result;
    } finally {
      this.text.clear();
      this.rows.clear();
    }
  }

  /** Read the rows of these ids in one statement, for the `change` calls that follow in this transaction. */
  prefetch(ids: readonly string[]): void {
    const found = this.sql(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))`, true).all(
      JSON.stringify(ids),
    ) as MemoryRow[];
    for (const id of ids) this.rows.set(id, undefined);
    for (const row of found) this.rows.set(row[1] as string, row);
  }

  /** One change; throws CONFLICT (rolling the whole transaction back) when the revision moved on. */
  change(change: MemoryChange, blob: Buffer | undefined, tables: VectorTables): void {
    const id = change.op === 'delete' ? change.id : change.memory.id;
    const current = this.rows.has(id)
      ? this.rows.get(id)
      : (this.sql(`SELECT ${RECORD_COLUMNS} FROM memories m WHERE m.id = ?`, true).get(id) as MemoryRow | undefined);
    const revision = current?.[REVISION] as number | undefined;
    if (change.op === 'delete') {
      if (change.expectedRevision !== undefined && revision !== change.expectedRevision) throw conflict(id);
      if (current) this.remove(rowIdOf(current), tables);
      this.rows.set(id, undefined);
      return;
    }
    if ((revision ?? 0) !== change.expectedRevision) throw conflict(id);
    if (change.memory.revision !== change.expectedRevision + 1 || change.version.version !== change.memory.revision) {
      throw new MemloomError({
        code: 'INVALID_INPUT',
        backend: BACKEND,
        message: `memory ${id}: revision ${String(change.memory.revision)} and version ${String(change.version.version)} must both be ${change.expectedRevision + 1}`,
      });
    }
    if (!current && !blob) {
      throw new MemloomError({ code: 'INVALID_INPUT', backend: BACKEND, message: `memory ${id} is new and needs a vector` });
    }
    const rowId = current ? this.update(current, change.memory, blob, tables) : this.insert(change.memory, blob as Buffer, tables);
    const { version } = change;
    const patch = version.before === null ? undefined : beforePatch(version.before, version.after);
    this.sql(
      'INSERT INTO versions (memory_row, version, at, change_trigger, change_action, reason, before_json, before_patch, after_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
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
  }

  /** Delete a memory with its vectors, text row, history and staged re-index vector. */
  remove(rowId: number, tables: VectorTables): void {
    this.sql('DELETE FROM memories WHERE row_id = ?').run(rowId);
    this.sql('DELETE FROM versions WHERE memory_row = ?').run(rowId);
    this.text.remove(rowId);
    if (tables.live) this.sql(`DELETE FROM ${tables.live} WHERE rowid = ?`).run(BigInt(rowId));
    this.unstage(rowId, tables);
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
    const values = recordValues(memory);
    const result = this.sql(`INSERT INTO memories (${WRITABLE_COLUMNS.join(', ')}) VALUES (${WRITABLE_COLUMNS.map(() => '?').join(', ')})`).run(values);
    const rowId = Number(result.lastInsertRowid);
    this.rows.set(memory.id, [rowId, ...values]);
    this.text.put(rowId, indexTerms(memory.content), scopeTerms(memory.scope), false);
    this.putVector(requireTable(tables), rowId, blob, userKey(memory.scope.userId), 'insert');
    return rowId;
  }

  private update(current: MemoryRow, memory: MemoryRecord, blob: Buffer | undefined, tables: VectorTables): number {
    const rowId = rowIdOf(current);
    const values = recordValues(memory);
    // Only the columns that changed, so indexes on the others are left alone (maintenance rewrites many rows).
    const changed: number[] = [];
    for (let index = 0; index < values.length; index++) if (values[index] !== current[index + 1]) changed.push(index);
    if (changed.length > 0) {
      this.sql(`UPDATE memories SET ${changed.map((index) => `${WRITABLE_COLUMNS[index] as string} = ?`).join(', ')} WHERE row_id = ?`).run(
        ...changed.map((index) => values[index]),
        rowId,
      );
    }
    this.rows.set(memory.id, [rowId, ...values]);
    if (changed.some((index) => TEXT_COLUMNS.has(WRITABLE_COLUMNS[index] as string))) {
      this.text.put(rowId, indexTerms(memory.content), scopeTerms(memory.scope), true);
    }
    const table = requireTable(tables);
    const movedUser = (memory.scope.userId ?? null) !== current[USER_ID];
    if (blob) {
      // A new vector under the current embedder: the staged one is out of date.
      this.putVector(table, rowId, blob, userKey(memory.scope.userId), movedUser ? 'move' : 'update');
      this.unstage(rowId, tables);
    } else if (movedUser) {
      const row = this.sql(`SELECT embedding FROM ${table} WHERE rowid = ?`).get(BigInt(rowId)) as { embedding: Buffer } | undefined;
      if (row) this.putVector(table, rowId, row.embedding, userKey(memory.scope.userId), 'move');
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
}
