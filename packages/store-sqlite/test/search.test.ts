import { createMemory, TextIndex, type MemoryRecord } from '@memloom/core';
import { createTestEmbedder } from '@memloom/core/testing';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/index.js';
import { createChange, DIMENSION, EMBEDDER_ID, newRecord, vectorFor } from './fixtures/records.mjs';
import { tempFolders } from './helpers.js';

const folder = tempFolders();
const file = (): string => folder().file();

function unit(index: number, dimension = DIMENSION): number[] {
  const vector = new Array<number>(dimension).fill(0);
  vector[index] = 1;
  return vector;
}

describe('scoped vector search', () => {
  for (const vectorMirror of [false, true]) {
    it(`reads only the user's own vectors: it still answers when every other user's vector chunk is destroyed (vector mirror ${vectorMirror ? "on: it reads alice's vectors only" : 'off'})`, async () => {
      const path = file();
      const store = createSqliteStore({ path, vectorChunkSize: 8, vectorMirror });
      await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      const users = ['alice', 'bob', 'carol', "alice' OR '1'='1", 'alice%'];
      await store.apply(
        users.flatMap((user, userIndex) =>
          Array.from({ length: 20 }, (_, index) => createChange(newRecord(`${userIndex}-${index}`, `memory ${index} of ${user}`, user), vectorFor(index))),
        ),
      );
      await store.close();

      // Overwrite every vector chunk outside alice's partition with a blob of the wrong size.
      const raw = new Database(path);
      sqliteVec.load(raw);
      const destroyed = raw
        .prepare(
          `UPDATE memory_vectors_1_vector_chunks00 SET vectors = zeroblob(3)
           WHERE rowid IN (SELECT chunk_id FROM memory_vectors_1_chunks WHERE partition00 != '=alice')`,
        )
        .run().changes;
      raw.close();
      expect(destroyed).toBeGreaterThanOrEqual(4 * 3);

      const reopened = createSqliteStore({ path, vectorMirror });
      await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      const hits = await reopened.vectorSearch({ vector: vectorFor(3), limit: 5, scope: { userId: 'alice' } });
      expect(hits).toHaveLength(5);
      expect(hits.every((hit) => hit.memory.scope.userId === 'alice')).toBe(true);
      expect(hits[0]?.score).toBeCloseTo(1, 5);
      // Through the facade too: a scoped hybrid search never touches the destroyed chunks.
      const memory = createMemory({ store: reopened, embedder: createTestEmbedder({ dimension: DIMENSION, id: EMBEDDER_ID }) });
      const results = await memory.search('memory of alice', { scope: { userId: 'alice' } });
      expect(results.length).toBeGreaterThan(0);
      expect(results.every((result) => result.memory.scope.userId === 'alice')).toBe(true);
      // With the copy, that second search read alice's vectors into it, and nobody else's.
      if (vectorMirror) expect(reopened.vectorMirrorStatus()).toMatchObject({ state: 'loaded', users: 1, vectors: 20 });
      // Whereas any search that has to read them fails.
      await expect(reopened.vectorSearch({ vector: vectorFor(3), limit: 5 })).rejects.toMatchObject({ backend: 'sqlite' });
      await expect(reopened.vectorSearch({ vector: vectorFor(3), limit: 5, scope: { userId: 'bob' } })).rejects.toMatchObject({ backend: 'sqlite' });
      await reopened.close();
    });
  }

  for (const vectorMirror of [false, true]) {
    it(`keeps a search scoped to a user's agent or session inside it: nearer memories of the user's other agents and sessions do not come back (vector mirror ${vectorMirror ? 'on' : 'off'})`, async () => {
      const store = createSqliteStore({ path: ':memory:', vectorMirror });
      await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      const scoped = (id: string, scope: MemoryRecord['scope']): MemoryRecord => ({ ...newRecord(id, `memory ${id}`, 'alice'), scope });
      // Right at the query: alice's memories of another agent and another session. Far from it: the ones asked for.
      await store.apply([
        createChange(scoped('other-agent', { userId: 'alice', agentId: 'a2' }), unit(0)),
        createChange(scoped('other-session', { userId: 'alice', sessionId: 's2' }), unit(0)),
        createChange(scoped('mine-agent', { userId: 'alice', agentId: 'a1' }), unit(1)),
        createChange(scoped('mine-session', { userId: 'alice', sessionId: 's1' }), unit(1)),
      ]);
      // Twice: the first search is sqlite-vec's, the second the copy's when it is on.
      for (let round = 0; round < 2; round++) {
        const byAgent = await store.vectorSearch({ vector: unit(0), limit: 1, scope: { userId: 'alice', agentId: 'a1' } });
        expect(byAgent.map((hit) => hit.memory.id)).toEqual(['mine-agent']);
        const bySession = await store.vectorSearch({ vector: unit(0), limit: 5, scope: { userId: 'alice', sessionId: 's1' } });
        expect(bySession.map((hit) => hit.memory.id)).toEqual(['mine-session']);
      }
      await store.close();
    });
  }

  it('finds filtered memories beyond the nearest neighbours, exactly', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    // 300 episodes right at the query and one far-away fact: the fact is the only match for the filter.
    const episodes = Array.from({ length: 300 }, (_, index) => ({ ...newRecord(`e-${index}`, `episode ${index}`, 'alice'), category: 'episode' as const }));
    const fact = { ...newRecord('fact', 'the one fact', 'alice'), tags: ['rare'] };
    await store.apply([...episodes.map((memory) => createChange(memory, unit(0))), createChange(fact, unit(1))]);
    for (const filter of [{ category: 'fact' as const }, { tags: ['rare'] }]) {
      const hits = await store.vectorSearch({ vector: unit(0), limit: 3, scope: { userId: 'alice' }, filter });
      expect(hits.map((hit) => hit.memory.id)).toEqual(['fact']);
      expect(hits[0]?.score).toBeCloseTo(0, 5);
    }
    // More filtered-out neighbours than sqlite-vec returns at once (4096): the store compares the rest one by one.
    const crowd = Array.from({ length: 4200 }, (_, index) => ({ ...newRecord(`c-${index}`, `crowd ${index}`, 'alice'), category: 'episode' as const }));
    for (let start = 0; start < crowd.length; start += 500) {
      await store.apply(crowd.slice(start, start + 500).map((memory) => createChange(memory, unit(0))));
    }
    const beyond = await store.vectorSearch({ vector: unit(0), limit: 2, scope: { userId: 'alice' }, filter: { category: 'fact', tags: ['rare'] } });
    expect(beyond.map((hit) => hit.memory.id)).toEqual(['fact']);
    expect((await store.vectorSearch({ vector: unit(0), limit: 5000, scope: { userId: 'alice' } })).length).toBe(4501);
    // Given ids, only those memories are compared (through the id index), with the rest of the scope and filter.
    const named = await store.vectorSearch({ vector: unit(0), limit: 3, scope: { userId: 'alice' }, filter: { ids: ['fact', 'c-4199', 'e-7', 'nobody'] } });
    expect(named.map((hit) => [hit.memory.id, Math.round(hit.score * 1000) / 1000])).toEqual([['c-4199', 1], ['e-7', 1], ['fact', 0]]);
    expect((await store.vectorSearch({ vector: unit(0), limit: 3, scope: { userId: 'bob' }, filter: { ids: ['fact'] } }))).toEqual([]);
    expect((await store.vectorSearch({ vector: unit(0), limit: 3, scope: { userId: 'alice' }, filter: { ids: ['fact', 'e-7'], category: 'episode' } })).map((hit) => hit.memory.id)).toEqual(['e-7']);
    // exactScope: only memories without agent or session.
    const inSession: MemoryRecord = { ...newRecord('in-session', 'session memory', 'alice'), scope: { userId: 'alice', sessionId: 's1' } };
    await store.apply([createChange(inSession, unit(2))]);
    const nearest = await store.vectorSearch({ vector: unit(2), limit: 1, scope: { userId: 'alice' }, exactScope: true });
    expect(nearest[0]?.memory.id).not.toBe('in-session');
    // Scoped by session alone: no partition to use, the session's rows are compared one by one.
    const bySession = await store.vectorSearch({ vector: unit(0), limit: 10, scope: { sessionId: 's1' } });
    expect(bySession.map((hit) => hit.memory.id)).toEqual(['in-session']);
    await store.close();
  });
});

