import { reindex, type MemoryChange, type MemoryRecord, type ScoredMemory, type VectorQuery } from '@memloom/core';
import { createTestEmbedder, seededRandom } from '@memloom/core/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../src/index.js';
import { createChange, EMBEDDER_ID, newRecord, replaceChange } from './fixtures/records.mjs';
import { tempFolders } from './helpers.js';

const folder = tempFolders();
const DIMENSION = 13;

function randomVector(random: () => number): number[] {
  return Array.from({ length: DIMENSION }, () => random() - 0.5);
}

async function openStore(path: string, vectorMirror: boolean): Promise<SqliteStore> {
  const store = createSqliteStore({ path, vectorMirror, vectorChunkSize: 8 });
  await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
  return store;
}

const summary = (hits: ScoredMemory[]): { id: string; score: number }[] => hits.map((hit) => ({ id: hit.memory.id, score: hit.score }));

/** The same query through the copy in memory and through sqlite-vec: same memories, same order, same scores. */
async function expectSameAnswers(mirrored: SqliteStore, plain: SqliteStore, queries: VectorQuery[]): Promise<void> {
  for (const query of queries) {
    const expected = summary(await plain.vectorSearch(query));
    const actual = summary(await mirrored.vectorSearch(query));
    expect(actual.map((hit) => hit.id), JSON.stringify(query.scope ?? {})).toEqual(expected.map((hit) => hit.id));
    actual.forEach((hit, index) => expect(hit.score).toBeCloseTo(expected[index]!.score, 5));
  }
}

const put = (memory: MemoryRecord, vector: number[]): MemoryChange => createChange(memory, vector) as MemoryChange;
/** `m-0` … `m-<count - 1>`, given to `users` in turn. */
const memoriesOf = (count: number, users: string[]): MemoryRecord[] =>
  Array.from({ length: count }, (_, index) => newRecord(`m-${index}`, `memory ${index}`, users[index % users.length]!) as MemoryRecord);
const edit = (before: MemoryRecord, after: MemoryRecord, vector?: number[]): MemoryChange =>
  ({ ...replaceChange(before, after), ...(vector ? { vector } : {}) }) as MemoryChange;

