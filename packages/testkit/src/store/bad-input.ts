import type { Embedder, MemoryChange, MemoryRecord, MemoryStore } from '@memloom/core';
import { createMemory, MemloomError } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { facade } from './facade.js';
import { axis, create, DIMENSION, EMBEDDER_ID, openStore, record, rejectsWithCode, replace, type StoreContext } from './fixtures.js';

/** A put, as the fixtures make it. */
type PutChange = Extract<MemoryChange, { op: 'put' }>;

/** Scopes of the wrong shape: each would match everything, or nothing, if a store took it as given. */
const BAD_SCOPES: unknown[] = ['alice', ['alice'], { user: 'bob' }, { userId: 5 }, { userId: null }, { userId: ['bob'] }, { userId: 'bob', tenant: 'x' }];
/** Filters of the wrong shape (INVALID_INPUT). */
const BAD_FILTERS: unknown[] = [
  'work',
  ['fact'],
  { tags: 'work' },
  { tags: [7] },
  { ids: 'f-coffee' },
  { ids: [7] },
  { tag: ['work'] },
  { category: 5 },
  { category: 'facts' },
  { type: ['user', 7] },
  { verified: 'yes' },
  { metadata: 'x' },
  { metadata: { k: { a: 1 } } },
  { metadata: { k: ['a'] } },
  { metadata: { k: null } },
  { metadata: { k: Number.NaN } },
];

/** Each read that takes a scope and a filter, with the rest of its query filled in. */
function readsOf(store: MemoryStore): Array<[string, (query: object) => Promise<unknown>]> {
  const reads: Array<[string, (query: object) => Promise<unknown>]> = [
    ['list', (query) => store.list(query as never)],
    ['count', (query) => store.count(query as never)],
    ['vectorSearch', (query) => store.vectorSearch({ vector: axis(0), limit: 5, ...query } as never)],
  ];
  if (store.textSearch) reads.push(['textSearch', (query) => store.textSearch!({ text: 'shared words', limit: 5, ...query } as never)]);
  if (store.listPage) reads.push(['listPage', (query) => store.listPage!({ limit: 5, ...query } as never)]);
  return reads;
}