describe('text search', () => {
  it('checks the nearest neighbours against the filter first, then the rest', async () => {
    // The 20 nearest are episodes and the filter wants a fact: the nearest fact is the 21st neighbour,
    // past the first ones checked.
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const towards = (share: number) => unit(0).map((value, index) => value * Math.cos(share) + (unit(1)[index] as number) * Math.sin(share));
    const changes = Array.from({ length: 40 }, (_, rank) => {
      const record = { ...newRecord(`m-${rank}`, `memory ${rank}`, 'alice'), category: rank < 20 ? ('episode' as const) : ('fact' as const) };
      return createChange(record, towards(0.01 * (rank + 1)));
    });
    await store.apply(changes);
    for (const approximate of [false, true]) {
      const hits = await store.vectorSearch({ vector: unit(0), limit: 1, scope: { userId: 'alice' }, filter: { category: 'fact' }, approximate });
      expect(hits.map((hit) => hit.memory.id)).toEqual(['m-20']);
      const three = await store.vectorSearch({ vector: unit(0), limit: 3, scope: { userId: 'alice' }, filter: { category: 'episode' } });
      expect(three.map((hit) => hit.memory.id)).toEqual(['m-0', 'm-1', 'm-2']);
    }
    await store.close();
  });

  it('finds Chinese words inside Chinese sentences, and mixed Chinese and English', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const texts = {
      coffee: '我每天早上都喝一杯咖啡',
      tea: '她更喜欢喝绿茶',
      beijing: '我在北京做AI工程师',
      english: 'The user drinks espresso',
    };
    await store.apply(Object.entries(texts).map(([id, content], index) => createChange(newRecord(id, content, 'alice'), vectorFor(index))));
    const ids = async (text: string) => (await store.textSearch({ text, limit: 5 })).map((hit) => hit.memory.id);
    expect(await ids('咖啡')).toEqual(['coffee']);
    expect(await ids('绿茶')).toEqual(['tea']);
    expect((await ids('北京的工程师'))[0]).toBe('beijing');
    expect(await ids('AI')).toEqual(['beijing']);
    expect((await ids('喝'))).toEqual(expect.arrayContaining(['coffee', 'tea']));
    expect(await ids('espresso 咖啡')).toEqual(expect.arrayContaining(['coffee', 'english']));
    await store.close();
  });

  it('follows a memory moved to another scope', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const before = newRecord('moved', 'the turquoise notebook', 'alice');
    await store.apply([createChange(before, vectorFor(1))]);
    const after: MemoryRecord = { ...before, scope: { userId: 'bob', sessionId: 's9' }, revision: 2 };
    await store.apply([
      { op: 'put', memory: after, expectedRevision: 1, version: { memoryId: 'moved', version: 2, at: after.updatedAt, trigger: 'manual_edit', action: 'edit', reason: 'moved', before, after } },
    ]);
    expect(await store.textSearch({ text: 'turquoise', limit: 5, scope: { userId: 'alice' } })).toEqual([]);
    expect((await store.textSearch({ text: 'turquoise', limit: 5, scope: { userId: 'bob', sessionId: 's9' }, exactScope: true })).map((hit) => hit.memory.id)).toEqual(['moved']);
    expect(await store.vectorSearch({ vector: vectorFor(1), limit: 5, scope: { userId: 'alice' } })).toEqual([]);
    expect((await store.vectorSearch({ vector: vectorFor(1), limit: 5, scope: { userId: 'bob' } })).map((hit) => hit.memory.id)).toEqual(['moved']);
    await store.close();
  });

  it('applies limit after exactScope: better matches of the user\'s sessions do not crowd out the one asked for', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const inSession = (id: string): MemoryRecord => ({ ...newRecord(id, 'coffee', 'alice'), scope: { userId: 'alice', sessionId: 's1' } });
    // Short memories of a session rank above the longer one of alice alone, and were stored first.
    await store.apply([
      createChange(inSession('s-1'), vectorFor(1)),
      createChange(inSession('s-2'), vectorFor(2)),
      createChange(newRecord('plain', 'I drink coffee with milk every single morning', 'alice'), vectorFor(3)),
    ]);
    for (const filter of [undefined, { category: 'fact' as const }]) {
      const hits = await store.textSearch({ text: 'coffee', limit: 1, scope: { userId: 'alice' }, exactScope: true, ...(filter ? { filter } : {}) });
      expect(hits.map((hit) => hit.memory.id)).toEqual(['plain']);
    }
    await store.close();
  });

  it('works through the Memory facade on a file, in Chinese', async () => {
    const store = createSqliteStore({ path: file() });
    const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: 16, id: 'test/zh' }) });
    await memory.add('我喜欢喝咖啡，每天早上一杯拿铁', { scope: { userId: '用户甲' } });
    await memory.add('我是一名AI工程师，在北京工作', { scope: { userId: '用户甲' } });
    await memory.add('我喜欢喝咖啡', { scope: { userId: '用户乙' } });
    const results = await memory.search('拿铁', { scope: { userId: '用户甲' } });
    expect(results[0]?.memory.content).toContain('拿铁');
    expect(results.every((result) => result.memory.scope.userId === '用户甲')).toBe(true);
    await memory.close();
  });
});

