import type { MemoryRecord } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createQdrantStore } from '../src/index.js';
import { toMemoryPayload, toVersionPayload } from '../src/payload.js';
import { memoryPointId } from '../src/point-ids.js';
import { queryVector, termIndex } from '../src/sparse-text.js';
import { httpError, scriptedClient } from './fake-client.js';

function record(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id: 'm1',
    content: 'the user drinks espresso',
    level: 'full',
    weight: 0.5,
    baseWeight: 0.5,
    importance: 1,
    baseImportance: 1,
    category: 'fact',
    type: 'user',
    scope: { userId: 'alice' },
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-02T00:00:00.000Z',
    lastAccessedAt: '2024-01-03T00:00:00.000Z',
    source: 'user',
    verified: true,
    sources: ['t1'],
    tags: ['drink'],
    metadata: { topic: 'coffee', nested: { a: [1, null] } },
    revision: 1,
    ...overrides,
  };
}

function point(memory: MemoryRecord, writeId = 'w1') {
  return { id: memoryPointId(memory.id), payload: { ...toMemoryPayload(memory, writeId) } };
}

const KIND_MEMORY = { key: 'kind', match: { value: 'memory' } };

/** The version of memory m1 that made `after` from `before`. */
function entry(after: MemoryRecord, before: MemoryRecord | null) {
  return { memoryId: 'm1', version: after.revision, at: after.updatedAt, trigger: 'manual_edit' as const, action: 'edit' as const, reason: 'r', before, after };
}

describe('filters are sent to Qdrant, never applied in JavaScript', () => {
  it('scope fields match exactly; exactScope asks for the others to be empty', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    await store.vectorSearch({ vector: new Array(8).fill(0.1), scope: { userId: "alice' OR '1'='1" }, exactScope: true, limit: 3 });
    await store.vectorSearch({ vector: new Array(8).fill(0.1), scope: { sessionId: 's1' }, limit: 3 });
    const [exact, partial] = fake.bodies('query');
    expect(exact.filter).toEqual({
      must: [KIND_MEMORY, { key: 'userId', match: { value: "alice' OR '1'='1" } }, { is_empty: { key: 'agentId' } }, { is_empty: { key: 'sessionId' } }],
    });
    expect(partial.filter).toEqual({ must: [KIND_MEMORY, { key: 'sessionId', match: { value: 's1' } }] });
  });

  it('every MemoryFilter field becomes a condition', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    await store.count({
      scope: { userId: 'bob' },
      filter: {
        category: ['fact', 'core'],
        type: 'project',
        level: ['summary'],
        source: 'user',
        verified: false,
        tags: ['morning', 'work'],
        metadata: { topic: 'coffee', rank: 2, pinned: true, score: 0.5 },
        ids: ['m1', 'm2'],
      },
    });
    const [count] = fake.bodies('count');
    expect(count.exact).toBe(true);
    expect(count.filter.must).toEqual([
      KIND_MEMORY,
      { key: 'userId', match: { value: 'bob' } },
      { key: 'category', match: { any: ['fact', 'core'] } },
      { key: 'type', match: { value: 'project' } },
      { key: 'level', match: { any: ['summary'] } },
      { key: 'source', match: { value: 'user' } },
      { key: 'verified', match: { value: false } },
      { key: 'tags', match: { any: ['morning', 'work'] } },
      { key: 'metadata.topic', match: { value: 'coffee' } },
      { key: 'metadata.topic', values_count: { lte: 1 } },
      { key: 'metadata.rank', match: { value: 2 } },
      { key: 'metadata.rank', values_count: { lte: 1 } },
      { key: 'metadata.pinned', match: { value: true } },
      { key: 'metadata.pinned', values_count: { lte: 1 } },
      { key: 'metadata.score', range: { gte: 0.5, lte: 0.5 } },
      { key: 'metadata.score', values_count: { lte: 1 } },
      // Points are named by their memory's id.
      { has_id: [memoryPointId('m1'), memoryPointId('m2')] },
    ]);
  });

  it('an ids filter is a has_id condition in every read, an empty one too (it matches no point)', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    await store.vectorSearch({ vector: new Array(8).fill(0.1), filter: { ids: ['m1'] }, limit: 3 });
    await store.textSearch!({ text: 'espresso', filter: { ids: [] }, limit: 3 });
    await store.list({ filter: { ids: ['m1'] } });
    const [vector, text] = fake.bodies('query');
    expect(vector.filter.must).toEqual([KIND_MEMORY, { has_id: [memoryPointId('m1')] }]);
    expect(text.filter.must).toEqual([KIND_MEMORY, { has_id: [] }]);
    expect(fake.bodies('scroll')[0].filter.must).toEqual([KIND_MEMORY, { has_id: [memoryPointId('m1')] }]);
  });

  it('quotes a metadata key that is not a plain word, so "a.b" is that key and not a nested field; refuses keys with " or \\', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    await store.count({ filter: { metadata: { 'a.b': 'x', 'two words': 1, 话题: '咖啡', 'snake_case-key': true } } });
    const keys = fake.bodies('count')[0].filter.must.map((condition: { key: string }) => condition.key);
    expect([...new Set(keys)]).toEqual(['kind', 'metadata."a.b"', 'metadata."two words"', 'metadata.话题', 'metadata.snake_case-key']);
    for (const key of ['say "hi"', 'back\\slash']) {
      await expect(store.count({ filter: { metadata: { [key]: 1 } } })).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
    }
  });
});

