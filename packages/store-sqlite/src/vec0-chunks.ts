import type { Database } from 'better-sqlite3';
import { floatsOfBlob } from './vectors.js';

/** One live vector as the chunks hold it. */
export interface ChunkVector {
  rowId: number;
  userKey: string;
  floats: Float32Array;
}

/**
 * Visit the live vectors of a vec0 table (one user's, when `userKey` is
 * given), read from its shadow tables a chunk at a time: one row per chunk of
 * 256 vectors, instead of one vec0 row per vector (11 times faster at 100,000
 * vectors: 75 against 840 ms, scratch timing).
 *
 * This reads sqlite-vec's storage, which is not its API. The package pins
 * sqlite-vec (0.1.9), and the layout is checked as it is read: the tables
 * and their columns, each chunk's blob lengths, and the first vector against
 * vec0's own answer. False when any of it differs, possibly after some
 * vectors were visited; the caller then reads through vec0 (visiting a
 * vector again must be harmless).
 */
export function visitChunkVectors(database: Database, table: string, dimension: number, userKey: string | undefined, visit: (vector: ChunkVector) => void): boolean {
  if (!hasLayout(database, table)) return false;
  const rows = database
    .prepare(
      `SELECT c.partition00, c.validity, c.rowids, v.vectors FROM "${table}_chunks" c JOIN "${table}_vector_chunks00" v ON v.rowid = c.chunk_id` +
        (userKey === undefined ? '' : ' WHERE c.partition00 = ?'),
    )
    .raw()
    .iterate(...(userKey === undefined ? [] : [userKey])) as IterableIterator<[unknown, unknown, unknown, unknown]>;
  const vectorBytes = dimension * 4;
  let checked = false;
  for (const [key, validity, rowids, vectors] of rows) {
    if (typeof key !== 'string' || !Buffer.isBuffer(validity) || !Buffer.isBuffer(rowids) || !Buffer.isBuffer(vectors)) return stop(rows);
    const slots = validity.length * 8;
    if (rowids.length !== slots * 8 || vectors.length !== slots * vectorBytes) return stop(rows);
    for (let slot = 0; slot < slots; slot++) {
      if (((validity[slot >> 3] as number) & (1 << (slot & 7))) === 0) continue;
      const vector: ChunkVector = {
        rowId: Number(rowids.readBigInt64LE(slot * 8)),
        userKey: key,
        floats: floatsOfBlob(vectors.subarray(slot * vectorBytes, (slot + 1) * vectorBytes)),
      };
      if (!checked) {
        if (!sameAsVec0(database, table, vector)) return stop(rows);
        checked = true;
      }
      visit(vector);
    }
  }
  return true;
}

/** End an iteration early (its statement is busy until then). */
function stop(rows: IterableIterator<unknown>): false {
  rows.return?.();
  return false;
}

/** The shadow tables and columns sqlite-vec 0.1.9 makes for `vec0(embedding float[n], user_key text partition key)`. */
function hasLayout(database: Database, table: string): boolean {
  const columns = (name: string) =>
    new Set((database.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(name) as string[]));
  const chunks = columns(`${table}_chunks`);
  const vectors = columns(`${table}_vector_chunks00`);
  return ['chunk_id', 'validity', 'rowids', 'partition00'].every((name) => chunks.has(name)) && ['rowid', 'vectors'].every((name) => vectors.has(name));
}

/** Whether vec0 itself gives this row the same vector and user. */
function sameAsVec0(database: Database, table: string, vector: ChunkVector): boolean {
  const row = database.prepare(`SELECT user_key, embedding FROM "${table}" WHERE rowid = ?`).raw().get(BigInt(vector.rowId)) as [string, Buffer] | undefined;
  if (!row || row[0] !== vector.userKey) return false;
  const floats = floatsOfBlob(row[1]);
  return floats.length === vector.floats.length && floats.every((value, index) => Object.is(value, vector.floats[index]));
}