describe('keyword search ties', () => {
  it('keeps the memories stored first among hits tied at the cut, the same with or without a filter', async () => {
    const docs = [['zeta', 'I drink coffee daily'], ['mid', 'I drink coffee weekly'], ['alpha', 'I drink coffee hourly'], ['x1', 'tea is nice'], ['x2', 'water is fine']];
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply(docs.map(([id, text], index) => createChange(newRecord(id!, text!, 'u'), vectorFor(index))));
    const ids = async (query: { limit: number; filter?: object; scope?: { userId: string } }) => (await store.textSearch({ text: 'coffee', ...query })).map((hit) => hit.memory.id);
    for (const scope of [{ userId: 'u' }, undefined]) {
      const scoped = scope ? { scope } : {};
      expect(await ids({ limit: 2, ...scoped })).toEqual(['zeta', 'mid']);
      expect(await ids({ limit: 2, filter: {}, ...scoped })).toEqual(['zeta', 'mid']);
      expect(await ids({ limit: 2, filter: { category: 'fact' }, ...scoped })).toEqual(['zeta', 'mid']);
      expect(await ids({ limit: 1, ...scoped })).toEqual(['zeta']);
      expect(await ids({ limit: 5, ...scoped })).toEqual(['zeta', 'mid', 'alpha']);
    }
    await store.close();
  });
});