describe('searches', () => {
  it('vector search queries the dense vector with the filter and limit and returns cosine scores', async () => {
    const near = record({ id: 'near' });
    const far = record({ id: 'far' });
    const fake = scriptedClient({
      query: () => ({ points: [{ ...point(far), score: 0.2 }, { ...point(near), score: 0.9 }] }),
    });
    const store = createQdrantStore({ client: fake.client });
    const hits = await store.vectorSearch({ vector: [1, 0, 0, 0, 0, 0, 0, 0], limit: 5 });
    expect(fake.bodies('query')[0]).toMatchObject({ query: [1, 0, 0, 0, 0, 0, 0, 0], using: 'dense', limit: 5, with_payload: true });
    expect(hits.map((hit) => [hit.memory.id, hit.score])).toEqual([['near', 0.9], ['far', 0.2]]);
    expect(hits[0]?.memory).toEqual(near);
  });

  it('text search sends core-tokenized terms as a sparse query with unit weights', async () => {
    const fake = scriptedClient({ query: () => ({ points: [{ ...point(record()), score: 2.5 }] }) });
    const store = createQdrantStore({ client: fake.client });
    const hits = await store.textSearch!({ text: 'Runs, running marathons!', scope: { userId: 'alice' }, limit: 4 });
    const [body] = fake.bodies('query');
    expect(body.using).toBe('text');
    // "runs" and "running" stem to one term: it is sent once.
    expect(body.query).toEqual({ indices: [termIndex('run'), termIndex('marathon')].sort((a, b) => a - b), values: [1, 1] });
    expect(body.filter.must).toContainEqual({ key: 'userId', match: { value: 'alice' } });
    expect(hits.map((hit) => hit.score)).toEqual([2.5]);
  });

  it('text search with no searchable terms asks Qdrant nothing', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    expect(await store.textSearch!({ text: 'the of and ?!', limit: 4 })).toEqual([]);
    expect(queryVector(':')).toBeUndefined();
    expect(fake.methods()).toEqual([]);
  });
});

