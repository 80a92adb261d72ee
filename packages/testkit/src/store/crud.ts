import { describe, expect, it } from 'vitest';
import type { MemoryRecord, MemoryStore, PageQuery } from '@memloom/core';
import { axis, create, DIMENSION, openStore, record, rejectsWithCode, replace, type StoreContext } from './fixtures.js';

export function crudCases(context: StoreContext & { replace(store: import('@memloom/core').MemoryStore): void }): void {
  const { options } = context;

  describe('crud', () => {
    it('declares the capabilities the suite was told', () => {
      expect(context.store.capabilities).toEqual(options.capabilities);
      expect(typeof context.store.name).toBe('string');
    });

    it('round-trips every field of a record exactly', async () => {
      const memory = record({
        content: '我喜欢喝咖啡 ☕ and "quotes", \'apostrophes\', back\\slash, new\nline',
        level: 'summary',
        weight: 0.123456,
        baseWeight: 0.5,
        importance: 2.75,
        baseImportance: 3,
        category: 'episode',
        type: 'project',
        scope: { userId: 'alice', agentId: 'agent-1', sessionId: 'session-9' },
        source: 'background_ai',
        verified: false,
        sources: ['D1:3', 'D2:7'],
        tags: ['coffee', '饮料'],
        metadata: { nested: { list: [1, 'two', null], flag: true }, count: 3 },
        context: 'Asked: 你平时喝什么？\n"quotes" and ---\nlines # like: markup',
      });
      const plain = record({ content: 'no context' });
      await context.store.apply([create(memory, axis(0)), create(plain, axis(1))]);
      expect(await context.store.get(memory.id)).toEqual(memory);
      // A record without a context reads back without the key (not null, not an empty string).
      expect(await context.store.get(plain.id)).not.toHaveProperty('context');
      expect((await context.store.list({})).find((entry) => entry.id === plain.id)).not.toHaveProperty('context');
      const vector = await context.store.getVector(memory.id);
      expect(vector).toHaveLength(DIMENSION);
      expect(vector?.[0]).toBeCloseTo(1, 5);
    });

    it('gives back a -0 in a record (its numbers, its metadata, its history) as 0, as JSON keeps it, before and after a reopen', async () => {
      const negative = { weight: -0, baseWeight: -0, importance: -0, baseImportance: -0, metadata: { zero: -0, list: [-0, 1] } };
      const memory = record({ content: 'weighs nothing at all', ...negative });
      const expected = { ...memory, weight: 0, baseWeight: 0, importance: 0, baseImportance: 0, metadata: { zero: 0, list: [0, 1] } };
      await context.store.apply([create(memory, axis(0))]);
      const reads = async (store: MemoryStore) => [
        await store.get(memory.id),
        (await store.getMany([memory.id]))[0],
        (await store.list({}))[0],
        (await store.vectorSearch({ vector: axis(0), limit: 1 }))[0]?.memory,
        (await store.history(memory.id))[0]?.after,
      ];
      // toEqual tells -0 from 0 (Object.is).
      expect(await reads(context.store)).toEqual([expected, expected, expected, expected, expected]);
      if (!options.reopen) return;
      const reopened = await options.reopen(context.store);
      context.replace(reopened);
      await openStore(reopened);
      expect(await reads(reopened)).toEqual([expected, expected, expected, expected, expected]);
    });

    it('hands out copies: changing a record it gave back, or the one it was given, changes nothing stored', async () => {
      const given = record({ content: 'kept as written', tags: ['a'], metadata: { nested: { n: 1 } }, scope: { userId: 'alice' } });
      const expected = structuredClone(given);
      await context.store.apply([create(given, axis(0))]);
      given.tags.push('changed by the caller');
      (given.metadata.nested as { n: number }).n = 2;
      const reads = [await context.store.get(given.id), (await context.store.getMany([given.id]))[0], (await context.store.list({}))[0]];
      for (const read of reads) {
        expect(read).toEqual(expected);
        const copy = read as MemoryRecord;
        copy.content = 'changed after reading';
        copy.tags.push('changed after reading');
        (copy.metadata.nested as { n: number }).n = 3;
        copy.scope.userId = 'mallory';
      }
      expect(await context.store.get(given.id)).toEqual(expected);
      expect(await context.store.count({ scope: { userId: 'alice' } })).toBe(1);
    });

    it('returns undefined for an unknown id and skips it in getMany, keeping the order asked', async () => {
      const first = record();
      const second = record();
      await context.store.apply([create(first, axis(0)), create(second, axis(1))]);
      expect(await context.store.get('no-such-id')).toBeUndefined();
      const many = await context.store.getMany([second.id, 'no-such-id', first.id]);
      expect(many.map((memory) => memory.id)).toEqual([second.id, first.id]);
    });

    it('replaces a memory and keeps its vector when none is given', async () => {
      const memory = record({ content: 'original text' });
      await context.store.apply([create(memory, axis(2))]);
      await context.store.apply([replace(memory, { content: 'edited text', weight: 0.5 })]);
      const stored = await context.store.get(memory.id);
      expect(stored?.content).toBe('edited text');
      expect(stored?.weight).toBe(0.5);
      expect(stored?.revision).toBe(2);
      const vector = await context.store.getVector(memory.id);
      expect(vector?.[2]).toBeCloseTo(1, 5);
    });

    it('replaces the vector when a new one is given', async () => {
      const memory = record();
      await context.store.apply([create(memory, axis(2))]);
      await context.store.apply([replace(memory, { content: 'moved' }, axis(5))]);
      const hits = await context.store.vectorSearch({ vector: axis(5), limit: 1 });
      expect(hits[0]?.memory.id).toBe(memory.id);
      expect(hits[0]?.score).toBeCloseTo(1, 5);
    });

    it('applies successive changes to one memory within one call, in order', async () => {
      const memory = record({ content: 'first words' });
      const second = { ...memory, content: 'second words', revision: 2 };
      await context.store.apply([create(memory, axis(1)), replace(memory, { content: 'second words' }), replace(second, { content: 'third words' })]);
      const stored = await context.store.get(memory.id);
      expect(stored?.content).toBe('third words');
      expect(stored?.revision).toBe(3);
      expect((await context.store.history(memory.id)).map((entry) => entry.after.content)).toEqual(['first words', 'second words', 'third words']);
      if (options.capabilities.textSearch) {
        expect((await context.store.textSearch!({ text: 'third', limit: 5 })).map((hit) => hit.memory.id)).toEqual([memory.id]);
        expect(await context.store.textSearch!({ text: 'first', limit: 5 })).toEqual([]);
      }
      const deleted = record({ content: 'short lived' });
      await context.store.apply([create(deleted, axis(2)), { op: 'delete', id: deleted.id }]);
      expect(await context.store.get(deleted.id)).toBeUndefined();
      expect(await context.store.history(deleted.id)).toEqual([]);
    });

    it('lists in the order asked, with limit and offset, and counts', async () => {
      const memories = [0, 1, 2, 3].map((index) =>
        record({
          id: `list-${index}`,
          createdAt: `2024-01-0${index + 1}T00:00:00.000Z`,
          updatedAt: `2024-02-0${4 - index}T00:00:00.000Z`,
        }),
      );
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const ids = (list: { id: string }[]) => list.map((memory) => memory.id);
      expect(ids(await context.store.list({}))).toEqual(['list-0', 'list-1', 'list-2', 'list-3']);
      expect(ids(await context.store.list({ direction: 'desc' }))).toEqual(['list-3', 'list-2', 'list-1', 'list-0']);
      expect(ids(await context.store.list({ orderBy: 'updatedAt' }))).toEqual(['list-3', 'list-2', 'list-1', 'list-0']);
      expect(ids(await context.store.list({ orderBy: 'id', limit: 2, offset: 1 }))).toEqual(['list-1', 'list-2']);
      expect(await context.store.count({})).toBe(4);
    });

    it("lists in the store's own order: pages by offset cover every memory once, the same on every read", async () => {
      const memories = ['s-c', 's-a', 's-f', 's-b', 's-g', 's-e', 's-d'].map((id, index) =>
        record({ id, content: `stored order ${id}`, createdAt: `2024-03-0${7 - index}T00:00:00.000Z`, scope: { userId: index % 2 ? 'odd' : 'even' } }),
      );
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const ids = (list: { id: string }[]) => list.map((memory) => memory.id);
      const paged = async (query: { scope?: { userId: string }; direction?: 'asc' | 'desc' }) => {
        const pages: string[] = [];
        for (let offset = 0; ; offset += 3) {
          const page = ids(await context.store.list({ ...query, orderBy: 'stored', limit: 3, offset }));
          pages.push(...page);
          if (page.length < 3) return pages;
        }
      };
      const whole = ids(await context.store.list({ orderBy: 'stored' }));
      expect([...whole].sort()).toEqual(memories.map((memory) => memory.id).sort());
      expect(await paged({})).toEqual(whole);
      expect(await paged({})).toEqual(whole);
      expect(await paged({ direction: 'desc' })).toEqual([...whole].reverse());
      const odd = await paged({ scope: { userId: 'odd' } });
      expect(odd).toEqual(whole.filter((id) => memories.find((memory) => memory.id === id)?.scope.userId === 'odd'));
    });

    it("keeps the store's own order through writes: an update keeps a memory's place, a delete takes out only that memory", async () => {
      const memories = ['w-c', 'w-a', 'w-d', 'w-b', 'w-e'].map((id, index) => record({ id, content: `written order ${id}`, createdAt: `2024-03-0${5 - index}T00:00:00.000Z` }));
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const ids = async () => (await context.store.list({ orderBy: 'stored' })).map((memory) => memory.id);
      const before = await ids();
      const [first, second, third] = before;
      const updated = (await context.store.get(second as string)) as MemoryRecord;
      const moved = (await context.store.get(third as string)) as MemoryRecord;
      await context.store.apply([
        replace(updated, { content: 'rewritten, new vector', updatedAt: '2024-04-01T00:00:00.000Z' }, axis(7)),
        replace(moved, { scope: { userId: 'someone-else' }, updatedAt: '2024-04-01T00:00:00.000Z' }),
        { op: 'delete', id: first as string },
      ]);
      // A pass over everything pages by offset and writes each page back before reading the next.
      expect(await ids()).toEqual(before.slice(1));
    });

    /** Every memory `listPage` gives for `query`, by pages of 3, checking that only the last page lacks a next. */
    const pagedByCursor = async (query: Omit<PageQuery, 'limit'>) => {
      const listPage = (context.store.listPage as NonNullable<MemoryStore['listPage']>).bind(context.store);
      const ids: string[] = [];
      let after = query.after;
      for (let pages = 0; pages < 20; pages++) {
        const page = await listPage({ ...query, limit: 3, ...(after === undefined ? {} : { after }) });
        ids.push(...page.memories.map((memory) => memory.id));
        if (page.next === undefined) return ids;
        expect(page.memories).toHaveLength(3);
        after = page.next;
      }
      throw new Error('listPage gave a next on 20 pages of 3 for fewer than 10 memories');
    };

    it.skipIf(!options.capabilities.listPage)("listPage gives the store's own order a page at a time, in scope and filter, with no next after the last", async () => {
      expect(typeof context.store.listPage).toBe('function');
      const memories = ['q-c', 'q-a', 'q-f', 'q-b', 'q-g', 'q-e', 'q-d'].map((id, index) =>
        record({ id, content: `paged ${id}`, scope: { userId: index % 2 ? 'odd' : 'even' }, tags: index < 4 ? ['early'] : [] }),
      );
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const whole = (await context.store.list({ orderBy: 'stored' })).map((memory) => memory.id);
      const of = (id: string) => memories.find((memory) => memory.id === id) as MemoryRecord;
      expect(await pagedByCursor({})).toEqual(whole);
      expect(await pagedByCursor({ scope: { userId: 'odd' } })).toEqual(whole.filter((id) => of(id).scope.userId === 'odd'));
      expect(await pagedByCursor({ filter: { tags: ['early'] } })).toEqual(whole.filter((id) => of(id).tags.includes('early')));
      const one = await context.store.listPage!({ limit: 100 });
      expect(one.memories.map((memory) => memory.id)).toEqual(whole);
      expect(one.next).toBeUndefined();
      expect(one.memories.find((memory) => memory.id === 'q-f')).toEqual(of('q-f'));
    });

    it.skipIf(!options.capabilities.listPage)('listPage honours exactScope: fields the scope leaves out must be absent', async () => {
      const scopes = [
        { userId: 'alice' },
        { userId: 'alice', sessionId: 's1' },
        { userId: 'alice', agentId: 'helper' },
        { userId: 'alice', agentId: 'helper', sessionId: 's1' },
        { userId: 'bob' },
        { userId: 'alice' },
        { userId: 'alice', sessionId: 's1' },
      ];
      const memories = scopes.map((scope, index) => record({ id: `x-${index}`, content: `exact ${index}`, scope }));
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const whole = (await context.store.list({ orderBy: 'stored' })).map((memory) => memory.id);
      const exactly = (scope: Record<string, string>) =>
        whole.filter((id) => JSON.stringify(memories.find((memory) => memory.id === id)?.scope) === JSON.stringify(scope));
      expect(await pagedByCursor({ scope: { userId: 'alice' }, exactScope: true })).toEqual(exactly({ userId: 'alice' }));
      expect(await pagedByCursor({ scope: { userId: 'alice', sessionId: 's1' }, exactScope: true })).toEqual(exactly({ userId: 'alice', sessionId: 's1' }));
      expect(await pagedByCursor({ scope: { userId: 'alice', agentId: 'helper' }, exactScope: true })).toEqual(exactly({ userId: 'alice', agentId: 'helper' }));
      expect(await pagedByCursor({ scope: { userId: 'alice', agentId: 'helper', sessionId: 's1' }, exactScope: true })).toEqual(['x-3']);
      // Without exactScope the same scopes take in the narrower ones too.
      expect((await pagedByCursor({ scope: { userId: 'alice' } })).sort()).toEqual(['x-0', 'x-1', 'x-2', 'x-3', 'x-5', 'x-6']);
      expect((await context.store.listPage!({ scope: { userId: 'alice' }, exactScope: true, limit: 100 })).memories.map((memory) => memory.id)).toEqual(
        exactly({ userId: 'alice' }),
      );
    });

    it.skipIf(!options.capabilities.listPage)("listPage's next keeps its place when memories before and around it are updated or deleted", async () => {
      const memories = ['r-c', 'r-a', 'r-f', 'r-b', 'r-g', 'r-e', 'r-d'].map((id, index) => record({ id, content: `resumed ${id}` }));
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const whole = (await context.store.list({ orderBy: 'stored' })).map((memory) => memory.id);
      const first = await context.store.listPage!({ limit: 3 });
      expect(first.memories.map((memory) => memory.id)).toEqual(whole.slice(0, 3));
      expect(first.next).toBeDefined();
      // Meanwhile: the page's first memory and its last are deleted, its middle one rewritten, and the one after it deleted.
      const middle = (await context.store.get(whole[1] as string)) as MemoryRecord;
      await context.store.apply([
        { op: 'delete', id: whole[0] as string },
        replace(middle, { content: 'rewritten while paging', updatedAt: '2024-04-01T00:00:00.000Z' }, axis(9)),
        { op: 'delete', id: whole[2] as string },
        { op: 'delete', id: whole[3] as string },
      ]);
      expect(await pagedByCursor({ after: first.next as string })).toEqual(whole.slice(4));
    });

    it.skipIf(!options.capabilities.listAfter)('list after a memory gives the rest of each order, a page at a time, ties broken by id, in scope and filter', async () => {
      // Two pairs share a createdAt, one pair an updatedAt: a page edge falls between memories that tie.
      const at = (day: number) => `2024-05-0${day}T08:00:00.000Z`;
      const memories = [
        ['a-e', 3, 4],
        ['a-b', 1, 9],
        ['a-g', 3, 2],
        ['a-a', 5, 2],
        ['a-f', 1, 7],
        ['a-c', 2, 6],
        ['a-d', 4, 5],
      ].map(([id, created, updated], index) =>
        record({ id: id as string, content: `ordered ${id}`, createdAt: at(created as number), updatedAt: at(updated as number), scope: { userId: index % 2 ? 'odd' : 'even' } }),
      );
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const ids = (list: { id: string }[]) => list.map((memory) => memory.id);
      type Query = Omit<import('@memloom/core').ListQuery, 'after' | 'limit' | 'offset'>;
      const pagedByPlace = async (query: Query) => {
        const pages: string[] = [];
        let after: MemoryRecord | undefined;
        for (let page = 0; page < 10; page++) {
          const memories = await context.store.list({ ...query, limit: 2, ...(after ? { after } : {}) });
          pages.push(...ids(memories));
          if (memories.length < 2) return pages;
          after = memories[memories.length - 1];
        }
        throw new Error('list with after gave 10 full pages of 2 for 7 memories');
      };
      for (const orderBy of ['createdAt', 'updatedAt', 'id'] as const) {
        for (const direction of ['asc', 'desc'] as const) {
          expect(await pagedByPlace({ orderBy, direction }), `${orderBy} ${direction}`).toEqual(ids(await context.store.list({ orderBy, direction })));
        }
      }
      expect(await pagedByPlace({ scope: { userId: 'odd' } })).toEqual(['a-b', 'a-c', 'a-a']);
      expect(await pagedByPlace({ filter: { tags: ['none'] } })).toEqual([]);
      // A place given by its values alone, with an offset counted from it.
      expect(ids(await context.store.list({ after: { id: 'a-e', createdAt: at(3) }, offset: 1, limit: 2 }))).toEqual(['a-d', 'a-a']);
    });

    it.skipIf(!options.capabilities.listAfter)('list after a memory keeps its place when that memory, and those before it, are deleted or changed', async () => {
      const memories = ['b-a', 'b-b', 'b-c', 'b-d', 'b-e'].map((id, index) => record({ id, content: `placed ${id}`, createdAt: `2024-06-0${index + 1}T00:00:00.000Z` }));
      await context.store.apply(memories.map((memory, index) => create(memory, axis(index))));
      const first = await context.store.list({ limit: 2 });
      expect(first.map((memory) => memory.id)).toEqual(['b-a', 'b-b']);
      const rewritten = (await context.store.get('b-c')) as MemoryRecord;
      await context.store.apply([
        { op: 'delete', id: 'b-a' },
        { op: 'delete', id: 'b-b' },
        replace(rewritten, { content: 'rewritten while listing', updatedAt: '2024-07-01T00:00:00.000Z' }, axis(7)),
      ]);
      const next = await context.store.list({ limit: 2, after: first[1] as MemoryRecord });
      expect(next.map((memory) => memory.id)).toEqual(['b-c', 'b-d']);
      expect(next[0]?.content).toBe('rewritten while listing');
    });

    it('deletes a memory from every index it lives in: nothing findable afterwards', async () => {
      const doomed = record({ content: 'zanzibar xylophone secret', tags: ['gone'] });
      const kept = record({ content: 'an ordinary note' });
      await context.store.apply([create(doomed, axis(3)), create(kept, axis(4))]);
      await context.store.apply([{ op: 'delete', id: doomed.id }]);

      expect(await context.store.get(doomed.id)).toBeUndefined();
      expect(await context.store.getMany([doomed.id])).toEqual([]);
      expect(await context.store.getVector(doomed.id)).toBeUndefined();
      expect(await context.store.history(doomed.id)).toEqual([]);
      expect((await context.store.list({})).map((memory) => memory.id)).toEqual([kept.id]);
      const vectorHits = await context.store.vectorSearch({ vector: axis(3), limit: 10 });
      expect(vectorHits.map((hit) => hit.memory.id)).not.toContain(doomed.id);
      if (options.capabilities.textSearch) {
        const textHits = await context.store.textSearch!({ text: 'zanzibar xylophone', limit: 10 });
        expect(textHits).toEqual([]);
      }
      expect(await context.store.count({ filter: { tags: ['gone'] } })).toBe(0);
    });

    it('treats deleting an unknown id as done', async () => {
      await context.store.apply([{ op: 'delete', id: 'never-existed' }]);
      expect(await context.store.count({})).toBe(0);
    });

    it('records a read with touch without making a version', async () => {
      const memory = record();
      await context.store.apply([create(memory, axis(0))]);
      await context.store.touch([memory.id, 'missing'], '2025-05-05T05:05:05.000Z');
      const stored = await context.store.get(memory.id);
      expect(stored?.lastAccessedAt).toBe('2025-05-05T05:05:05.000Z');
      expect(stored?.revision).toBe(1);
      expect(await context.store.history(memory.id)).toHaveLength(1);
    });

    it('changes only lastAccessedAt with touch: the rest of the record, its history and its vector stay as they were', async () => {
      const memory = record({ content: 'read now and then', tags: ['t'], metadata: { k: 'v' }, context: 'said once', scope: { userId: 'alice', sessionId: 's1' } });
      const other = record({ content: 'not touched' });
      await context.store.apply([create(memory, axis(0)), create(other, axis(1))]);
      await context.store.apply([replace(memory, { content: 'read now and then, edited', updatedAt: '2024-03-03T03:03:03.000Z' })]);
      const edited = { ...memory, content: 'read now and then, edited', updatedAt: '2024-03-03T03:03:03.000Z', revision: 2 };
      const history = await context.store.history(memory.id);
      const vector = await context.store.getVector(memory.id);
      const at = '2030-01-02T03:04:05.000Z';
      await context.store.touch([memory.id, 'missing'], at);
      const touched = { ...edited, lastAccessedAt: at };
      expect(await context.store.get(memory.id)).toEqual(touched);
      expect(await context.store.getMany([memory.id])).toEqual([touched]);
      expect((await context.store.list({})).find((entry) => entry.id === memory.id)).toEqual(touched);
      expect((await context.store.vectorSearch({ vector: axis(0), limit: 1 }))[0]?.memory).toEqual(touched);
      expect(await context.store.history(memory.id)).toEqual(history);
      expect(await context.store.getVector(memory.id)).toEqual(vector);
      expect(await context.store.get(other.id)).toEqual(other);
      // A put based on the revision read before the touch is not a conflict: touch made no version.
      await context.store.apply([replace(edited, { content: 'edited after the touch' })]);
      expect((await context.store.get(memory.id))?.revision).toBe(3);
    });

    it('gives a memory deleted and put again under its id the lastAccessedAt of the new put, not one touched before the delete, also after a reopen', async () => {
      const memory = record({ lastAccessedAt: '2024-03-02T00:00:00.000Z' });
      await context.store.apply([create(memory, axis(0))]);
      await context.store.touch([memory.id], '2025-01-01T00:00:00.000Z');
      await context.store.apply([{ op: 'delete', id: memory.id }]);
      // Put again at revision 1, as an import of an export or a restore does: the revision the touch was for.
      await context.store.apply([create(memory, axis(0))]);
      expect(await context.store.get(memory.id)).toEqual(memory);
      if (!options.reopen) return;
      const reopened = await options.reopen(context.store);
      context.replace(reopened);
      await openStore(reopened);
      expect(await reopened.get(memory.id)).toEqual(memory);
    });

    it.runIf(options.capabilities.persistent)('is given reopen by its test, since it declares persistent', () => {
      expect(options.reopen, 'a store that declares `persistent` must pass `reopen` to testMemoryStore, so that the reopen cases run').toBeTypeOf('function');
    });

    it('refuses calls after close with CLOSED', async () => {
      await context.store.close();
      await rejectsWithCode(context.store.get('x'), 'CLOSED');
    });

    it.skipIf(!options.reopen)('finds everything again after closing and reopening', async () => {
      const memory = record({ content: 'persisted across a reopen', tags: ['kept'] });
      await context.store.apply([create(memory, axis(6))]);
      await context.store.apply([replace(memory, { content: 'persisted across a reopen, edited' })]);
      const reopened = await options.reopen!(context.store);
      context.replace(reopened);
      await openStore(reopened);
      expect((await reopened.get(memory.id))?.content).toBe('persisted across a reopen, edited');
      expect(await reopened.history(memory.id)).toHaveLength(2);
      expect((await reopened.vectorSearch({ vector: axis(6), limit: 1 }))[0]?.memory.id).toBe(memory.id);
    });

    it.skipIf(!options.reopen)('gives back every field of every record after a reopen: tags, metadata, context, a touched lastAccessedAt', async () => {
      const full = record({
        content: 'kept whole across a reopen: 咖啡 ☕ "quoted"',
        level: 'summary',
        weight: 0.4321,
        baseWeight: 0.5,
        importance: 2.5,
        baseImportance: 3,
        category: 'episode',
        type: 'project',
        scope: { userId: 'alice', agentId: 'agent-1', sessionId: 'session-9' },
        source: 'background_ai',
        verified: false,
        sources: ['D1:3', 'D2:7'],
        tags: ['kept', '饮料'],
        metadata: { nested: { list: [1, 'two', null], flag: true }, count: 3, label: '1' },
        context: 'Asked: 你平时喝什么？\n---\n# like markup',
      });
      const plain = record({ content: 'plain, no context, across a reopen' });
      await context.store.apply([create(full, axis(6)), create(plain, axis(5))]);
      await context.store.apply([replace(full, { content: 'kept whole across a reopen, edited', tags: ['kept', 'edited'], updatedAt: '2024-02-02T02:02:02.000Z' })]);
      await context.store.touch([full.id], '2031-01-01T01:01:01.000Z');
      const expected = {
        ...full,
        content: 'kept whole across a reopen, edited',
        tags: ['kept', 'edited'],
        updatedAt: '2024-02-02T02:02:02.000Z',
        lastAccessedAt: '2031-01-01T01:01:01.000Z',
        revision: 2,
      };
      expect(await context.store.get(full.id)).toEqual(expected);
      const history = await context.store.history(full.id);
      const reopened = await options.reopen!(context.store);
      context.replace(reopened);
      await openStore(reopened);
      expect(await reopened.get(full.id)).toEqual(expected);
      expect(await reopened.get(plain.id)).toEqual(plain);
      expect(await reopened.get(plain.id)).not.toHaveProperty('context');
      expect(await reopened.getMany([plain.id, full.id])).toEqual([plain, expected]);
      expect((await reopened.list({})).find((entry) => entry.id === full.id)).toEqual(expected);
      expect((await reopened.vectorSearch({ vector: axis(6), limit: 1 }))[0]?.memory).toEqual(expected);
      if (options.capabilities.textSearch) {
        expect((await reopened.textSearch!({ text: 'edited', limit: 5 })).map((hit) => hit.memory)).toEqual([expected]);
      }
      expect(await reopened.history(full.id)).toEqual(history);
      expect(history.map((entry) => entry.after.tags)).toEqual([['kept', '饮料'], ['kept', 'edited']]);
      const vector = await reopened.getVector(full.id);
      expect(vector).toHaveLength(DIMENSION);
      expect(vector?.[6]).toBeCloseTo(1, 5);
    });
  });
}