describe('keyword ranking', () => {
  it("orders matches as core's TextIndex does (the in-memory and Markdown stores): the same IDF, where a word in half the memories weighs next to nothing", async () => {
    const docs = [['photos', 'photo photo'], ['beach', 'photo of the beach'], ['dancers', 'dancers rehearse on a long summer evening stage'], ['garden', 'garden tools']];
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply(docs.map(([id, text], index) => createChange(newRecord(id!, text!, 'u'), vectorFor(index))));
    const index = new TextIndex();
    for (const [id, text] of docs) index.set(id!, text!);
    const fts5 = (await store.textSearch({ text: 'dancers photo', scope: { userId: 'u' }, limit: 10 })).map((hit) => hit.memory.id);
    expect(fts5).toEqual(['dancers', 'photos', 'beach']);
    expect(index.search('dancers photo', 10).map((hit) => hit.id)).toEqual(fts5);
    await store.close();
  });
});

describe('filters, read as core reads them', () => {
  it('matches nothing for an empty list of categories, types, levels or sources (core: one of none)', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('tea', 'I like tea', 'alice'), unit(0)), createChange(newRecord('coffee', 'I like coffee', 'alice'), unit(1))]);
    for (const filter of [{ category: [] }, { type: [] }, { level: [] }, { source: [] }]) {
      expect(await store.list({ scope: { userId: 'alice' }, filter })).toEqual([]);
      expect(await store.count({ scope: { userId: 'alice' }, filter })).toBe(0);
      expect(await store.vectorSearch({ vector: unit(0), limit: 5, scope: { userId: 'alice' }, filter })).toEqual([]);
      expect(await store.textSearch({ text: 'like', limit: 5, scope: { userId: 'alice' }, filter })).toEqual([]);
    }
    // One category given as a list still matches.
    expect(await store.count({ scope: { userId: 'alice' }, filter: { category: ['fact'] } })).toBe(2);
    await store.close();
  });
});