describe('reads', () => {
  it('getMany keeps the order asked and skips unknown ids', async () => {
    const first = record({ id: 'first' });
    const second = record({ id: 'second' });
    const fake = scriptedClient({ retrieve: () => [point(first), point(second)] });
    const store = createQdrantStore({ client: fake.client });
    const found = await store.getMany(['second', 'missing', 'first']);
    expect(found.map((memory) => memory.id)).toEqual(['second', 'first']);
    expect(fake.bodies('retrieve')[0].ids).toEqual([memoryPointId('second'), memoryPointId('missing'), memoryPointId('first')]);
  });

  it('list by a timestamp is ordered by Qdrant, and ties at the page edge are completed and broken by id', async () => {
    const at = (day: number) => `2024-01-0${day}T00:00:00.000Z`;
    const a = record({ id: 'a', createdAt: at(1) });
    const c = record({ id: 'c', createdAt: at(2) });
    const b = record({ id: 'b', createdAt: at(2) });
    const fake = scriptedClient({
      scroll: (_collection: string, body: any) =>
        body.order_by ? { points: [point(a), point(c)], next_page_offset: null } : { points: [point(c), point(b)], next_page_offset: null },
    });
    const store = createQdrantStore({ client: fake.client });
    const listed = await store.list({ scope: { userId: 'alice' }, orderBy: 'createdAt', limit: 2 });
    expect(listed.map((memory) => memory.id)).toEqual(['a', 'b']);
    const [ordered, ties] = fake.bodies('scroll');
    expect(ordered.order_by).toEqual({ key: 'createdAtMs', direction: 'asc' });
    expect(ordered.limit).toBe(2);
    expect(ties.filter.must[1]).toEqual({ key: 'createdAtMs', range: { gte: Date.parse(at(2)), lte: Date.parse(at(2)) } });
  });

  it('list after a memory reads from past its timestamp, and its ties on their own: each page asks for its own size, not the pages before it', async () => {
    // Qdrant's scroll over these points: must conditions (match, range, nested filters) and order_by with its limit.
    const at = (day: number) => `2024-01-0${day}T00:00:00.000Z`;
    const memories = [
      ['e', 3],
      ['b', 1],
      ['g', 3],
      ['a', 5],
      ['f', 1],
      ['c', 2],
      ['d', 4],
    ].map(([id, day]) => record({ id: id as string, createdAt: at(day as number) }));
    const points = memories.map((memory) => point(memory));
    const holds = (payload: any, condition: any): boolean => {
      if (condition.must) return condition.must.every((inner: any) => holds(payload, inner));
      const value = payload[condition.key];
      if (condition.match) return value === condition.match.value;
      const { gt, gte, lt, lte } = condition.range;
      return (gt === undefined || value > gt) && (gte === undefined || value >= gte) && (lt === undefined || value < lt) && (lte === undefined || value <= lte);
    };
    const fake = scriptedClient({
      scroll: (_collection: string, body: any) => {
        const found = points.filter((candidate) => holds(candidate.payload, body.filter));
        if (body.order_by) {
          const sign = body.order_by.direction === 'desc' ? -1 : 1;
          found.sort((x: any, y: any) => sign * (x.payload[body.order_by.key] - y.payload[body.order_by.key]));
        }
        return { points: found.slice(0, body.limit), next_page_offset: null };
      },
    });
    const store = createQdrantStore({ client: fake.client });
    for (const direction of ['asc', 'desc'] as const) {
      const whole = (await store.list({ orderBy: 'createdAt', direction })).map((memory) => memory.id);
      const paged: string[] = [];
      let after: MemoryRecord | undefined;
      for (;;) {
        const page = await store.list({ orderBy: 'createdAt', direction, limit: 2, ...(after ? { after } : {}) });
        paged.push(...page.map((memory) => memory.id));
        if (page.length < 2) break;
        after = page[page.length - 1];
      }
      expect(paged, direction).toEqual(whole);
    }
    expect((await store.list({ orderBy: 'createdAt' })).map((memory) => memory.id)).toEqual(['b', 'f', 'c', 'e', 'g', 'd', 'a']);
    expect(fake.bodies('scroll').filter((body: any) => body.order_by).every((body: any) => body.limit === 2)).toBe(true);
    // After 'e' (day 3): 'g' ties with it and comes after it by id; the ordered read starts past day 3
    // (and completes the ties at its own edge, day 5).
    const before = fake.bodies('scroll').length;
    expect((await store.list({ orderBy: 'createdAt', limit: 2, after: memories[0]! })).map((memory) => memory.id)).toEqual(['g', 'd']);
    const [ordered, edge, ties] = fake.bodies('scroll').slice(before);
    expect(ordered.filter.must[1]).toEqual({ key: 'createdAtMs', range: { gt: Date.parse(at(3)) } });
    expect(edge.filter.must[0]).toEqual(ordered.filter);
    expect(edge.filter.must[1]).toEqual({ key: 'createdAtMs', range: { gte: Date.parse(at(5)), lte: Date.parse(at(5)) } });
    expect(ties.filter.must[1]).toEqual({ key: 'createdAtMs', range: { gte: Date.parse(at(3)), lte: Date.parse(at(3)) } });
    // By id, where Qdrant cannot order: the scope read and sorted here, then cut after the place.
    expect((await store.list({ orderBy: 'id', after: { id: 'c' }, limit: 3 })).map((memory) => memory.id)).toEqual(['d', 'e', 'f']);
    await expect(store.list({ orderBy: 'stored', after: memories[0]! })).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
  });

  it("list in the store's own order keeps Qdrant's scroll order (by point id), pages it and reverses it for desc", async () => {
    const z = record({ id: 'z' });
    const a = record({ id: 'a' });
    const m = record({ id: 'm' });
    const fake = scriptedClient({ scroll: () => ({ points: [point(z), point(a), point(m)], next_page_offset: null }) });
    const store = createQdrantStore({ client: fake.client });
    expect((await store.list({ orderBy: 'stored' })).map((memory) => memory.id)).toEqual(['z', 'a', 'm']);
    expect((await store.list({ orderBy: 'stored', limit: 2, offset: 1 })).map((memory) => memory.id)).toEqual(['a', 'm']);
    expect((await store.list({ orderBy: 'stored', direction: 'desc', limit: 2 })).map((memory) => memory.id)).toEqual(['m', 'a']);
    expect(fake.bodies('scroll').every((body: any) => body.order_by === undefined)).toBe(true);
  });

  it("listPage resumes Qdrant's scroll at the point it named next, a batch per request, even after that point was deleted", async () => {
    // Qdrant's scroll: points by id, from `offset` (inclusive) when given; next_page_offset is the next point's id.
    let points = ['a', 'b', 'c', 'd', 'e'].map((id) => point(record({ id }))).sort((x, y) => (x.id < y.id ? -1 : 1));
    const fake = scriptedClient({
      scroll: (_collection: string, body: any) => {
        const start = body.offset === undefined ? 0 : points.findIndex((candidate) => candidate.id >= body.offset);
        const from = start < 0 ? points.length : start;
        const page = points.slice(from, from + body.limit);
        return { points: page, next_page_offset: points[from + body.limit]?.id ?? null };
      },
    });
    const store = createQdrantStore({ client: fake.client, batchSize: 2 });
    const ids = (page: { memories: MemoryRecord[] }) => page.memories.map((memory) => memory.id);
    const order = points.map((candidate) => candidate.payload.id);

    const first = await store.listPage!({ scope: { userId: 'alice' }, limit: 3 });
    expect(ids(first)).toEqual(order.slice(0, 3));
    expect(first.next).toBe(points[3]?.id);
    expect(fake.bodies('scroll').map((body: any) => [body.limit, body.offset])).toEqual([
      [2, undefined],
      [1, points[2]?.id],
    ]);
    expect(fake.bodies('scroll')[0].filter).toEqual({ must: [KIND_MEMORY, { key: 'userId', match: { value: 'alice' } }] });

    // The point the cursor names is deleted: the next page starts at the one after it.
    points = points.filter((candidate) => candidate.id !== first.next);
    const second = await store.listPage!({ limit: 3, after: first.next as string });
    expect(ids(second)).toEqual(order.slice(4));
    expect(second.next).toBeUndefined();
    await expect(store.listPage!({ limit: 3, after: 'not-a-point-id' })).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
    await expect(store.listPage!({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('history follows the chain from the memory and ignores versions of writes that never landed', async () => {
    const v1 = record({ content: 'one' });
    const v2 = record({ content: 'two', revision: 2 });
    const lost = record({ content: 'lost race', revision: 2 });
    const fake = scriptedClient({
      retrieve: () => [point(v2, 'w2')],
      scroll: () => ({
        points: [
          { id: 'x', payload: { ...toVersionPayload(entry(lost, v1), 'w-lost', 'w1') } },
          { id: 'y', payload: { ...toVersionPayload(entry(v2, v1), 'w2', 'w1') } },
          { id: 'z', payload: { ...toVersionPayload(entry(v1, null), 'w1', null) } },
        ],
        next_page_offset: null,
      }),
    });
    const store = createQdrantStore({ client: fake.client });
    const versions = await store.history('m1');
    expect(versions.map((version) => version.after.content)).toEqual(['one', 'two']);
    expect(fake.bodies('scroll')[0].filter).toEqual({ must: [{ key: 'kind', match: { value: 'version' } }, { key: 'memoryId', match: { value: 'm1' } }] });
  });

  it('history asks the majority before calling a chain broken, and reports STORE_CORRUPT if it still is', async () => {
    const v1 = record({ content: 'one' });
    const v2 = record({ content: 'two', revision: 2 });
    const first = { id: 'z', payload: { ...toVersionPayload(entry(v1, null), 'w1', null) } };
    const second = { id: 'y', payload: { ...toVersionPayload(entry(v2, v1), 'w2', 'w1') } };
    let lagging = true;
    const fake = scriptedClient({
      retrieve: () => [point(v2, 'w2')],
      scroll: (_collection: string, body: any) => ({ points: body.consistency === 'majority' && !lagging ? [first, second] : [first], next_page_offset: null }),
    });
    const store = createQdrantStore({ client: fake.client });
    await expect(store.history('m1')).rejects.toMatchObject({ code: 'STORE_CORRUPT', details: { id: 'm1', writeId: 'w2' } });
    lagging = false;
    expect((await store.history('m1')).map((version) => version.version)).toEqual([1, 2]);
    expect(fake.bodies('scroll').map((body) => body.consistency)).toEqual([undefined, 'majority', undefined, 'majority']);
  });

  it('historyMany reads the heads in one request and the versions of a batch of memories in one scroll, and reads a broken chain again alone', async () => {
    const version = (after: MemoryRecord, before: MemoryRecord | null, writeId: string, parent: string | null) => ({
      id: `${after.id}-${writeId}`,
      payload: { ...toVersionPayload({ ...entry(after, before), memoryId: after.id }, writeId, parent) },
    });
    const a1 = record({ id: 'a', content: 'a one' });
    const a2 = record({ id: 'a', content: 'a two', revision: 2 });
    const b1 = record({ id: 'b', content: 'b one' });
    const lost = record({ id: 'b', content: 'b lost race', revision: 2 });
    const c1 = record({ id: 'c', content: 'c one' });
    const c2 = record({ id: 'c', content: 'c two', revision: 2 });
    const heads = [point(a2, 'wa2'), point(b1, 'wb1'), point(c2, 'wc2')];
    const versions = [version(a1, null, 'wa1', null), version(a2, a1, 'wa2', 'wa1'), version(b1, null, 'wb1', null), version(lost, b1, 'wb-lost', 'wb1'), version(c1, null, 'wc1', null)];
    // c's newest version is on the majority only: a replica behind.
    const majority = [...versions, version(c2, c1, 'wc2', 'wc1')];
    const fake = scriptedClient({
      retrieve: (_collection: string, body: any) => heads.filter((head) => body.ids.includes(head.id)),
      scroll: (_collection: string, body: any) => {
        const condition = body.filter.must[1].match;
        const wanted: string[] = condition.any ?? [condition.value];
        const from = body.consistency === 'majority' ? majority : versions;
        return { points: from.filter((candidate) => wanted.includes(candidate.payload.memoryId)), next_page_offset: null };
      },
    });
    const store = createQdrantStore({ client: fake.client });
    const histories = await store.historyMany!(['c', 'nope', 'a', 'b']);
    expect(histories.map((history) => history.map((entry) => entry.after.content))).toEqual([['c one', 'c two'], [], ['a one', 'a two'], ['b one']]);
    expect(histories).toEqual([await store.history('c'), [], await store.history('a'), await store.history('b')]);
    const [headRead] = fake.bodies('retrieve');
    expect(headRead.ids).toHaveLength(4);
    expect(headRead.with_payload).toEqual(['id', 'writeId']);
    const [batch, alone, deciding] = fake.bodies('scroll');
    expect(batch.filter.must[1].key).toBe('memoryId');
    expect([...batch.filter.must[1].match.any].sort()).toEqual(['a', 'b', 'c']);
    expect(alone.filter.must[1]).toEqual({ key: 'memoryId', match: { value: 'c' } });
    expect(deciding.consistency).toBe('majority');
  });

  it('getVectors reads the vectors of many memories in one request, in the order asked', async () => {
    const withVector = (id: string, dense: number[]) => ({ ...point(record({ id })), vector: { dense } });
    const fake = scriptedClient({ retrieve: () => [withVector('b', [0, 1]), withVector('a', [1, 0])] });
    const store = createQdrantStore({ client: fake.client });
    expect(await store.getVectors!(['a', 'nope', 'b'])).toEqual([[1, 0], undefined, [0, 1]]);
    expect(fake.bodies('retrieve')).toHaveLength(1);
    expect(fake.bodies('retrieve')[0]).toMatchObject({ with_payload: false, with_vector: ['dense'] });
    expect(await store.getVectors!([])).toEqual([]);
  });

  it('history of an unknown memory is empty without reading versions', async () => {
    const fake = scriptedClient();
    expect(await createQdrantStore({ client: fake.client }).history('nope')).toEqual([]);
    expect(fake.methods()).toEqual(['retrieve']);
  });

  it('touch sets lastAccessedAt through a filter, so unknown ids are skipped', async () => {
    const fake = scriptedClient();
    await createQdrantStore({ client: fake.client }).touch(['m1', 'm1', 'missing'], '2025-05-05T05:05:05.000Z');
    expect(fake.bodies('setPayload')).toEqual([
      {
        wait: true,
        ordering: 'strong',
        payload: { lastAccessedAt: '2025-05-05T05:05:05.000Z' },
        filter: { must: [{ has_id: [memoryPointId('m1'), memoryPointId('missing')] }, KIND_MEMORY] },
      },
    ]);
  });

  it('touch with a key that may not write (HTTP 403) records nothing and resolves false, as SQLite does for a file it may not write; other failures still fail', async () => {
    const at = '2025-05-05T05:05:05.000Z';
    const readOnly = scriptedClient({
      setPayload: () => {
        throw httpError(403, 'Forbidden: Write operations are forbidden');
      },
    });
    expect(await createQdrantStore({ client: readOnly.client }).touch(['m1'], at)).toBe(false);
    expect(await createQdrantStore({ client: scriptedClient().client }).touch(['m1'], at)).toBeUndefined();
    const failing = scriptedClient({
      setPayload: () => {
        throw httpError(400, 'Bad request: no');
      },
    });
    await expect(createQdrantStore({ client: failing.client }).touch(['m1'], at)).rejects.toMatchObject({ code: 'STORE_ERROR', details: { operation: 'touch memories', status: 400 } });
  });

  it('deleteByScope deletes page by page: memories by id, then the version points of their chains by id', async () => {
    let pages = 2;
    const link = (memoryId: string, writeId: string, parentWriteId: string | null) => ({ id: `v-${writeId}`, payload: { kind: 'version', memoryId, writeId, parentWriteId } });
    const fake = scriptedClient({
      scroll: (_collection: string, body: any) => {
        if (body.filter.must[0].match.value === 'version') {
          const ids: string[] = body.filter.must[1].match.any;
          // Each memory's chain, plus a chain another writer started under the same id (not to be deleted).
          const versions = ids.flatMap((id) => [link(id, `${id}-a`, null), link(id, `${id}-b`, `${id}-a`), link(id, `${id}-theirs`, null)]);
          return { points: versions, next_page_offset: null };
        }
        return pages-- > 0
          ? { points: [{ id: memoryPointId(`m${pages}`), payload: { id: `m${pages}`, writeId: `m${pages}-b` } }], next_page_offset: null }
          : { points: [], next_page_offset: null };
      },
    });
    const deleted = await createQdrantStore({ client: fake.client, batchSize: 1 }).deleteByScope({ userId: 'alice' });
    expect(deleted).toBe(2);
    const scrolls = fake.bodies('scroll');
    expect(scrolls[0].filter).toEqual({ must: [KIND_MEMORY, { key: 'userId', match: { value: 'alice' } }] });
    expect(scrolls[0].with_payload).toEqual(['id', 'writeId']);
    expect(scrolls[1]).toMatchObject({
      filter: { must: [{ key: 'kind', match: { value: 'version' } }, { key: 'memoryId', match: { any: ['m1'] } }] },
      with_payload: ['memoryId', 'writeId', 'parentWriteId'],
      consistency: 'majority',
    });
    const deletes = fake.bodies('delete');
    expect(deletes.map((body) => body.points)).toEqual([[memoryPointId('m1')], ['v-m1-a'], ['v-m1-b'], [memoryPointId('m0')], ['v-m0-a'], ['v-m0-b']]);
    expect(deletes.every((body) => body.filter === undefined)).toBe(true);
  });

  it('refuses a scope or filter of the wrong shape, and a deleteByScope that names no scope, before any request', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    const vector = new Array(8).fill(0.1);
    for (const scope of ['alice', { user: 'alice' }, { userId: ['alice'] }]) {
      await expect(store.list({ scope } as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE', backend: 'qdrant' });
      await expect(store.count({ scope } as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
      await expect(store.listPage!({ limit: 2, scope } as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
      await expect(store.vectorSearch({ vector, limit: 2, scope } as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
      await expect(store.textSearch!({ text: 'espresso', limit: 2, scope } as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
      await expect(store.deleteByScope(scope as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
    }
    for (const filter of [{ tags: 'drink' }, { category: 'facts' }, { metadata: { topic: { a: 1 } } }]) {
      await expect(store.list({ filter } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
      await expect(store.vectorSearch({ vector, limit: 2, filter } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    for (const scope of [{}, { userId: undefined }, undefined]) await expect(store.deleteByScope(scope as never)).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
    for (const bad of [[Number.NaN, 0, 0, 0, 0, 0, 0, 0], new Array(8).fill(0)]) {
      await expect(store.vectorSearch({ vector: bad, limit: 2 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(fake.methods()).toEqual([]);
  });

  it('deleteByScope finds the memories to delete with the configured readConsistency (their versions with majority)', async () => {
    let pages = 1;
    const fake = scriptedClient({
      scroll: (_collection: string, body: any) =>
        body.filter.must[0].match.value === 'memory' && pages-- > 0
          ? { points: [{ id: memoryPointId('m1'), payload: { id: 'm1', writeId: 'w1' } }], next_page_offset: null }
          : { points: [], next_page_offset: null },
    });
    expect(await createQdrantStore({ client: fake.client, readConsistency: 'quorum' }).deleteByScope({ userId: 'alice' })).toBe(1);
    const scrolls = fake.bodies('scroll');
    const memoryScrolls = scrolls.filter((body) => body.filter.must[0].match.value === 'memory');
    expect(memoryScrolls).toHaveLength(2);
    for (const body of memoryScrolls) expect(body.consistency).toBe('quorum');
    expect(scrolls.filter((body) => body.filter.must[0].match.value === 'version').map((body) => body.consistency)).toEqual(['majority']);
  });

  it('reads a memory\'s context back exactly, and a memory without one without the key', async () => {
    const said = record({ id: 'said', context: 'Asked: 你平时喝什么？\n"quotes" and ---\nlines # like: markup' });
    const plain = record({ id: 'plain' });
    const fake = scriptedClient({ retrieve: () => [point(said), point(plain)] });
    const [first, second] = await createQdrantStore({ client: fake.client }).getMany(['said', 'plain']);
    expect(first).toEqual(said);
    expect(second).toEqual(plain);
    expect(second).not.toHaveProperty('context');
  });

  it('a null context in the payload reads as no context; any other non-string is STORE_CORRUPT', async () => {
    const payloadWith = (context: unknown) => ({ ...point(record()), payload: { ...point(record()).payload, context } });
    let stored = payloadWith(null);
    const fake = scriptedClient({ retrieve: () => [stored] });
    const store = createQdrantStore({ client: fake.client });
    expect(await store.get('m1')).not.toHaveProperty('context');
    stored = payloadWith(42);
    await expect(store.get('m1')).rejects.toMatchObject({ code: 'STORE_CORRUPT', backend: 'qdrant', details: { id: 'm1' } });
  });

  it('history keeps each version\'s context', async () => {
    const v1 = record({ content: 'one', context: 'the first question' });
    const { context: _context, ...v2 } = { ...v1, content: 'two', revision: 2 };
    const fake = scriptedClient({
      retrieve: () => [point(v2, 'w2')],
      scroll: () => ({
        points: [
          { id: 'y', payload: { ...toVersionPayload(entry(v2, v1), 'w2', 'w1') } },
          { id: 'z', payload: { ...toVersionPayload(entry(v1, null), 'w1', null) } },
        ],
        next_page_offset: null,
      }),
    });
    const versions = await createQdrantStore({ client: fake.client }).history('m1');
    expect(versions.map((version) => version.after.context)).toEqual(['the first question', undefined]);
    expect(versions[1]?.before?.context).toBe('the first question');
    expect(versions[1]?.after).not.toHaveProperty('context');
  });

  it('refuses calls after close', async () => {
    const fake = scriptedClient();
    const store = createQdrantStore({ client: fake.client });
    await store.close();
    await expect(store.get('x')).rejects.toMatchObject({ code: 'CLOSED' });
    expect(fake.methods()).toEqual([]);
  });
});