describe('the vector mirror (vectors searched in process memory)', () => {
  it('answers every kind of vector query as sqlite-vec does', async () => {
    const path = folder().file();
    const random = seededRandom(11);
    const writer = await openStore(path, false);
    const users = ['alice', 'bob', 'carol'];
    await writer.apply(
      Array.from({ length: 300 }, (_, index) => {
        const memory = { ...newRecord(`m-${index}`, `memory ${index}`, users[index % 3]!), category: index % 5 === 0 ? 'fact' : 'episode' };
        if (index % 7 === 0) (memory.scope as Record<string, string>)['agentId'] = 'helper';
        if (index % 11 === 0) delete (memory.scope as Record<string, string | undefined>)['userId'];
        return put(memory as MemoryRecord, randomVector(random));
      }),
    );
    await writer.close();
    const mirrored = await openStore(path, true);
    const plain = await openStore(path, false);
    const queries: VectorQuery[] = [];
    for (let trial = 0; trial < 5; trial++) {
      const vector = randomVector(random);
      queries.push(
        { vector, limit: 10 },
        { vector, limit: 10, scope: { userId: 'bob' } },
        { vector, limit: 5, scope: { userId: 'alice' }, filter: { category: 'fact' } },
        { vector, limit: 5, scope: { userId: 'alice', agentId: 'helper' } },
        { vector, limit: 5, scope: { agentId: 'helper' } },
        { vector, limit: 400 },
      );
    }
    await expectSameAnswers(mirrored, plain, queries);
    await mirrored.close();
    await plain.close();
  });

  it("keeps up with its own writes: adds, new vectors, a move to another user, deletes, a scope's deletion", async () => {
    const path = folder().file();
    const random = seededRandom(5);
    const mirrored = await openStore(path, true);
    const plain = await openStore(path, false);
    const first = memoriesOf(40, ['bob', 'alice']);
    await mirrored.apply(first.map((memory) => put(memory, randomVector(random))));
    const probe = randomVector(random);
    const queries = (): VectorQuery[] => [
      { vector: probe, limit: 8 },
      { vector: probe, limit: 8, scope: { userId: 'alice' } },
      { vector: probe, limit: 8, scope: { userId: 'bob' } },
      { vector: probe, limit: 8, scope: { userId: 'dave' } },
    ];
    await expectSameAnswers(mirrored, plain, queries());
    // The unscoped query came first (sqlite-vec's); then alice's, bob's and dave's (none) were read.
    expect(mirrored.vectorMirrorStatus()).toEqual({ state: 'loaded', users: 3, vectors: 40, bytes: expect.any(Number) });
    // A memory given the probe itself as its new vector comes first.
    const target = first[3]!;
    const moved = { ...target, revision: 2 };
    await mirrored.apply([edit(target, moved, probe)]);
    expect((await mirrored.vectorSearch({ vector: probe, limit: 1 }))[0]?.memory.id).toBe(target.id);
    // To another user, keeping its vector: it leaves alice's group for dave's.
    const toDave = { ...moved, scope: { userId: 'dave' }, revision: 3 };
    await mirrored.apply([edit(moved, toDave)]);
    expect(summary(await mirrored.vectorSearch({ vector: probe, limit: 1, scope: { userId: 'dave' } }))[0]?.id).toBe(target.id);
    expect((await mirrored.vectorSearch({ vector: probe, limit: 40, scope: { userId: 'alice' } })).map((hit) => hit.memory.id)).not.toContain(target.id);
    await expectSameAnswers(mirrored, plain, queries());
    await mirrored.apply([{ op: 'delete', id: target.id }]);
    expect((await mirrored.vectorSearch({ vector: probe, limit: 40 })).map((hit) => hit.memory.id)).not.toContain(target.id);
    expect(await mirrored.deleteByScope({ userId: 'bob' })).toBe(20);
    expect(await mirrored.vectorSearch({ vector: probe, limit: 8, scope: { userId: 'bob' } })).toEqual([]);
    await expectSameAnswers(mirrored, plain, queries());
    await mirrored.close();
    await plain.close();
  });

  it('keeps nothing of a write that rolled back', async () => {
    const store = await openStore(folder().file(), true);
    const random = seededRandom(3);
    const kept = newRecord('kept', 'kept', 'alice') as MemoryRecord;
    await store.apply([put(kept, randomVector(random))]);
    const probe = randomVector(random);
    for (let search = 0; search < 2; search++) expect((await store.vectorSearch({ vector: probe, limit: 5 })).map((hit) => hit.memory.id)).toEqual(['kept']);
    expect(store.vectorMirrorStatus().state).toBe('loaded');
    // The first change is written, then the second fails on its revision: the whole batch rolls back.
    const lost = newRecord('lost', 'lost', 'alice') as MemoryRecord;
    await expect(store.apply([put(lost, probe), edit({ ...kept, revision: 5 }, { ...kept, revision: 6 }, probe)])).rejects.toMatchObject({ code: 'CONFLICT' });
    // (limit 1: a vector left behind for the lost memory would be the nearest and hide the kept one)
    expect((await store.vectorSearch({ vector: probe, limit: 1 })).map((hit) => hit.memory.id)).toEqual(['kept']);
    expect((await store.vectorSearch({ vector: probe, limit: 1, scope: { userId: 'alice' } })).map((hit) => hit.memory.id)).toEqual(['kept']);
    await store.close();
  });

  it("catches up with another connection's commits, from the change log or, when it is too far behind, by starting again", async () => {
    const path = folder().file();
    const random = seededRandom(9);
    const reader = await openStore(path, true);
    const plain = await openStore(path, false);
    const other = await openStore(path, true);
    const memories = memoriesOf(30, ['bob', 'alice']);
    await other.apply(memories.map((memory) => put(memory, randomVector(random))));
    const probe = randomVector(random);
    const queries = (): VectorQuery[] => [
      { vector: probe, limit: 6 },
      { vector: probe, limit: 6, scope: { userId: 'alice' } },
      { vector: probe, limit: 6, scope: { userId: 'carol' } },
    ];
    await expectSameAnswers(reader, plain, queries()); // the reader loads its copy here
    expect(reader.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 2, vectors: 15 }); // alice's and carol's
    // The other connection adds, re-embeds, moves and deletes; the reader sees each.
    await other.apply([put(newRecord('new', 'new', 'carol') as MemoryRecord, probe)]);
    expect((await reader.vectorSearch({ vector: probe, limit: 1, scope: { userId: 'carol' } }))[0]?.memory.id).toBe('new');
    await other.apply([edit(memories[0]!, { ...memories[0]!, revision: 2 }, probe)]);
    await other.apply([edit(memories[1]!, { ...memories[1]!, scope: { userId: 'carol' }, revision: 2 })]);
    await other.apply([{ op: 'delete', id: 'm-2' }]);
    await expectSameAnswers(reader, plain, queries());
    expect((await reader.vectorSearch({ vector: probe, limit: 30, scope: { userId: 'carol' } })).map((hit) => hit.memory.id).sort()).toEqual(['m-1', 'new']);
    // A write that changes no vector (recording access) leaves the copy as it is.
    await other.touch(['m-3'], new Date(0).toISOString());
    await expectSameAnswers(reader, plain, queries());

    // The log no longer reaches back to what the reader has (as after 100,000 later changes):
    // the reader reads every vector again, and so sees the change whose entry is gone.
    const moved = randomVector(random);
    await other.apply([edit(memories[5]!, { ...memories[5]!, revision: 2 }, moved)]);
    await other.apply([put(newRecord('newer', 'newer', 'alice') as MemoryRecord, probe)]);
    const raw = new Database(path);
    expect(raw.prepare('DELETE FROM vector_changes WHERE seq < (SELECT max(seq) FROM vector_changes)').run().changes).toBeGreaterThan(0);
    raw.close();
    await expectSameAnswers(reader, plain, queries());
    expect((await reader.vectorSearch({ vector: moved, limit: 1 }))[0]?.memory.id).toBe('m-5');
    // 30, one added by 'new', one deleted (m-2), one added by 'newer'
    expect(reader.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 'all', vectors: 31 });
    expect((await reader.vectorSearch({ vector: probe, limit: 1, scope: { userId: 'alice' } }))[0]?.memory.id).toBe('newer');
    for (const store of [reader, plain, other]) await store.close();
  });

  it('sees the writes of another store sharing its connection (the `database` option)', async () => {
    const path = folder().file();
    const connection = new Database(path);
    const reader = createSqliteStore({ database: connection });
    const writer = createSqliteStore({ database: connection });
    await reader.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await writer.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const random = seededRandom(12);
    await writer.apply(memoriesOf(10, ['alice']).map((memory) => put(memory, randomVector(random))));
    const probe = randomVector(random);
    for (let search = 0; search < 2; search++) await reader.vectorSearch({ vector: probe, limit: 3, scope: { userId: 'alice' } });
    expect(reader.vectorMirrorStatus()).toMatchObject({ state: 'loaded', vectors: 10 });
    // No other connection committed, so PRAGMA data_version cannot tell the reader; the change log does.
    await writer.apply([put(newRecord('new', 'new', 'alice') as MemoryRecord, probe)]);
    expect((await reader.vectorSearch({ vector: probe, limit: 1, scope: { userId: 'alice' } }))[0]?.memory.id).toBe('new');
    // The writer moves 'new' away from the probe, then the reader writes: its copy must not skip
    // the writer's change on the way (the reader's own entry comes after it).
    const fresh = (await writer.get('new'))!;
    await writer.apply([edit(fresh, { ...fresh, revision: fresh.revision + 1 }, randomVector(random))]);
    await reader.apply([put(newRecord('own', 'own', 'alice') as MemoryRecord, randomVector(random))]);
    const plain = await openStore(path, false);
    await expectSameAnswers(reader, plain, [{ vector: probe, limit: 3, scope: { userId: 'alice' } }]);
    expect(reader.vectorMirrorStatus()).toMatchObject({ state: 'loaded', vectors: 12 });
    await reader.close();
    await writer.close();
    await plain.close();
    connection.close();
  });

  it('keeps the first memories by id among neighbours tied at the cut, whichever scan answers', async () => {
    for (const vectorMirror of [true, false]) {
      const store = await openStore(folder().file(), vectorMirror);
      const same = randomVector(seededRandom(5));
      // The same fact stored three times (merge: false), and one other memory.
      const records = ['zeta', 'mid', 'alpha'].map((id) => newRecord(id, `the same fact (${id})`, 'alice') as MemoryRecord);
      await store.apply([...records.map((record) => put(record, same)), put(newRecord('other', 'something else', 'alice') as MemoryRecord, randomVector(seededRandom(6)))]);
      // The first search is sqlite-vec's, the next ones the copy's (when it is on).
      for (let search = 0; search < 3; search++) {
        for (const scope of [{ userId: 'alice' }, undefined]) {
          const hits = await store.vectorSearch({ vector: same, limit: 2, ...(scope ? { scope } : {}) });
          expect(hits.map((hit) => hit.memory.id), `mirror ${vectorMirror}, search ${search}`).toEqual(['alpha', 'mid']);
        }
      }
      await store.close();
    }
  });

  it('serves the new vectors after a re-index to another embedder', async () => {
    const path = folder().file();
    const store = await openStore(path, true);
    const records = ['tea with lemon', 'coffee, black', 'a bicycle ride'].map((text, index) => newRecord(`m-${index}`, text, 'alice') as MemoryRecord);
    const before = createTestEmbedder({ dimension: DIMENSION, id: EMBEDDER_ID });
    await store.apply(await Promise.all(records.map(async (memory) => put(memory, (await before.embed([memory.content]))[0]!))));
    for (let search = 0; search < 2; search++) await store.vectorSearch({ vector: randomVector(seededRandom(1)), limit: 3 });
    expect(store.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 'all', vectors: 3 }); // the old vectors
    const after = createTestEmbedder({ dimension: 21, id: 'memloom/other-vectors' });
    await reindex({ store, embedder: after });
    // The first write after the switch: its vector (of the new dimension) must not meet the old copy.
    const ride = newRecord('m-new', 'a long bicycle ride', 'alice') as MemoryRecord;
    await store.apply([put(ride, (await after.embed([ride.content]))[0]!)]);
    expect(store.vectorMirrorStatus().state).not.toBe('unavailable');
    await store.apply([{ op: 'delete', id: 'm-new' }]);
    const query = (await after.embed(['a bicycle ride'], { purpose: 'query' }))[0]!;
    const hits = await store.vectorSearch({ vector: query, limit: 1 });
    expect(hits[0]?.memory.id).toBe('m-2');
    expect(hits[0]?.score).toBeGreaterThan(0.99);
    expect(store.vectorMirrorStatus()).toMatchObject({ state: 'loaded', vectors: 3 });
    await store.close();
    expect(store.vectorMirrorStatus().state).toBe('not-loaded');
  });

  it('keeps its copy working when another store on the file re-indexes to another embedder', async () => {
    const path = folder().file();
    const reader = await openStore(path, true);
    const records = ['tea with lemon', 'coffee, black', 'a bicycle ride'].map((text, index) => newRecord(`m-${index}`, text, 'alice') as MemoryRecord);
    const before = createTestEmbedder({ dimension: DIMENSION, id: EMBEDDER_ID });
    await reader.apply(await Promise.all(records.map(async (memory) => put(memory, (await before.embed([memory.content]))[0]!))));
    for (let search = 0; search < 2; search++) await reader.vectorSearch({ vector: randomVector(seededRandom(1)), limit: 3 });
    expect(reader.vectorMirrorStatus()).toMatchObject({ state: 'loaded', vectors: 3 });
    // Another process (here another store on the file) switches the file to vectors of another dimension.
    const other = await openStore(path, true);
    const after = createTestEmbedder({ dimension: 21, id: 'memloom/other-vectors' });
    await reindex({ store: other, embedder: after });
    await other.close();
    // This store serves the old embedder until it is opened for the new one (it refuses its vectors and queries meanwhile).
    await expect(reader.vectorSearch({ vector: randomVector(seededRandom(1)), limit: 3 })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
    await reader.open({ dimension: after.dimension, embedderId: after.id });
    // Its next write goes to the new table, while its copy still holds the old one's vectors.
    const ride = newRecord('m-new', 'a long bicycle ride', 'alice') as MemoryRecord;
    await reader.apply([put(ride, (await after.embed([ride.content]))[0]!)]);
    const query = (await after.embed(['a bicycle ride'], { purpose: 'query' }))[0]!;
    const hits = await reader.vectorSearch({ vector: query, limit: 2 });
    expect(hits.map((hit) => hit.memory.id)).toEqual(['m-2', 'm-new']);
    expect(reader.vectorMirrorStatus()).toMatchObject({ state: 'loaded', vectors: 4 });
    await reader.close();
  });

  it('searches with sqlite-vec once the copy would pass vectorMirrorMaxBytes, and never fails a committed write for it', async () => {
    const path = folder().file();
    const random = seededRandom(17);
    // 13 dimensions pad to 16 floats (64 bytes a row): 128 KiB holds about 1,000 rows with their scratch space.
    const limited = createSqliteStore({ path, vectorChunkSize: 8, vectorMirrorMaxBytes: 128 * 1024 });
    await limited.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const plain = await openStore(path, false);
    const batch = (from: number, count: number): MemoryChange[] =>
      Array.from({ length: count }, (_, offset) => put(newRecord(`m-${from + offset}`, `memory ${from + offset}`, offset % 2 ? 'alice' : 'bob') as MemoryRecord, randomVector(random)));
    await limited.apply(batch(0, 500));
    const probe = randomVector(random);
    const queries = (): VectorQuery[] => [{ vector: probe, limit: 10 }, { vector: probe, limit: 10, scope: { userId: 'alice' } }];
    await expectSameAnswers(limited, plain, queries());
    await limited.vectorSearch({ vector: probe, limit: 1 }); // a search without a user reads every vector: 500 rows fit
    expect(limited.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 'all', vectors: 500 });
    expect(limited.vectorMirrorStatus().bytes).toBeLessThanOrEqual(128 * 1024);
    // This write takes the copy past its limit after the commit: the write succeeds, the copy goes.
    await expect(limited.apply(batch(500, 1500))).resolves.toBeUndefined();
    expect(limited.vectorMirrorStatus()).toEqual({ state: 'unavailable', users: 0, vectors: 0, bytes: 0 });
    expect(await limited.count({})).toBe(2000);
    await limited.apply([put(newRecord('probe', 'the probe', 'alice') as MemoryRecord, probe)]);
    await expectSameAnswers(limited, plain, queries());
    expect((await limited.vectorSearch({ vector: probe, limit: 1 }))[0]?.memory.id).toBe('probe');
    // Reopened: sqlite-vec answers whatever does not fit.
    await limited.close();
    const reopened = createSqliteStore({ path, vectorMirrorMaxBytes: 128 * 1024 });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await expectSameAnswers(reopened, plain, queries());
    // Alice's vectors alone fit (her search after the first reads them); every vector does not.
    expect(reopened.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 1 });
    await expectSameAnswers(reopened, plain, queries());
    expect(reopened.vectorMirrorStatus().state).toBe('unavailable');
    await reopened.close();
    await plain.close();
  });

  it("holds the vectors of the users it searched only, and keeps them in step as memories move between users", async () => {
    const path = folder().file();
    const random = seededRandom(31);
    const store = await openStore(path, true);
    const plain = await openStore(path, false);
    const other = await openStore(path, false);
    const memories = ['a', 'b', 'c'].flatMap((user) =>
      Array.from({ length: 10 }, (_, index) => newRecord(`${user}-${index}`, `memory ${index} of ${user}`, user) as MemoryRecord),
    );
    await store.apply(memories.map((memory) => put(memory, randomVector(random))));
    const probe = randomVector(random);
    const ids = async (userId: string, from = store): Promise<string[]> =>
      (await from.vectorSearch({ vector: probe, limit: 50, scope: { userId } })).map((hit) => hit.memory.id).sort();
    await ids('a');
    expect(await ids('a')).toHaveLength(10);
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 1, vectors: 10 });
    expect(await ids('b')).toHaveLength(10);
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 2, vectors: 20 });
    // This store moves a-0 to c, which it does not hold: a-0 leaves the copy, and is in c's once c is read.
    const a0 = memories[0]!;
    await store.apply([edit(a0, { ...a0, scope: { userId: 'c' }, revision: 2 })]);
    expect(await ids('a')).not.toContain('a-0');
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 2, vectors: 19 });
    expect(await ids('c')).toContain('a-0');
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 3, vectors: 30 });
    // Another connection adds to a held user and to one not held, and moves b-1 to a user not held.
    await other.apply([put(newRecord('a-new', 'new of a', 'a') as MemoryRecord, probe), put(newRecord('d-0', 'of d', 'd') as MemoryRecord, probe)]);
    const b1 = memories[11]!;
    await other.apply([edit(b1, { ...b1, scope: { userId: 'e' }, revision: 2 })]);
    expect(await ids('a')).toContain('a-new');
    expect(await ids('b')).not.toContain('b-1');
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 3, vectors: 30 });
    for (const user of ['a', 'b', 'c', 'd', 'e']) expect(await ids(user)).toEqual(await ids(user, plain));
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 5, vectors: 32 });
    // A search without a user needs every vector.
    await expectSameAnswers(store, plain, [{ vector: probe, limit: 40 }]);
    expect(store.vectorMirrorStatus()).toMatchObject({ users: 'all', vectors: 32 });
    for (const open of [store, plain, other]) await open.close();
  });

  it('answers the first vector search with sqlite-vec and reads the copy at the second', async () => {
    const path = folder().file();
    const store = await openStore(path, true);
    const random = seededRandom(8);
    await store.apply(memoriesOf(20, ['alice']).map((memory) => put(memory, randomVector(random))));
    expect(store.vectorMirrorStatus()).toEqual({ state: 'not-loaded', users: 0, vectors: 0, bytes: 0 });
    const first = await store.vectorSearch({ vector: randomVector(random), limit: 3 });
    expect(first).toHaveLength(3);
    expect(store.vectorMirrorStatus().state).toBe('not-loaded');
    await store.vectorSearch({ vector: randomVector(random), limit: 3, scope: { userId: 'alice' } });
    const status = store.vectorMirrorStatus();
    expect(status).toMatchObject({ state: 'loaded', users: 1, vectors: 20 });
    expect(status.bytes).toBeGreaterThanOrEqual(20 * 16 * 4);
    await store.close();
    const off = await openStore(path, false);
    for (let search = 0; search < 3; search++) await off.vectorSearch({ vector: randomVector(random), limit: 3 });
    expect(off.vectorMirrorStatus()).toEqual({ state: 'off', users: 0, vectors: 0, bytes: 0 });
    await off.close();
  });

  it('answers approximate queries of a large user through bit codes, within scope and filter, with true scores', async () => {
    const path = folder().file();
    const random = seededRandom(21);
    // 600 memories for alice (every third a fact), 100 for bob; alice is past the threshold, bob is not.
    const writer = await openStore(path, false);
    const memories = Array.from({ length: 700 }, (_, index) => ({
      ...newRecord(`m-${index}`, `memory ${index}`, index < 600 ? 'alice' : 'bob'),
      category: index % 3 === 0 ? 'fact' : 'episode',
    })) as MemoryRecord[];
    const vectors = memories.map(() => randomVector(random));
    await writer.apply(memories.map((memory, index) => put(memory, vectors[index]!)));
    await writer.close();
    const approximate = createSqliteStore({ path, vectorChunkSize: 8, vectorApproximateFrom: 300 });
    const exactOnly = createSqliteStore({ path, vectorChunkSize: 8, vectorApproximateFrom: Infinity });
    for (const store of [approximate, exactOnly]) {
      await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      await store.vectorSearch({ vector: randomVector(random), limit: 1 });
    }
    const plain = await openStore(path, false);
    let differing = 0;
    for (let trial = 0; trial < 60; trial++) {
      const vector = randomVector(random);
      const queries: VectorQuery[] = [
        { vector, limit: 30, scope: { userId: 'alice' }, approximate: true },
        { vector, limit: 5, scope: { userId: 'alice' }, exactScope: true, filter: { category: 'fact' }, approximate: true },
      ];
      for (const query of queries) {
        const hits = await approximate.vectorSearch(query);
        const expected = summary(await plain.vectorSearch(query));
        if (hits.map((hit) => hit.memory.id).join() !== expected.map((hit) => hit.id).join()) differing++;
        expect(hits).toHaveLength(query.limit);
        for (const hit of hits) {
          const index = Number(hit.memory.id.slice(2));
          expect(hit.memory.scope.userId).toBe('alice');
          if (query.filter) expect(hit.memory.category).toBe('fact');
          const vector = vectors[index]!;
          const cosine = vector.reduce((sum, value, at) => sum + value * query.vector[at]!, 0) / Math.hypot(...vector) / Math.hypot(...query.vector);
          expect(hit.score).toBeCloseTo(cosine, 5);
        }
        // Turned off, and below the threshold (bob), approximate queries are answered exactly.
        await expectSameAnswers(exactOnly, plain, [query]);
        await expectSameAnswers(approximate, plain, [{ ...query, scope: { userId: 'bob' } }]);
      }
    }
    // 13 dimensions of random vectors: bit codes tell neighbours apart poorly, so the approximate
    // answer differs from the exact one now and then; that shows the codes were used.
    expect(differing).toBeGreaterThan(0);
    // A near twin of the query is found even so (and searches without `approximate` stay exact).
    const query = randomVector(random);
    const twin = { ...newRecord('twin', 'twin', 'alice'), category: 'fact' } as MemoryRecord;
    await approximate.apply([put(twin, query.map((value) => value + 0.01 * (random() - 0.5)))]);
    const [nearest] = await approximate.vectorSearch({ vector: query, limit: 1, scope: { userId: 'alice' }, exactScope: true, filter: { category: 'fact' }, approximate: true });
    expect(nearest?.memory.id).toBe('twin');
    for (const store of [approximate, exactOnly, plain]) await store.close();
  });

  it('refuses vectorMirror options of the wrong kind', () => {
    expect(() => createSqliteStore({ path: ':memory:', vectorMirror: 'yes' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    for (const vectorMirrorMaxBytes of [0, -1, 1.5, '1' as never]) {
      expect(() => createSqliteStore({ path: ':memory:', vectorMirrorMaxBytes })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
    for (const vectorApproximateFrom of [0, -1, 1.5, '1' as never]) {
      expect(() => createSqliteStore({ path: ':memory:', vectorApproximateFrom })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
  });
});