/** rejectsWithCode, naming the call that did not fail as it should. */
async function refused(what: string, promise: Promise<unknown>, code: string): Promise<void> {
  try {
    await rejectsWithCode(promise, code);
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`, { cause: error });
  }
}

export function badInputCases(context: StoreContext & { replace(store: MemoryStore): void }): void {
  describe('bad input', () => {
    it('refuses a vector of the wrong dimension and writes nothing', async () => {
      const memory = record();
      await rejectsWithCode(context.store.apply([create(memory, [1, 0, 0])]), 'DIMENSION_MISMATCH');
      expect(await context.store.get(memory.id)).toBeUndefined();
      expect(await context.store.count({})).toBe(0);
    });

    it('refuses a put whose expected revision is stale (CONFLICT) and writes nothing', async () => {
      const memory = record({ content: 'first' });
      await context.store.apply([create(memory, axis(0))]);
      await rejectsWithCode(context.store.apply([create(memory, axis(0))]), 'CONFLICT');
      await context.store.apply([replace(memory, { content: 'second' })]);
      await rejectsWithCode(context.store.apply([replace(memory, { content: 'lost update' })]), 'CONFLICT');
      expect((await context.store.get(memory.id))?.content).toBe('second');
      expect(await context.store.history(memory.id)).toHaveLength(2);
    });

    it('refuses a search limit that is not a whole number >= 0, search text that is not a string and ids that are not an array of strings, with INVALID_INPUT', async () => {
      await context.store.apply([create(record({ content: 'one to find' }), axis(0))]);
      for (const limit of [Number.NaN, 2.5, -1, '3', undefined]) {
        await rejectsWithCode(context.store.vectorSearch({ vector: axis(0), limit } as never), 'INVALID_INPUT');
        if (context.store.textSearch) await rejectsWithCode(context.store.textSearch({ text: 'find', limit } as never), 'INVALID_INPUT');
      }
      if (context.store.textSearch) {
        for (const text of [undefined, 42, null]) await rejectsWithCode(context.store.textSearch({ text, limit: 3 } as never), 'INVALID_INPUT');
      }
      for (const ids of [null, 'one id', [7]]) await rejectsWithCode(context.store.getMany(ids as never), 'INVALID_INPUT');
      expect(await context.store.vectorSearch({ vector: axis(0), limit: 0 })).toEqual([]);
      expect(await context.store.getMany([])).toEqual([]);
    });

    it('refuses a query scope or filter of the wrong shape (INVALID_SCOPE, INVALID_INPUT) in list, count, listPage, vectorSearch and textSearch', async () => {
      await context.store.apply([
        create(record({ content: 'shared words of alice' }), axis(0)),
        create(record({ content: 'shared words of bob', scope: { userId: 'bob' } }), axis(1)),
      ]);
      for (const [name, read] of readsOf(context.store)) {
        for (const scope of BAD_SCOPES) await refused(`${name} with scope ${JSON.stringify(scope)}`, read({ scope }), 'INVALID_SCOPE');
        for (const filter of BAD_FILTERS) await refused(`${name} with filter ${JSON.stringify(filter)}`, read({ filter }), 'INVALID_INPUT');
        await refused(`${name} with exactScope 'yes'`, read({ scope: { userId: 'bob' }, exactScope: 'yes' }), 'INVALID_INPUT');
      }
      // list's order: one of ListOrder's values, ascending or descending.
      await refused("list with orderBy 'score'", context.store.list({ orderBy: 'score' as never }), 'INVALID_INPUT');
      await refused("list with direction 'down'", context.store.list({ direction: 'down' as never }), 'INVALID_INPUT');
      // Fields left undefined are absent, and an empty tag list filters nothing.
      const fine = { scope: { userId: 'bob', sessionId: undefined }, filter: { category: undefined, tags: [] } };
      expect((await context.store.list(fine)).map((memory) => memory.content)).toEqual(['shared words of bob']);
      expect(await context.store.count(fine)).toBe(1);
    });

    it('deleteByScope refuses a scope of the wrong shape, or one that sets no field, with INVALID_SCOPE and deletes nothing', async () => {
      await context.store.apply([create(record(), axis(0)), create(record({ scope: { userId: 'bob' } }), axis(1))]);
      for (const scope of [...BAD_SCOPES, {}, { userId: undefined }, undefined, null]) {
        await refused(`deleteByScope(${JSON.stringify(scope)})`, context.store.deleteByScope(scope as never), 'INVALID_SCOPE');
        expect(await context.store.count({})).toBe(2);
      }
      expect(await context.store.deleteByScope({ userId: 'bob', agentId: undefined })).toBe(1);
      expect(await context.store.count({})).toBe(1);
    });

    it('refuses a query vector holding a value that is not a finite number, or all zeros, with INVALID_INPUT', async () => {
      await context.store.apply([create(record(), axis(0))]);
      const nan = axis(0).map((value, index) => (index === 1 ? Number.NaN : value));
      const infinite = axis(0).map((value, index) => (index === 1 ? Number.POSITIVE_INFINITY : value));
      const text = axis(0).map((value) => String(value));
      for (const vector of [nan, infinite, new Array<number>(DIMENSION).fill(0), text, 'vector', null]) {
        await refused(`vectorSearch(${JSON.stringify(vector)})`, context.store.vectorSearch({ vector, limit: 3 } as never), 'INVALID_INPUT');
      }
    });

    it('refuses a put whose vector holds a value that is not a finite number, or is all zeros (INVALID_INPUT), and writes nothing', async () => {
      const kept = record({ content: 'stored with a good vector' });
      await context.store.apply([create(kept, axis(0))]);
      const nan = axis(1).map((value, index) => (index === 2 ? Number.NaN : value));
      const infinite = axis(1).map((value, index) => (index === 2 ? Number.NEGATIVE_INFINITY : value));
      const text = axis(1).map((value) => String(value));
      const bad: Array<[string, unknown]> = [['NaN', nan], ['-Infinity', infinite], ['all zeros', new Array<number>(DIMENSION).fill(0)], ['strings', text]];
      for (const [what, vector] of bad) {
        const fresh = record({ content: `put with a vector of ${what}` });
        await refused(`a new memory with a vector of ${what}`, context.store.apply([create(fresh, vector as number[])]), 'INVALID_INPUT');
        expect(await context.store.get(fresh.id)).toBeUndefined();
        await refused(`a replacement with a vector of ${what}`, context.store.apply([replace(kept, { content: 'moved' }, vector as number[])]), 'INVALID_INPUT');
      }
      expect(await context.store.get(kept.id)).toEqual(kept);
      expect(await context.store.getVector(kept.id)).toEqual(axis(0));
      expect(await context.store.count({})).toBe(1);
    });

    it('refuses a put whose metadata is not JSON data (INVALID_INPUT naming the path of the bad value) and writes nothing; a property holding undefined is absent', async () => {
      const kept = record({ content: 'stored with plain metadata', metadata: { n: 1 } });
      await context.store.apply([create(kept, axis(0))]);
      const cycle: Record<string, unknown> = { name: 'loop' };
      cycle.self = cycle;
      const sparse: number[] = [1];
      sparse[2] = 3;
      const bad: Array<[unknown, string]> = [
        [{ when: new Date('2024-01-01T00:00:00.000Z') }, 'metadata.when'],
        [{ nested: { list: ['a', undefined] } }, 'metadata.nested.list[1]'],
        [{ sparse }, 'metadata.sparse[1]'],
        [{ score: Number.NaN }, 'metadata.score'],
        [{ deep: { score: Number.POSITIVE_INFINITY } }, 'metadata.deep.score'],
        [{ big: 10n }, 'metadata.big'],
        [{ seen: new Map([['k', 1]]) }, 'metadata.seen'],
        [{ loop: cycle }, 'metadata.loop.self'],
        [{ call: () => 1 }, 'metadata.call'],
        [['not', 'an object'], 'metadata'],
      ];
      for (const [metadata, path] of bad) {
        const fresh = record({ metadata: metadata as Record<string, unknown> });
        let caught: unknown;
        await context.store.apply([create(fresh, axis(1))]).catch((error: unknown) => (caught = error));
        expect(MemloomError.hasCode(caught, 'INVALID_INPUT'), `${path}: ${String(caught)}`).toBe(true);
        expect((caught as MemloomError).message, path).toContain(`${path} `);
        expect(await context.store.get(fresh.id)).toBeUndefined();
        await refused(`a replacement with ${path}`, context.store.apply([replace(kept, { metadata: metadata as Record<string, unknown> })]), 'INVALID_INPUT');
      }
      expect(await context.store.get(kept.id)).toEqual(kept);
      expect(await context.store.count({})).toBe(1);
      // JSON data of any shape is kept as given; a property holding undefined is absent, as JSON makes it.
      const plain = record({ metadata: { list: [1, 'two', null, { deep: [true, -2.5] }], empty: {}, gone: undefined } });
      await context.store.apply([create(plain, axis(2))]);
      const stored = await context.store.get(plain.id);
      expect(stored?.metadata).toEqual({ list: [1, 'two', null, { deep: [true, -2.5] }], empty: {} });
    });

    it("refuses a put whose version's before or after holds metadata that is not JSON data (INVALID_INPUT naming its path) and writes nothing: its history would not read back as given", async () => {
      const kept = record({ content: 'stored with plain metadata', metadata: { n: 1 } });
      await context.store.apply([create(kept, axis(0))]);
      const fresh = record({ content: 'its version holds a Map' });
      const created = create(fresh, axis(1)) as PutChange;
      const edit = replace(kept, { content: 'edited' }) as PutChange;
      const cases: Array<[PutChange, string]> = [
        [{ ...created, version: { ...created.version, after: { ...fresh, metadata: { seen: new Map([['k', 1]]) } } } }, 'version.after.metadata.seen'],
        [{ ...edit, version: { ...edit.version, before: { ...kept, metadata: { when: new Date('2024-01-01T00:00:00.000Z') } } } }, 'version.before.metadata.when'],
        [{ ...edit, version: { ...edit.version, after: { ...edit.memory, metadata: { score: Number.NaN } } } }, 'version.after.metadata.score'],
      ];
      for (const [change, path] of cases) {
        let caught: unknown;
        await context.store.apply([change]).catch((error: unknown) => (caught = error));
        expect(MemloomError.hasCode(caught, 'INVALID_INPUT'), `${path}: ${String(caught)}`).toBe(true);
        expect((caught as MemloomError).message, path).toContain(`${path} `);
      }
      expect(await context.store.get(fresh.id)).toBeUndefined();
      expect(await context.store.get(kept.id)).toEqual(kept);
      expect(await context.store.history(kept.id)).toHaveLength(1);
    });

    it('through the facade: metadata that is not JSON data is refused naming its path, a Date is kept as its ISO text and undefined properties are left out, the same in every store', async () => {
      const { memory } = facade(context.store);
      const scope = { userId: 'alice' };
      const cycle: Record<string, unknown> = {};
      cycle.again = cycle;
      for (const metadata of [{ a: { b: new Map() } }, { a: { b: [Number.NaN] } }, { a: { b: cycle } }, { a: { b: [undefined] } }]) {
        await rejectsWithCode(memory.add('a memory with odd metadata', { scope, metadata }), 'INVALID_OPTIONS');
      }
      expect(await context.store.count({})).toBe(0);
      const when = new Date('2024-01-01T00:00:00.000Z');
      const added = await memory.add('a memory with a date', { scope, metadata: { when, gone: undefined, nested: { list: [when] } } });
      const expected = { when: when.toISOString(), nested: { list: [when.toISOString()] } };
      expect(added.memory.metadata).toStrictEqual(expected);
      expect((await context.store.get(added.memory.id))?.metadata).toStrictEqual(expected);
      await rejectsWithCode(memory.update(added.memory.id, { metadata: { a: { b: 1n } } as never }), 'INVALID_INPUT');
      const updated = await memory.update(added.memory.id, { metadata: { at: when, list: [1, { gone: undefined }] } });
      expect((await context.store.get(updated.id))?.metadata).toStrictEqual({ at: when.toISOString(), list: [1, {}] });
      if (context.options.reopen) {
        const reopened = await openStore(await context.options.reopen(context.store));
        context.replace(reopened);
        expect((await reopened.get(updated.id))?.metadata).toStrictEqual({ at: when.toISOString(), list: [1, {}] });
      }
    });

    it('refuses a lone half of a UTF-16 pair in an id, a scope, content or context (INVALID_INPUT or INVALID_SCOPE, nothing written), or keeps it exactly, through a reopen', async () => {
      const cut = [
        record({ content: 'cut through an emoji \uD83D' }),
        record({ content: 'said with a cut context', context: 'the turn before \uDE00 it' }),
        record({ id: `cut-\uD800-${Math.random().toString(36).slice(2, 8)}` }),
        record({ scope: { userId: 'alice\uDBFF' } }),
      ];
      const kept: MemoryRecord[] = [];
      for (const memory of cut) {
        try {
          await context.store.apply([create(memory, axis(0))]);
          kept.push(memory);
        } catch (error) {
          expect(MemloomError.hasCode(error, 'INVALID_INPUT') || MemloomError.hasCode(error, 'INVALID_SCOPE'), String(error)).toBe(true);
        }
      }
      const check = async (store: MemoryStore) => {
        // What get and list give, what history holds and what was put are one record.
        for (const memory of kept) {
          expect(await store.get(memory.id)).toEqual(memory);
          expect((await store.history(memory.id))[0]?.after).toEqual(memory);
          expect((await store.list({ scope: memory.scope })).find((listed) => listed.id === memory.id)).toEqual(memory);
        }
        expect(await store.count({})).toBe(kept.length);
      };
      await check(context.store);
      if (context.options.reopen) {
        const reopened = await context.options.reopen(context.store);
        context.replace(reopened);
        await check(await openStore(reopened));
      }
    });

    it('touch refuses a time that is not ISO 8601 on a day the calendar has, and ids that are not an array of strings, with INVALID_INPUT and writes nothing', async () => {
      const memory = record({ content: 'one to touch' });
      await context.store.apply([create(memory, axis(0))]);
      for (const at of ['yesterday', '2024-02-30T10:00:00.000Z', '2024-03-01 10:00', 1714550400000, undefined]) {
        await rejectsWithCode(context.store.touch([memory.id], at as never), 'INVALID_INPUT');
      }
      for (const ids of [null, memory.id, [7]]) await rejectsWithCode(context.store.touch(ids as never, '2025-05-05T05:05:05.000Z'), 'INVALID_INPUT');
      expect((await context.store.get(memory.id))?.lastAccessedAt).toBe(memory.lastAccessedAt);
    });

    it.skipIf(!context.options.capabilities.listPage)('listPage refuses a limit below 1 or not whole, and a next it never gave, with INVALID_INPUT', async () => {
      await context.store.apply([create(record({ content: 'one to page' }), axis(0))]);
      const listPage = (context.store.listPage as NonNullable<typeof context.store.listPage>).bind(context.store);
      await rejectsWithCode(listPage({ limit: 0 }), 'INVALID_INPUT');
      await rejectsWithCode(listPage({ limit: 2.5 }), 'INVALID_INPUT');
      await rejectsWithCode(listPage({ limit: 2, after: 'no such place; DROP TABLE memories' }), 'INVALID_INPUT');
      expect((await listPage({ limit: 2 })).memories).toHaveLength(1);
    });

    it.skipIf(!context.options.capabilities.listAfter)('list refuses an after without an id or the field ordered by, or with the stored order, with INVALID_INPUT', async () => {
      const memory = record({ content: 'one to list' });
      await context.store.apply([create(memory, axis(0))]);
      const after = (value: unknown) => value as MemoryRecord;
      await rejectsWithCode(context.store.list({ after: after({ createdAt: memory.createdAt }) }), 'INVALID_INPUT');
      await rejectsWithCode(context.store.list({ after: after({ id: memory.id }) }), 'INVALID_INPUT');
      await rejectsWithCode(context.store.list({ orderBy: 'updatedAt', after: after({ id: memory.id, createdAt: memory.createdAt }) }), 'INVALID_INPUT');
      await rejectsWithCode(context.store.list({ after: after({ id: memory.id, createdAt: "yesterday'; DROP TABLE memories" }) }), 'INVALID_INPUT');
      await rejectsWithCode(context.store.list({ after: after('mem-1') }), 'INVALID_INPUT');
      await rejectsWithCode(context.store.list({ orderBy: 'stored', after: memory }), 'INVALID_INPUT');
      expect(await context.store.list({ after: { id: memory.id, createdAt: memory.createdAt } })).toEqual([]);
      expect(await context.store.list({ orderBy: 'id', after: { id: memory.id.slice(0, 3) } })).toHaveLength(1);
    });

    it('applies a batch all together or not at all', async () => {
      const existing = record({ content: 'existing' });
      await context.store.apply([create(existing, axis(0))]);
      const fresh = record({ content: 'fresh' });
      // Computed from revision 7 of it, while revision 1 is stored.
      const stale = replace({ ...existing, revision: 7 }, { content: 'changed' });
      await rejectsWithCode(context.store.apply([create(fresh, axis(1)), stale]), 'CONFLICT');
      expect(await context.store.get(fresh.id)).toBeUndefined();
      expect(await context.store.count({})).toBe(1);
      expect((await context.store.get(existing.id))?.content).toBe('existing');

      const deleted = { op: 'delete' as const, id: existing.id };
      await rejectsWithCode(context.store.apply([deleted, create(fresh, [1, 2])]), 'DIMENSION_MISMATCH');
      expect((await context.store.get(existing.id))?.content).toBe('existing');
    });

    it('refuses a whole batch with CONFLICT when one of its deletes is stale: puts before or after it write nothing', async () => {
      const existing = record({ content: 'existing, deleted only with the right revision' });
      const other = record({ content: 'another existing one' });
      await context.store.apply([create(existing, axis(0)), create(other, axis(1))]);
      const fresh = record({ content: 'fresh, in a batch that fails' });
      const stale = { op: 'delete' as const, id: existing.id, expectedRevision: 5 };
      const batches = [
        [create(fresh, axis(2)), stale],
        [stale, create(fresh, axis(2))],
        [replace(other, { content: 'edited in a batch that fails' }), { op: 'delete' as const, id: fresh.id }, stale],
        [{ op: 'delete' as const, id: other.id }, stale],
      ];
      for (const batch of batches) {
        await rejectsWithCode(context.store.apply(batch), 'CONFLICT');
        expect(await context.store.get(fresh.id)).toBeUndefined();
        expect(await context.store.get(existing.id)).toEqual(existing);
        expect(await context.store.get(other.id)).toEqual(other);
        expect(await context.store.history(other.id)).toHaveLength(1);
        expect(await context.store.count({})).toBe(2);
      }
      await context.store.apply([{ op: 'delete', id: existing.id, expectedRevision: 1 }]);
      expect(await context.store.get(existing.id)).toBeUndefined();
    });

    it('refuses to delete an unknown id with an expected revision (CONFLICT, and the batch writes nothing); without one it is a no-op', async () => {
      await rejectsWithCode(context.store.apply([{ op: 'delete', id: 'never-existed', expectedRevision: 1 }]), 'CONFLICT');
      const fresh = record({ content: 'fresh, beside a delete of a ghost' });
      await rejectsWithCode(context.store.apply([create(fresh, axis(0)), { op: 'delete', id: 'never-existed', expectedRevision: 3 }]), 'CONFLICT');
      expect(await context.store.get(fresh.id)).toBeUndefined();
      // A memory deleted before is unknown too.
      const gone = record({ content: 'deleted, then deleted again' });
      await context.store.apply([create(gone, axis(1))]);
      await context.store.apply([{ op: 'delete', id: gone.id }]);
      await rejectsWithCode(context.store.apply([{ op: 'delete', id: gone.id, expectedRevision: 1 }]), 'CONFLICT');
      expect(await context.store.count({})).toBe(0);
      // Without an expected revision it is done, and the rest of the batch is written.
      await context.store.apply([create(fresh, axis(0)), { op: 'delete', id: 'never-existed' }]);
      expect(await context.store.get(fresh.id)).toEqual(fresh);
    });

    it('refuses a put whose revision or version number is not expectedRevision + 1 (INVALID_INPUT) and writes nothing', async () => {
      const memory = record({ content: 'numbered one by one' });
      await context.store.apply([create(memory, axis(0))]);
      /** A put with its memory's revision and its version's number set as given. */
      const renumber = (change: MemoryChange, revision: number, versionNumber: number) => {
        if (change.op !== 'put') throw new Error('renumber takes a put');
        return { ...change, memory: { ...change.memory, revision }, version: { ...change.version, version: versionNumber, after: { ...change.memory, revision } } };
      };
      const renumbered = (revision: number, versionNumber: number) => renumber(replace(memory, { content: 'skips ahead' }), revision, versionNumber);
      const fresh = record({ content: 'created at revision 2' });
      const skipped = renumber(create(fresh, axis(1)), 2, 2);
      // Stale and numbered wrong: the numbering is the caller's mistake whatever is stored, so not a CONFLICT (a race).
      const staleAndWrong = { ...renumbered(5, 5), expectedRevision: 3 };
      const bad = [[renumbered(5, 5)], [renumbered(2, 5)], [renumbered(5, 2)], [renumbered(1, 1)], [skipped], [create(record(), axis(2)), renumbered(5, 5)], [staleAndWrong]];
      for (const batch of bad) {
        await rejectsWithCode(context.store.apply(batch), 'INVALID_INPUT');
        expect(await context.store.get(memory.id)).toEqual(memory);
        expect(await context.store.history(memory.id)).toHaveLength(1);
        expect(await context.store.get(fresh.id)).toBeUndefined();
        expect(await context.store.count({})).toBe(1);
      }
    });

    it('refuses a put whose scope has the wrong shape, is absent or null (INVALID_SCOPE) and writes nothing; a field left undefined is absent', async () => {
      const kept = record({ content: 'stored with a good scope', scope: { userId: 'bob' } });
      await context.store.apply([create(kept, axis(0))]);
      // A blank value too, in a new memory: no query could name it (the facade refuses it in a query's scope). A
      // rewrite is checked for the shape only: a store written by 0.1.0 may hold a memory with a blank value.
      const blank = [{ userId: '' }, { userId: 'bob', agentId: '  ' }, { sessionId: '\t' }];
      for (const scope of [...BAD_SCOPES, { tenant: 'x' }, undefined, null, ...blank]) {
        const fresh = record({ scope: scope as never });
        await refused(`a new memory with scope ${JSON.stringify(scope)}`, context.store.apply([create(fresh, axis(1))]), 'INVALID_SCOPE');
        expect(await context.store.get(fresh.id)).toBeUndefined();
        if (blank.includes(scope as never)) continue;
        await refused(`a replacement with scope ${JSON.stringify(scope)}`, context.store.apply([replace(kept, { scope: scope as never })]), 'INVALID_SCOPE');
      }
      expect(await context.store.get(kept.id)).toEqual(kept);
      expect(await context.store.history(kept.id)).toHaveLength(1);
      expect(await context.store.count({})).toBe(1);
      const loose = record({ scope: { userId: 'carol', sessionId: undefined } });
      await context.store.apply([create(loose, axis(1))]);
      expect((await context.store.get(loose.id))?.scope).toStrictEqual({ userId: 'carol' });
      expect(await context.store.list({ scope: { userId: 'carol' }, exactScope: true })).toHaveLength(1);
    });

    it('refuses a put that creates a memory whose id is not a string, is blank, longer than 256 characters or holds a control character or a bidi control (INVALID_INPUT naming it by code point, not printing it) and writes nothing', async () => {
      const kept = record({ content: 'stored with a plain id' });
      await context.store.apply([create(kept, axis(0))]);
      const controls: Array<[string, string]> = [['\u0000', 'U+0000'], ['\u001b', 'U+001B'], ['\n', 'U+000A'], ['\u009b', 'U+009B'], ['\u202e', 'U+202E'], ['\u2067', 'U+2067'], ['\u200f', 'U+200F']];
      for (const [control, codePoint] of controls) {
        const fresh = record({ id: `ctl${control}${Math.random().toString(36).slice(2, 8)}` });
        let caught: unknown;
        await context.store.apply([create(record({ content: 'beside it in the batch' }), axis(2)), create(fresh, axis(1))]).catch((error: unknown) => (caught = error));
        expect(MemloomError.hasCode(caught, 'INVALID_INPUT'), `${codePoint}: ${String(caught)}`).toBe(true);
        expect((caught as MemloomError).message, codePoint).toContain(`${codePoint} at index 3`);
        expect((caught as MemloomError).message.includes(control), codePoint).toBe(false);
        expect(await context.store.get(fresh.id)).toBeUndefined();
      }
      for (const id of ['', '   ', 'x'.repeat(300), 7]) await refused(`a put with id ${JSON.stringify(id)}`, context.store.apply([create(record({ id: id as never }), axis(1))]), 'INVALID_INPUT');
      expect(await context.store.list({})).toEqual([kept]);
    });

    it('holds the id rule to puts that create: a put that rewrites a memory (expectedRevision 1) is not refused for its id, since a store written before the rule may hold one', async () => {
      // Nothing holds these ids, so the put is stale: CONFLICT, where a refused id would be INVALID_INPUT.
      for (const id of ['ticket\t42', 'esc\u001b[2J', 'bidi\u202e']) {
        const before = record({ id });
        await refused(`a rewrite of ${JSON.stringify(id)}`, context.store.apply([replace(before, { content: 'rewritten' }, axis(1))]), 'CONFLICT');
        expect(await context.store.get(id)).toBeUndefined();
      }
    });

    it('refuses a put that is both stale and bad for its input, not with CONFLICT: bad input is the caller\'s mistake whatever the revision', async () => {
      const kept = record({ content: 'stored at revision 1' });
      await context.store.apply([create(kept, axis(0))]);
      // Computed from revision 0 while revision 1 is stored: a create of a memory that exists.
      const stale = (vector: unknown, fields: Partial<MemoryRecord> = {}) => create({ ...kept, content: 'stale', ...fields }, vector as number[]);
      const nan = axis(1).map((value, index) => (index === 2 ? Number.NaN : value));
      await refused('a stale put with a NaN in its vector', context.store.apply([stale(nan)]), 'INVALID_INPUT');
      await refused('a stale put with an all-zero vector', context.store.apply([stale(new Array<number>(DIMENSION).fill(0))]), 'INVALID_INPUT');
      await refused('a stale put with a vector of another dimension', context.store.apply([stale([1, 0, 0])]), 'DIMENSION_MISMATCH');
      await refused('a stale put with a blank scope value', context.store.apply([stale(axis(1), { scope: { userId: '' } })]), 'INVALID_SCOPE');
      await refused('a stale put with a good vector', context.store.apply([stale(axis(1))]), 'CONFLICT');
      expect(await context.store.get(kept.id)).toEqual(kept);
      expect(await context.store.history(kept.id)).toHaveLength(1);
    });

    it('refuses a put whose context is not a non-empty string (INVALID_INPUT) and writes nothing', async () => {
      for (const bad of ['', 42, null]) {
        const memory = { ...record(), context: bad } as unknown as MemoryRecord;
        await rejectsWithCode(context.store.apply([create(memory, axis(0))]), 'INVALID_INPUT');
        expect(await context.store.get(memory.id)).toBeUndefined();
      }
      expect(await context.store.count({})).toBe(0);
    });

    it('refuses a stale delete', async () => {
      const memory = record();
      await context.store.apply([create(memory, axis(0))]);
      await rejectsWithCode(context.store.apply([{ op: 'delete', id: memory.id, expectedRevision: 5 }]), 'CONFLICT');
      expect(await context.store.get(memory.id)).toBeDefined();
    });

    it('refuses to be reopened for another dimension or another embedder', async () => {
      await context.store.apply([create(record(), axis(0))]);
      await rejectsWithCode(context.store.open({ dimension: DIMENSION * 2, embedderId: EMBEDDER_ID }), 'DIMENSION_MISMATCH');
      await rejectsWithCode(context.store.open({ dimension: DIMENSION, embedderId: 'another/model' }), 'EMBEDDER_MISMATCH');
      expect(await context.store.count({})).toBe(1);
    });

    it('through the facade: bad content, scope, ids and embeddings are typed errors and write nothing', async () => {
      const { memory } = facade(context.store);
      const scope = { userId: 'alice' };
      await rejectsWithCode(memory.add('', { scope }), 'EMPTY_CONTENT');
      await rejectsWithCode(memory.add(' \n\t ', { scope }), 'EMPTY_CONTENT');
      await rejectsWithCode(memory.add('x'.repeat(10_001), { scope }), 'CONTENT_TOO_LONG');
      await rejectsWithCode(memory.add(42 as unknown as string, { scope }), 'INVALID_INPUT');
      await rejectsWithCode(memory.add('ok', { scope: { userId: '' } }), 'INVALID_SCOPE');
      await rejectsWithCode(memory.add('ok', { scope: { userId: 7 as unknown as string } }), 'INVALID_SCOPE');
      await rejectsWithCode(memory.add('ok', { scope: { tenant: 'x' } as never }), 'INVALID_SCOPE');
      await rejectsWithCode(memory.add('ok', { scope: { userId: 'a\u0000b' } }), 'INVALID_SCOPE');
      await rejectsWithCode(memory.add('ok', { scope: { userId: 'u'.repeat(300) } }), 'INVALID_SCOPE');
      await rejectsWithCode(memory.add('ok', { scope, category: 'nonsense' as never }), 'INVALID_OPTIONS');
      await rejectsWithCode(memory.update('no-such-id', { content: 'x' }), 'NOT_FOUND');
      await rejectsWithCode(memory.delete('no-such-id'), 'NOT_FOUND');
      await rejectsWithCode(memory.history('no-such-id'), 'NOT_FOUND');
      // A lookup takes any id a store may hold (one written before the rule for new ids among them).
      expect(await memory.get('no-such\u001b[2J-id')).toBeUndefined();
      await rejectsWithCode(memory.delete('no-such\u202e-id'), 'NOT_FOUND');
      await rejectsWithCode(memory.get('   '), 'INVALID_INPUT');
      await rejectsWithCode(memory.history('x'.repeat(300)), 'INVALID_INPUT');
      await rejectsWithCode(memory.restore('no-such-id', 1), 'NOT_FOUND');
      await rejectsWithCode(memory.deleteAll({}), 'INVALID_SCOPE');
      expect(await context.store.count({})).toBe(0);

      const broken = (vector: number[]): Embedder => ({
        id: EMBEDDER_ID,
        dimension: DIMENSION,
        embed: async (texts) => texts.map(() => vector),
      });
      const nan = createMemory({ store: context.store, embedder: broken([Number.NaN, 0, 0, 0, 0, 0, 0, 1]) });
      await rejectsWithCode(nan.add('a memory', { scope }), 'INVALID_EMBEDDING');
      const short = createMemory({ store: context.store, embedder: broken([1, 0, 0]) });
      await rejectsWithCode(short.add('a memory', { scope }), 'INVALID_EMBEDDING');
      expect(await context.store.count({})).toBe(0);
    });

    it('through the facade: an edit of another scope is NOT_FOUND and changes nothing', async () => {
      const { memory } = facade(context.store, { 'bob likes jazz': axis(0) });
      const added = await memory.add('bob likes jazz', { scope: { userId: 'bob' } });
      await rejectsWithCode(memory.update(added.memory.id, { content: 'hijacked' }, { scope: { userId: 'alice' } }), 'NOT_FOUND');
      await rejectsWithCode(memory.delete(added.memory.id, { scope: { userId: 'alice' } }), 'NOT_FOUND');
      expect(await memory.get(added.memory.id, { scope: { userId: 'alice' } })).toBeUndefined();
      expect((await memory.get(added.memory.id))?.content).toBe('bob likes jazz');
    });
  });
}
