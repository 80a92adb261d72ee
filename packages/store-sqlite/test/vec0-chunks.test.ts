import type { MemoryChange, MemoryRecord } from '@memloom/core';
import { seededRandom } from '@memloom/core/testing';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../src/index.js';
import { visitChunkVectors } from '../src/vec0-chunks.js';
import { createChange, EMBEDDER_ID, newRecord, replaceChange } from './fixtures/records.mjs';
import { tempFolders } from './helpers.js';

const folder = tempFolders();
const DIMENSION = 13;
const TABLE = 'memory_vectors_1';

type Row = [rowId: number, userKey: string, floats: number[]];

async function openStore(path: string, vectorMirror = false): Promise<SqliteStore> {
  const store = createSqliteStore({ path, vectorMirror, vectorChunkSize: 8 });
  await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
  return store;
}

function rawDatabase(path: string): Database.Database {
  const database = new Database(path);
  sqliteVec.load(database);
  return database;
}

/** What vec0 itself answers, one row per vector, sorted by row. */
function throughVec0(database: Database.Database, userKey?: string): Row[] {
  const rows = database
    .prepare(`SELECT rowid, user_key, embedding FROM ${TABLE}` + (userKey === undefined ? '' : ' WHERE user_key = ?'))
    .raw()
    .all(...(userKey === undefined ? [] : [userKey])) as [number, string, Buffer][];
  return rows.map(([rowId, key, blob]): Row => [Number(rowId), key, [...new Float32Array(new Uint8Array(blob).buffer)]]).sort((a, b) => a[0] - b[0]);
}

function throughChunks(database: Database.Database, userKey?: string): Row[] | false {
  const rows: Row[] = [];
  const read = visitChunkVectors(database, TABLE, DIMENSION, userKey, (vector) => rows.push([vector.rowId, vector.userKey, [...vector.floats]]));
  return read && rows.sort((a, b) => a[0] - b[0]);
}

/** 60 memories of three users and none, then vectors changed in place, memories moved to another user, and deletes. */
async function writeHistory(path: string): Promise<void> {
  const random = seededRandom(5);
  const vector = () => Array.from({ length: DIMENSION }, () => random() - 0.5);
  // undefined: a memory with no user (its vectors go to the partition '').
  const users = ['alice', 'bob', 'carol', undefined];
  const memories = Array.from({ length: 60 }, (_, index) => newRecord(`m-${index}`, `memory ${index}`, users[index % 4] as string) as MemoryRecord);
  const store = await openStore(path);
  await store.apply(memories.map((memory) => createChange(memory, vector()) as MemoryChange));
  const changes: MemoryChange[] = [];
  for (const [index, memory] of memories.entries()) {
    if (index % 5 === 0) changes.push({ op: 'delete', id: memory.id });
    else if (index % 7 === 0) changes.push({ ...replaceChange(memory, { ...memory, scope: { userId: 'dave' }, revision: 2 }) } as MemoryChange);
    else if (index % 3 === 0) changes.push({ ...replaceChange(memory, { ...memory, content: `${memory.content}, again`, revision: 2 }), vector: vector() } as MemoryChange);
  }
  await store.apply(changes);
  await store.close();
}

describe("reading sqlite-vec's chunks directly (the vector mirror's loads)", () => {
  it('finds every live vector as vec0 does, after in-place updates, moves between users and deletes', async () => {
    const path = folder().file();
    await writeHistory(path);
    const database = rawDatabase(path);
    try {
      const all = throughVec0(database);
      expect(all).toHaveLength(60 - 12);
      expect(throughChunks(database)).toEqual(all);
      for (const userKey of ['=alice', '=bob', '=carol', '=dave', '']) {
        const theirs = throughVec0(database, userKey);
        expect(theirs.length).toBeGreaterThan(0);
        expect(throughChunks(database, userKey)).toEqual(theirs);
      }
      expect(throughChunks(database, '=nobody')).toEqual([]);
    } finally {
      database.close();
    }
  });

  it('gives way to vec0 when the chunks do not read as vec0 reads them, and the mirror still finds each memory by its own vector', async () => {
    const path = folder().file();
    await writeHistory(path);
    // Written without sqlite-vec loaded: SQLite then does not guard its tables as vec0's shadow tables.
    const tamper = (sql: string, ...parameters: unknown[]) => {
      const plainConnection = new Database(path);
      plainConnection.prepare(sql).run(...parameters);
      plainConnection.close();
    };
    const chunksOf = (check: (database: Database.Database) => void) => {
      const database = rawDatabase(path);
      try {
        check(database);
      } finally {
        database.close();
      }
    };
    let first: { chunk_id: number; rowids: Buffer } | undefined;
    chunksOf((database) => {
      first = database.prepare(`SELECT chunk_id, rowids FROM ${TABLE}_chunks ORDER BY chunk_id LIMIT 1`).get() as typeof first;
    });
    const { chunk_id: chunkId, rowids } = first!;
    const setRowids = (blob: Buffer) => tamper(`UPDATE ${TABLE}_chunks SET rowids = ? WHERE chunk_id = ?`, blob, chunkId);
    // Swap the first two row ids in the first chunk's list: vec0 finds rows through its own rowid
    // table, so its answer for the first slot no longer matches what the chunk says.
    const swapped = Buffer.concat([rowids.subarray(8, 16), rowids.subarray(0, 8), rowids.subarray(16)]);
    setRowids(swapped);
    chunksOf((database) => expect(throughChunks(database)).toBe(false));
    // A chunk whose blobs are not of the lengths its validity map implies.
    setRowids(rowids.subarray(8));
    chunksOf((database) => expect(throughChunks(database)).toBe(false));
    // Shadow tables of another shape (another sqlite-vec's layout).
    tamper('CREATE TABLE other_chunks (chunk_id INTEGER PRIMARY KEY, size INTEGER)');
    tamper('CREATE TABLE other_vector_chunks00 (rowid PRIMARY KEY, vectors BLOB)');
    chunksOf((database) => expect(visitChunkVectors(database, 'other', DIMENSION, undefined, () => undefined)).toBe(false));
    // As written, they read again.
    setRowids(rowids);
    chunksOf((database) => expect(throughChunks(database)).toEqual(throughVec0(database)));
    setRowids(swapped);

    // Through the store, with the swapped list still in place: the mirror reads through vec0, and
    // each memory's own vector (read by vec0's row lookup) finds that memory first.
    const mirrored = await openStore(path, true);
    const ids = (await mirrored.list({})).map((memory) => memory.id);
    expect(ids).toHaveLength(48);
    // The first vector search is sqlite-vec's own (which reads the chunk's row ids); the mirror answers from the second.
    await mirrored.vectorSearch({ vector: Array.from({ length: DIMENSION }, () => 1), limit: 1 });
    const misplaced: string[] = [];
    for (const id of ids) {
      const vector = (await mirrored.getVector(id)) as number[];
      const [top] = await mirrored.vectorSearch({ vector, limit: 1 });
      if (top?.memory.id !== id) misplaced.push(id);
    }
    expect(mirrored.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 'all', vectors: 48 });
    expect(misplaced).toEqual([]);
    await mirrored.close();
  });
});
