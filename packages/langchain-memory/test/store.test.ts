import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool, type ToolRuntime } from '@langchain/core/tools';
import { InMemoryStore, type BaseStore, type Item } from '@langchain/langgraph';
import { createMemory, hasLoneSurrogate, MemloomError } from '@memloom/core';
import { createAgent } from 'langchain';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createMemloomMiddleware, MemloomStore, MemloomEmbeddings } from '../src/index.js';
import { errorOf, rig } from './helpers.js';

function storeRig() {
  const parts = rig();
  return { ...parts, store: new MemloomStore(parts.memory), backing: parts.store };
}

const keysOf = (items: Item[]) => items.map((item) => item.key);

describe('MemloomStore: put and get', () => {
  it('stores a value under namespace and key, replaces it on put (keeping createdAt), and deletes', async () => {
    const { store, clock } = storeRig();
    expect(await store.get(['alice', 'prefs'], 'drink')).toBeNull();
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea', strength: 2, tags: ['hot'] });
    const first = await store.get(['alice', 'prefs'], 'drink');
    expect(first).toMatchObject({ namespace: ['alice', 'prefs'], key: 'drink', value: { text: 'green tea', strength: 2, tags: ['hot'] } });
    expect(first?.createdAt).toBeInstanceOf(Date);
    expect(first?.createdAt.toISOString()).toBe('2024-05-01T09:00:00.000Z');

    clock.advance(60_000);
    await store.put(['alice', 'prefs'], 'drink', { text: 'black coffee' });
    const second = await store.get(['alice', 'prefs'], 'drink');
    expect(second?.value).toEqual({ text: 'black coffee' });
    expect(second?.createdAt.toISOString()).toBe('2024-05-01T09:00:00.000Z');
    expect(second?.updatedAt.toISOString()).toBe('2024-05-01T09:01:00.000Z');

    // The same key in another namespace is another item.
    await store.put(['alice', 'work'], 'drink', { text: 'water' });
    expect((await store.get(['alice', 'prefs'], 'drink'))?.value).toEqual({ text: 'black coffee' });

    await store.delete(['alice', 'prefs'], 'drink');
    expect(await store.get(['alice', 'prefs'], 'drink')).toBeNull();
    await store.delete(['alice', 'prefs'], 'drink'); // deleting what is gone is a no-op
    expect((await store.get(['alice', 'work'], 'drink'))?.value).toEqual({ text: 'water' });
  });

  it('finds an item again whose key or value holds a lone half of a UTF-16 pair (stored as U+FFFD), and keeps one copy of it', async () => {
    const { store, memory } = storeRig();
    const key = 'note \uD83D';
    await store.put(['alice', 'notes'], key, { text: 'cut \uDE00' });
    await store.put(['alice', 'notes'], key, { text: 'cut again \uDE00' });
    const item = await store.get(['alice', 'notes'], key);
    expect(item?.value).toEqual({ text: 'cut again \uFFFD' });
    expect(await memory.count({ scope: { userId: 'alice' } })).toBe(1);
    await store.delete(['alice', 'notes'], key);
    expect(await store.get(['alice', 'notes'], key)).toBeNull();
  });

  it('keeps one memory per item, in the scope of its namespace, with its history', async () => {
    const { store, memory } = storeRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea' });
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea' });
    await Promise.all([store.put(['bob'], 'k', { n: 1 }), store.put(['bob'], 'k', { n: 2 })]);
    const alices = await memory.list({ scope: { userId: 'alice' } });
    expect(alices).toHaveLength(1);
    expect(alices[0]).toMatchObject({ category: 'system', tags: ['langgraph-item'], content: JSON.stringify({ text: 'green tea' }, null, 2) });
    expect((await memory.history(alices[0]!.id)).map((version) => version.action)).toEqual(['create', 'edit']);
    expect(await memory.count({ scope: { userId: 'bob' } })).toBe(1);
    expect((await store.get(['bob'], 'k'))?.value).toEqual({ n: 2 });
  });

  it('rejects what LangGraph rejects, writing nothing', async () => {
    const { store, memory } = storeRig();
    await expect(store.put([], 'k', { a: 1 })).rejects.toThrow(/empty/);
    await expect(store.put(['a.b'], 'k', { a: 1 })).rejects.toThrow(/periods|"\."/);
    await expect(store.put(['langgraph', 'x'], 'k', { a: 1 })).rejects.toThrow(/langgraph/);
    expect((await errorOf(store.batch([{ namespace: ['alice'], key: 'k', value: ['not', 'an', 'object'] as never }]))).code).toBe('INVALID_INPUT');
    expect((await errorOf(store.batch([{ namespace: [], key: 'k', value: { a: 1 } }]))).code).toBe('INVALID_INPUT');
    expect(await memory.count()).toBe(0);
  });

  it('refuses exactly the namespaces LangGraph’s InMemoryStore refuses, always with a MemloomError', async () => {
    const namespaces: unknown[][] = [
      [], ['a'], ['a', 'b'], ['*'], [''], ['a', ''], ['a.b'], ['a', 'b.c'], ['a:b'], ['a\0b'], [1], ['a', null],
      ['langgraph'], ['langgraph', 'x'], ['x', 'langgraph'],
    ];
    const calls: Record<string, (store: BaseStore, namespace: string[]) => Promise<unknown>> = {
      put: (store, namespace) => store.put(namespace, 'k', { a: 1 }),
      get: (store, namespace) => store.get(namespace, 'k'),
      delete: (store, namespace) => store.delete(namespace, 'k'),
      search: (store, namespace) => store.search(namespace),
      listPrefix: (store, namespace) => store.listNamespaces({ prefix: namespace }),
      listSuffix: (store, namespace) => store.listNamespaces({ suffix: namespace }),
      batchPut: (store, namespace) => store.batch([{ namespace, key: 'k', value: { a: 1 } }]),
      batchGet: (store, namespace) => store.batch([{ namespace, key: 'k' }]),
      batchSearch: (store, namespace) => store.batch([{ namespacePrefix: namespace }]),
    };
    const ours = storeRig().store;
    const theirs = new InMemoryStore();
    const outcomes = async (store: BaseStore, check: (error: unknown, call: string) => void) => {
      const answers: string[] = [];
      for (const namespace of namespaces) {
        for (const [name, call] of Object.entries(calls)) {
          try {
            await call(store, namespace as string[]);
            answers.push(`${name} ${JSON.stringify(namespace)}: ok`);
          } catch (error) {
            check(error, `${name} ${JSON.stringify(namespace)}`);
            answers.push(`${name} ${JSON.stringify(namespace)}: refused`);
          }
        }
      }
      return answers;
    };
    const ourAnswers = await outcomes(ours, (error, call) => {
      expect(MemloomError.isInstance(error), call).toBe(true);
      expect((error as MemloomError).code, call).toBe('INVALID_INPUT');
      expect((error as MemloomError).backend, call).toBe('langgraph-store');
    });
    expect(ourAnswers).toEqual(await outcomes(theirs, () => undefined));
    expect(ourAnswers.filter((answer) => answer.endsWith('refused')).length).toBeGreaterThan(50);
    // The messages say what is wrong.
    expect((await errorOf(ours.put(['a.b'], 'k', { a: 1 }))).message).toMatch(/\["a\.b"\].*period/);
    expect((await errorOf(ours.get(['a:b'], 'k'))).message).toMatch(/colon/);
    expect((await errorOf(ours.put(['langgraph'], 'k', { a: 1 }))).message).toMatch(/root label "langgraph" is reserved/);
    expect((await errorOf(ours.search(['a', ''] as string[]))).message).toMatch(/empty/);
  });

  it('refuses values that cannot be stored as JSON with INVALID_INPUT, keeping the cause', async () => {
    const { store, memory } = storeRig();
    const circular: Record<string, unknown> = { name: 'loop' };
    circular.self = circular;
    for (const value of [{ n: 1n }, circular, { nested: { big: 10n } }]) {
      const error = await errorOf(store.put(['alice'], 'k', value));
      expect(error).toMatchObject({ code: 'INVALID_INPUT', backend: 'langgraph-store' });
      expect(error.message).toMatch(/an item value must be storable as JSON: .*(BigInt|circular)/);
      expect(error.cause).toBeInstanceOf(TypeError);
    }
    const toText = { toJSON: () => 'text' };
    expect(await errorOf(store.put(['alice'], 'k', toText))).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/JSON object/) });
    expect(await memory.count()).toBe(0);
    // What JSON drops (undefined, functions) is dropped, as before.
    await store.put(['alice'], 'k', { a: 1, gone: undefined, fn: () => 1 });
    expect((await store.get(['alice'], 'k'))?.value).toEqual({ a: 1 });
  });

  it('explains a namespace label memloom’s scopes refuse (the first label is the userId by default)', async () => {
    const { store, memory } = storeRig();
    const cases: Array<[string[], RegExp]> = [
      [[' '], /namespace \[" "\] maps to scope\.userId = " " that memloom refuses: scope\.userId must be a non-empty string/],
      [['a'.repeat(300), 'x'], /namespace \["a{20,}.* maps to scope\.userId = "a{20,}.*that memloom refuses: scope\.userId is 300 characters long; the limit is 256/],
      [['tab\there'], /namespace \["tab\\there"\] maps to scope\.userId = "tab\\there" that memloom refuses: scope\.userId holds a control character/],
      // Shown escaped, never as the character: U+202E would reorder the message, U+009B start a terminal sequence.
      [['al\u202eice', 'prefs'], /namespace \["al\\u202eice","prefs"\] maps to scope\.userId = "al\\u202eice" that memloom refuses: .*\(U\+202E at index 2\)/],
      [['csi\u009b2J'], /namespace \["csi\\u009b2J"\] maps to scope\.userId = "csi\\u009b2J" that memloom refuses: .*\(U\+009B at index 3\)/],
    ];
    for (const [namespace, message] of cases) {
      for (const work of [() => store.put(namespace, 'k', { a: 1 }), () => store.get(namespace, 'k'), () => store.search(namespace)]) {
        const error = await errorOf(work);
        expect(error).toMatchObject({ code: 'INVALID_SCOPE', backend: 'langgraph-store', details: { field: 'userId', namespace } });
        expect(error.message).toMatch(message);
        expect(error.message).toMatch(/non-blank, at most 256 characters long and without control or bidi control characters/);
        expect(error.message).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/u);
        expect(MemloomError.isInstance(error.cause)).toBe(true);
      }
    }
    // A long label is quoted by its start, cut before an emoji rather than through it.
    const cut = await errorOf(() => store.put([`${'a'.repeat(77)}${'😀'.repeat(150)}`], 'k', { a: 1 }));
    expect(cut.message).toContain(`namespace ["${'a'.repeat(77)}… maps to`);
    expect(hasLoneSurrogate(cut.message)).toBe(false);
    expect(await memory.count()).toBe(0);
  });

  it('keeps one item when two stores put the same new key at once, and delete removes it everywhere', async () => {
    const { memory } = storeRig();
    const first = new MemloomStore(memory);
    const second = new MemloomStore(memory);
    await Promise.all([first.put(['alice', 'prefs'], 'drink', { text: 'tea' }), second.put(['alice', 'prefs'], 'drink', { text: 'coffee' })]);
    await Promise.all([first.put(['alice', 'prefs'], 'food', { text: 'bread' }), second.put(['alice', 'prefs'], 'food', { text: 'rice' })]);
    for (const store of [first, second]) {
      expect(keysOf(await store.search(['alice'])).sort()).toEqual(['drink', 'food']);
      expect(keysOf(await store.search(['alice'], { query: 'tea coffee bread rice' })).sort()).toEqual(['drink', 'food']);
      expect(await store.listNamespaces()).toEqual([['alice', 'prefs']]);
    }
    const drink = await first.get(['alice', 'prefs'], 'drink');
    expect([{ text: 'tea' }, { text: 'coffee' }]).toContainEqual(drink?.value);
    expect((await second.get(['alice', 'prefs'], 'drink'))?.value).toEqual(drink?.value);
    expect((await first.search(['alice'], { filter: { text: drink?.value.text } })).map((item) => item.value)).toEqual([drink?.value]);
    expect(await memory.count()).toBe(2);

    await second.delete(['alice', 'prefs'], 'drink');
    expect(await first.get(['alice', 'prefs'], 'drink')).toBeNull();
    expect(keysOf(await first.search(['alice']))).toEqual(['food']);
  });

  it('lets two stores update one existing item at once, the last write winning (no CONFLICT)', async () => {
    const { memory } = storeRig();
    const first = new MemloomStore(memory);
    const second = new MemloomStore(memory);
    await first.put(['alice', 'prefs'], 'drink', { text: 'water' });
    for (let round = 0; round < 5; round++) {
      await Promise.all([first.put(['alice', 'prefs'], 'drink', { text: `tea ${round}` }), second.put(['alice', 'prefs'], 'drink', { text: `coffee ${round}` })]);
    }
    expect([{ text: 'tea 4' }, { text: 'coffee 4' }]).toContainEqual((await first.get(['alice', 'prefs'], 'drink'))?.value);
    expect(await memory.count()).toBe(1);
  });

  it('reads only the newest copy of an item an interrupted writer left twice, and a put or delete clears the rest', async () => {
    const { store, memory, clock } = storeRig();
    await store.put(['alice'], 'drink', { text: 'green tea' });
    await store.put(['alice'], 'food', { text: 'rice' });
    // An older copy of each, as two stores creating the same item at once leave until one of them cleans up.
    for (const key of ['drink', 'food']) {
      const [record] = await memory.list({ filter: { metadata: { lgKey: key } } });
      clock.advance(-60_000);
      await memory.add(`stale ${key}`, {
        scope: record!.scope,
        category: 'system',
        tags: record!.tags,
        metadata: { ...record!.metadata, lgValue: { text: `stale ${key}` }, lgSeq: 0 },
        merge: false,
      });
      clock.advance(60_000);
    }
    expect(await memory.count()).toBe(4);
    expect((await store.get(['alice'], 'drink'))?.value).toEqual({ text: 'green tea' });
    expect((await store.search(['alice'])).map((item) => [item.key, item.value])).toEqual([
      ['food', { text: 'rice' }],
      ['drink', { text: 'green tea' }],
    ]);
    expect((await store.search(['alice'], { query: 'stale drink food' })).map((item) => item.value.text).sort()).toEqual(['green tea', 'rice']);

    await store.delete(['alice'], 'drink');
    expect(await store.get(['alice'], 'drink')).toBeNull();
    expect(await memory.count({ filter: { metadata: { lgKey: 'drink' } } })).toBe(0);
    await store.put(['alice'], 'food', { text: 'noodles' });
    expect(await memory.count({ filter: { metadata: { lgKey: 'food' } } })).toBe(1);
    expect((await store.get(['alice'], 'food'))?.value).toEqual({ text: 'noodles' });
  });

  it('runs a batch in order and answers each operation', async () => {
    const { store } = storeRig();
    const results = await store.batch([
      { namespace: ['alice'], key: 'a', value: { n: 1 } },
      { namespace: ['alice'], key: 'a' },
      { namespacePrefix: ['alice'], limit: 10, offset: 0 },
      { matchConditions: undefined, limit: 10, offset: 0 },
      { namespace: ['alice'], key: 'a', value: null },
      { namespace: ['alice'], key: 'a' },
    ] as const);
    expect(results[0]).toBeUndefined();
    expect(results[1]?.value).toEqual({ n: 1 });
    expect(keysOf(results[2] as Item[])).toEqual(['a']);
    expect(results[3]).toEqual([['alice']]);
    expect(results[5]).toBeNull();
  });

  it('checks every operation of a batch before it runs any: one refused operation writes nothing', async () => {
    const deepValue = (levels: number) => {
      const root: Record<string, unknown> = {};
      let level = root;
      for (let depth = 0; depth < levels; depth++) level = (level.a = {}) as Record<string, unknown>;
      return root;
    };
    const { store, memory } = storeRig();
    await store.put(['alice'], 'kept', { n: 0 });
    const valid = [
      { namespace: ['alice'], key: 'k', value: { n: 1 } },
      { namespace: ['alice'], key: 'kept', value: null },
      { namespace: ['alice'], key: 'kept' },
    ];
    const refused: Array<[object, string]> = [
      [{ namespace: ['a.b'], key: 'k', value: { n: 2 } }, 'INVALID_INPUT'],
      [{ namespace: [' '], key: 'k', value: { n: 2 } }, 'INVALID_SCOPE'],
      [{ namespace: ['alice'], key: 7, value: { n: 2 } }, 'INVALID_INPUT'],
      [{ namespace: ['alice'], key: 'k', value: { n: 2n } }, 'INVALID_INPUT'],
      [{ namespace: ['alice'], key: 'k', value: ['not', 'an', 'object'] }, 'INVALID_INPUT'],
      [{ namespace: ['a:b'], key: 'k' }, 'INVALID_INPUT'],
      [{ namespace: ['alice'], key: { not: 'a key' } }, 'INVALID_INPUT'],
      [{ namespacePrefix: ['alice'], limit: -1 }, 'INVALID_INPUT'],
      [{ namespacePrefix: ['tab\there'] }, 'INVALID_SCOPE'],
      [{ matchConditions: [{ matchType: 'prefix', path: ['a.b'] }] }, 'INVALID_INPUT'],
      // What memloom itself would refuse at the add: a value nesting past its metadata's 64 levels, an index that is no list.
      [{ namespace: ['alice'], key: 'k', value: deepValue(70) }, 'INVALID_INPUT'],
      [{ namespace: ['alice'], key: 'k', value: { n: 2 }, index: 'text' }, 'INVALID_INPUT'],
    ];
    for (const [index, [operation, code]] of refused.entries()) {
      const error = await errorOf(store.batch([...valid, operation] as never));
      expect(error.code, `refused operation ${index}`).toBe(code);
      if (code === 'INVALID_INPUT') expect(error.backend, `refused operation ${index}`).toBe('langgraph-store');
      expect(await store.get(['alice'], 'k'), `refused operation ${index}`).toBeNull();
      expect((await store.get(['alice'], 'kept'))?.value).toEqual({ n: 0 });
      expect(await memory.count()).toBe(1);
    }
    // As LangGraph's InMemoryStore does.
    const theirs = new InMemoryStore();
    await expect(theirs.batch([valid[0]!, { namespace: ['a.b'], key: 'k', value: { n: 2 } }])).rejects.toThrow();
    expect(await theirs.get(['alice'], 'k')).toBeNull();
  });
});

describe('MemloomStore: an item’s history is read only when its memory changed behind the store', () => {
  /** A store of category 'fact' (whose items may take in other writers' content), counting reads of history. */
  function factRig() {
    const parts = rig();
    const store = new MemloomStore(parts.memory, { category: 'fact', fields: ['text'] });
    const historyReads = vi.spyOn(parts.memory, 'history');
    const itemMemory = async (key: string) => {
      const records = await parts.memory.list({ filter: { tags: ['langgraph-item'], metadata: { lgKey: key } } });
      expect(records).toHaveLength(1);
      return records[0]!;
    };
    const plainMemories = async () =>
      (await parts.memory.list({ scope: { userId: 'alice' } })).filter((record) => !record.tags.includes('langgraph-item'));
    return { ...parts, store, historyReads, itemMemory, plainMemories };
  }

  it('puts and deletes an item it alone writes without reading the history, however long it is', async () => {
    const { store, memory, clock, historyReads, itemMemory } = factRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'tea 0' });
    const { id } = await itemMemory('drink');
    for (let n = 1; n < 30; n++) {
      clock.advance(1000);
      await store.put(['alice', 'prefs'], 'drink', { text: `tea ${n}` });
    }
    expect(historyReads).not.toHaveBeenCalled();
    expect(await itemMemory('drink')).toMatchObject({ id, revision: 30, content: 'tea 29' });
    expect((await store.get(['alice', 'prefs'], 'drink'))?.value).toEqual({ text: 'tea 29' });
    await store.delete(['alice', 'prefs'], 'drink');
    expect(historyReads).not.toHaveBeenCalled();
    expect(await memory.count()).toBe(0);
  });

  it('after a memory.update behind its back, reads the history once, keeps the memory (a manual edit is no other content), and marks it again', async () => {
    const { store, memory, historyReads, itemMemory, plainMemories } = factRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea' });
    const { id } = await itemMemory('drink');
    await memory.update(id, { content: 'green tea, edited by hand' });
    await store.put(['alice', 'prefs'], 'drink', { text: 'black tea' });
    expect(historyReads).toHaveBeenCalledTimes(1);
    expect(await itemMemory('drink')).toMatchObject({ id, content: 'black tea' });
    await store.put(['alice', 'prefs'], 'drink', { text: 'coffee' });
    await store.delete(['alice', 'prefs'], 'drink');
    expect(historyReads).toHaveBeenCalledTimes(1);
    expect(await memory.count()).toBe(0);
    expect(await plainMemories()).toEqual([]);
  });

  it('releases a memory a user’s statement was merged into, though the merge kept the item’s metadata and mark', async () => {
    const { store, memory, historyReads, itemMemory, plainMemories } = factRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink green tea every morning' });
    const item = await itemMemory('drink');
    const merged = await memory.add('I drink green tea every morning.', { scope: { userId: 'alice' }, category: 'fact' });
    expect(merged.decision.strategy).toBe('merge_update');
    expect(merged.memory).toMatchObject({ id: item.id, metadata: item.metadata });

    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink coffee now' });
    expect(historyReads).toHaveBeenCalledTimes(1);
    const [released] = await plainMemories();
    expect(released).toMatchObject({ id: item.id, content: merged.memory.content });
    expect(Object.keys(released!.metadata).filter((key) => key.startsWith('lg'))).toEqual([]);
    const fresh = await itemMemory('drink');
    expect(fresh.id).not.toBe(item.id);
    expect(fresh.content).toBe('I drink coffee now');
    // The item's new memory holds only its own writes: no more reads.
    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink water now' });
    expect(historyReads).toHaveBeenCalledTimes(1);
    expect((await itemMemory('drink')).id).toBe(fresh.id);
  });

  it('releases, not overwrites, a statement merged into the item between a put’s read and its write (put and delete)', async () => {
    const { store, memory, itemMemory, plainMemories } = factRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink green tea every morning' });
    await store.put(['alice', 'prefs'], 'food', { text: 'I eat rice for lunch every day' });
    const drink = await itemMemory('drink');
    const food = await itemMemory('food');
    // The user's statement lands after the store read the item's memory (unchanged since its own write) and before it writes.
    const mergeFirst = (statement: string) => async () => {
      const merged = await memory.add(statement, { scope: { userId: 'alice' }, category: 'fact' });
      expect(merged.decision.strategy).toBe('merge_update');
      return merged.memory.content;
    };
    const update = memory.update.bind(memory);
    const remove = memory.delete.bind(memory);
    let mergedDrink = '';
    let mergedFood = '';
    vi.spyOn(memory, 'update').mockImplementationOnce(async (...args) => {
      mergedDrink = await mergeFirst('I drink green tea every morning.')();
      return update(...args);
    });
    vi.spyOn(memory, 'delete').mockImplementationOnce(async (...args) => {
      mergedFood = await mergeFirst('I eat rice for lunch every day.')();
      return remove(...args);
    });

    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink coffee now' });
    await store.delete(['alice', 'prefs'], 'food');
    expect((await plainMemories()).map((record) => [record.id, record.content]).sort()).toEqual(
      [
        [drink.id, mergedDrink],
        [food.id, mergedFood],
      ].sort(),
    );
    const fresh = await itemMemory('drink');
    expect(fresh.id).not.toBe(drink.id);
    expect(fresh.content).toBe('I drink coffee now');
    expect((await store.get(['alice', 'prefs'], 'drink'))?.value).toEqual({ text: 'I drink coffee now' });
    expect(await store.get(['alice', 'prefs'], 'food')).toBeNull();
  });

  it('releases a memory a model’s UPDATE rewrote (an extraction edit), on put and on delete', async () => {
    const { store, memory, historyReads, itemMemory, plainMemories } = factRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea' });
    await store.put(['alice', 'prefs'], 'food', { text: 'rice' });
    const drink = await itemMemory('drink');
    const food = await itemMemory('food');
    await memory.update(drink.id, { content: 'Alice drinks green tea, the model says' }, { trigger: 'extraction' });
    await memory.update(food.id, { content: 'Alice eats rice, the model says' }, { trigger: 'extraction' });

    await store.put(['alice', 'prefs'], 'drink', { text: 'coffee' });
    await store.delete(['alice', 'prefs'], 'food');
    expect(historyReads).toHaveBeenCalledTimes(2);
    expect((await plainMemories()).map((record) => [record.id, record.content]).sort()).toEqual(
      [
        [drink.id, 'Alice drinks green tea, the model says'],
        [food.id, 'Alice eats rice, the model says'],
      ].sort(),
    );
    expect((await itemMemory('drink')).id).not.toBe(drink.id);
    expect(await store.get(['alice', 'prefs'], 'food')).toBeNull();
    await store.put(['alice', 'prefs'], 'drink', { text: 'water' });
    expect(historyReads).toHaveBeenCalledTimes(2);
  });

  it('reads the history of a memory written before the mark existed once, then marks it', async () => {
    const { store, memory, historyReads, itemMemory } = factRig();
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea' });
    // As an earlier version of the store left it: the same memory without the mark.
    const { lgRevision, ...unmarked } = (await itemMemory('drink')).metadata;
    expect(lgRevision).toBe(1);
    await memory.deleteAll({ userId: 'alice' });
    const legacy = await memory.add('green tea', { scope: { userId: 'alice' }, category: 'fact', source: 'system', tags: ['langgraph-item'], metadata: unmarked, merge: false });

    for (const text of ['black tea', 'coffee', 'water']) await store.put(['alice', 'prefs'], 'drink', { text });
    expect(historyReads).toHaveBeenCalledTimes(1);
    expect(await itemMemory('drink')).toMatchObject({ id: legacy.memory.id, content: 'water', revision: 4, metadata: { lgRevision: 4 } });
  });

  it('is not marked by a system store that writes it without looking, so a later put still finds the other content', async () => {
    const { store, memory, historyReads, itemMemory, plainMemories } = factRig();
    const systemStore = new MemloomStore(memory, { fields: ['text'] });
    await store.put(['alice', 'prefs'], 'drink', { text: 'green tea' });
    const { id } = await itemMemory('drink');
    await memory.update(id, { content: 'Alice drinks green tea, the model says' }, { trigger: 'extraction' });
    // A system store never looks at history: it updates the memory in place, as before.
    await systemStore.put(['alice', 'prefs'], 'drink', { text: 'black tea' });
    expect(await itemMemory('drink')).toMatchObject({ id, content: 'black tea' });
    expect((await itemMemory('drink')).metadata).not.toHaveProperty('lgRevision');

    await store.put(['alice', 'prefs'], 'drink', { text: 'coffee' });
    expect((await plainMemories()).map((record) => record.id)).toEqual([id]);
    const fresh = await itemMemory('drink');
    expect(fresh.id).not.toBe(id);
    // A system store keeps the mark of a memory it finds unchanged, so the fact store reads no more history.
    await systemStore.put(['alice', 'prefs'], 'drink', { text: 'water' });
    await store.put(['alice', 'prefs'], 'drink', { text: 'juice' });
    expect(historyReads).toHaveBeenCalledTimes(1);
    expect(await itemMemory('drink')).toMatchObject({ id: fresh.id, content: 'juice' });
  });
});

describe('MemloomStore: search', () => {
  async function seeded() {
    const parts = storeRig();
    const { store, clock } = parts;
    await store.put(['alice', 'memories'], 'm1', { text: 'Alice drinks green tea every morning', kind: 'habit', score: 3 });
    clock.advance(1000);
    await store.put(['alice', 'memories'], 'm2', { text: 'Alice plays chess on Tuesdays', kind: 'hobby', score: 5 });
    clock.advance(1000);
    await store.put(['alice', 'projects'], 'p1', { text: 'Alice is writing a book about tea', kind: 'project', score: 8 });
    clock.advance(1000);
    await store.put(['alicex'], 'x1', { text: 'someone else entirely drinks tea' });
    await store.put(['bob', 'memories'], 'b1', { text: 'Bob drinks green tea too', kind: 'habit', score: 4 });
    return parts;
  }

  it('matches namespace prefixes label by label, newest first without a query', async () => {
    const { store } = await seeded();
    expect(keysOf(await store.search(['alice']))).toEqual(['p1', 'm2', 'm1']);
    expect(keysOf(await store.search(['alice', 'memories']))).toEqual(['m2', 'm1']);
    expect(keysOf(await store.search(['bob']))).toEqual(['b1']);
    expect((await store.search([])).map((item) => item.key).sort()).toEqual(['b1', 'm1', 'm2', 'p1', 'x1']);
    expect(await store.search(['carol'])).toEqual([]);
    expect((await store.search(['alice']))[0]?.score).toBeUndefined();
  });

  it('filters on value fields, exactly or with comparison operators', async () => {
    const { store } = await seeded();
    expect(keysOf(await store.search(['alice'], { filter: { kind: 'habit' } }))).toEqual(['m1']);
    expect(keysOf(await store.search([], { filter: { kind: 'habit' } })).sort()).toEqual(['b1', 'm1']);
    expect(keysOf(await store.search(['alice'], { filter: { score: { $gt: 4 } } }))).toEqual(['p1', 'm2']);
    expect(keysOf(await store.search(['alice'], { filter: { score: { $gte: 3, $lt: 8 } } }))).toEqual(['m2', 'm1']);
    expect(keysOf(await store.search(['alice'], { filter: { kind: { $ne: 'hobby' } } }))).toEqual(['p1', 'm1']);
    expect(keysOf(await store.search(['alice'], { filter: { kind: { $in: ['hobby', 'project'] } } }))).toEqual(['p1', 'm2']);
    expect(keysOf(await store.search(['alice'], { filter: { kind: { $nin: ['hobby', 'project'] } } }))).toEqual(['m1']);
    expect(keysOf(await store.search(['alice'], { filter: { kind: 'habit', score: 4 } }))).toEqual([]);
  });

  it('pages with limit (default 10) and offset', async () => {
    const { store } = storeRig();
    for (let index = 0; index < 14; index++) await store.put(['alice', 'notes'], `n${String(index).padStart(2, '0')}`, { text: `note ${index}` });
    expect(await store.search(['alice'])).toHaveLength(10);
    const all = keysOf(await store.search(['alice'], { limit: 100 }));
    expect(all).toHaveLength(14);
    expect(keysOf(await store.search(['alice'], { limit: 5, offset: 5 }))).toEqual(all.slice(5, 10));
    expect(keysOf(await store.search(['alice'], { limit: 5, offset: 12 }))).toEqual(all.slice(12));
    expect(keysOf(await store.search(['alice'], { query: 'note', limit: 4, offset: 2 }))).toEqual(
      keysOf(await store.search(['alice'], { query: 'note', limit: 6 })).slice(2),
    );
  });

  it('returns items put in the same millisecond newest first, in write order', async () => {
    const { store, clock } = storeRig();
    // 60 items: more than a search's first read (limit + offset + 16), so it must read on past the ties.
    const keys = Array.from({ length: 60 }, (_, index) => `k${String(index).padStart(2, '0')}`);
    for (const key of keys) await store.put(['alice', 'notes'], key, { text: `note ${key}`, even: Number(key.slice(1)) % 2 === 0 });
    const newestFirst = [...keys].reverse();
    expect(keysOf(await store.search(['alice'], { limit: 60 }))).toEqual(newestFirst);
    expect(keysOf(await store.search(['alice'], { limit: 5, offset: 5 }))).toEqual(newestFirst.slice(5, 10));
    expect(keysOf(await store.search(['alice'], { limit: 60, filter: { even: true } }))).toEqual(newestFirst.filter((key) => Number(key.slice(1)) % 2 === 0));
    // A later put moves an item to the front, in the same millisecond too; updatedAt still comes first.
    await store.put(['alice', 'notes'], 'k03', { text: 'note k03 again' });
    expect(keysOf(await store.search(['alice'], { limit: 3 }))).toEqual(['k03', 'k59', 'k58']);
    clock.advance(-1000);
    await store.put(['alice', 'notes'], 'k10', { text: 'written with an earlier clock' });
    expect(keysOf(await store.search(['alice'], { limit: 60 })).at(-1)).toBe('k10');
    // A newer item ends the read early: the first read holds it and an older one.
    clock.advance(2000);
    await store.put(['alice', 'notes'], 'k20', { text: 'the newest' });
    expect(keysOf(await store.search(['alice'], { limit: 2 }))).toEqual(['k20', 'k03']);
  });

  it('reads on when older copies of an item (an interrupted writer’s) leave a ranked page short', async () => {
    const { store, memory, clock } = storeRig();
    await store.put(['alice'], 'drink', { text: 'green tea' });
    await store.put(['alice'], 'food', { text: 'rice' });
    const [record] = await memory.list({ filter: { metadata: { lgKey: 'drink' } } });
    clock.advance(-60_000);
    await memory.add(record!.content, { scope: record!.scope, category: 'system', tags: record!.tags, metadata: { ...record!.metadata, lgSeq: 0 }, merge: false });
    clock.advance(60_000);
    expect(await memory.count()).toBe(3);
    expect(keysOf(await store.search(['alice'], { query: 'green tea', limit: 2 }))).toEqual(['drink', 'food']);
  });

  it('cuts a query longer than maxContentLength to its start, as it cuts an item’s text', async () => {
    const { store, memory } = storeRig();
    await store.put(['alice'], 'v', { text: 'volcano hiking in Iceland' });
    await store.put(['alice'], 's', { text: 'sailing on the fjord' });
    const limit = memory.config.limits.maxContentLength;
    expect(await store.search(['alice'], { query: 'x'.repeat(limit + 1) })).toBeDefined();
    const [best] = await store.search(['alice'], { query: `volcano hiking ${'x'.repeat(limit * 2)}` });
    expect(best?.key).toBe('v');
    expect(best?.score).toBeGreaterThan(0);
  });

  it('never cuts an item’s text or a query through an emoji (no U+FFFD in its place)', async () => {
    const { store, memory } = storeRig();
    const limit = memory.config.limits.maxContentLength;
    // The cut falls between the two halves of the emoji: it ends before it instead.
    const text = `${'a'.repeat(limit - 1)}😀 and more`;
    await store.put(['alice'], 'long', { text }, ['text']);
    const [record] = await memory.list({ filter: { metadata: { lgKey: 'long' } } });
    expect(record?.content).toBe('a'.repeat(limit - 1));
    const search = vi.spyOn(memory, 'search');
    await store.search(['alice'], { query: text });
    expect(search.mock.calls[0]?.[0]).toBe('a'.repeat(limit - 1));
  });

  it('ranks by memloom retrieval with a query, with scores, inside the prefix', async () => {
    const { store } = await seeded();
    const results = await store.search(['alice'], { query: 'green tea in the morning' });
    expect(results[0]?.key).toBe('m1');
    expect(results.map((item) => item.key)).not.toContain('x1');
    expect(results.map((item) => item.key)).not.toContain('b1');
    const scores = results.map((item) => item.score as number);
    expect(scores.every((score) => score > 0 && score <= 1)).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(keysOf(await store.search(['alice'], { query: 'tea', filter: { kind: 'project' } }))).toEqual(['p1']);
  });

  it('gives an item the same score with a value filter as without', async () => {
    const { store } = storeRig();
    await store.put(['alice'], 'lava', { text: 'volcano volcano lava volcano', kind: 'fact' });
    await store.put(['alice'], 'trip', { text: 'a volcano trip', kind: 'plan' });
    await store.put(['alice'], 'lake', { text: 'a swim in the lake', kind: 'plan' });
    const everything = await store.search(['alice'], { query: 'volcano' });
    const plans = await store.search(['alice'], { query: 'volcano', filter: { kind: 'plan' } });
    expect(keysOf(plans)).toEqual(keysOf(everything).filter((key) => key !== 'lava'));
    for (const item of plans) expect(item.score).toBeCloseTo(everything.find((other) => other.key === item.key)!.score!, 9);
  });

  it('answers a query with a value filter in one search, without listing the prefix, when the items that pass fill the page', async () => {
    const { store, memory } = storeRig();
    await store.put(['alice'], 'lava', { text: 'volcano volcano lava volcano', kind: 'fact' });
    await store.put(['alice'], 'trip', { text: 'a volcano trip', kind: 'plan' });
    await store.put(['alice'], 'hike', { text: 'a volcano hike', kind: 'plan' });
    await store.put(['alice'], 'lake', { text: 'a swim in the lake', kind: 'plan' });
    const search = vi.spyOn(memory, 'search');
    const list = vi.spyOn(memory, 'list');
    const plans = await store.search(['alice'], { query: 'volcano', filter: { kind: 'plan' }, limit: 2 });
    expect(keysOf(plans).sort()).toEqual(['hike', 'trip']);
    expect(search).toHaveBeenCalledTimes(1);
    expect(list).not.toHaveBeenCalled();
  });

  it('re-checks the value filter on what the ranking returns: an item changed after the listing is left out', async () => {
    const parts = rig();
    const writer = new MemloomStore(parts.memory);
    await writer.put(['alice', 'tasks'], 't1', { text: 'renew the passport', status: 'open' });
    await writer.put(['alice', 'tasks'], 't2', { text: 'book the passport photo', status: 'open' });
    const search = parts.memory.search.bind(parts.memory);
    let armed = true;
    vi.spyOn(parts.memory, 'search').mockImplementation(async (query, options) => {
      // A ranking restricted to the listed items (`filter.ids`): another writer closes t1 first.
      if (armed && options?.filter?.ids) {
        armed = false;
        await writer.put(['alice', 'tasks'], 't1', { text: 'renew the passport', status: 'done' });
      }
      return search(query, options);
    });
    // A page past the 1,000 best lists the prefix, then ranks what passes the filter.
    const results = await new MemloomStore(parts.memory).search(['alice'], { query: 'passport', filter: { status: 'open' }, limit: 1001 });
    expect(armed).toBe(false);
    expect(results.map((item) => [item.key, item.value.status])).toEqual([['t2', 'open']]);
  });

  it("returns every matching item with a query, whatever the memory's retrieval.minScore", async () => {
    const { memory } = rig({}, { retrieval: { minScore: 0.3 } });
    const store = new MemloomStore(memory);
    await store.put(['alice', 'docs'], 'a', { text: 'green tea' });
    await store.put(['alice', 'docs'], 'b', { text: 'mountain bike repair' });
    await store.put(['alice', 'docs'], 'c', { text: 'not indexed' }, false);
    const results = await store.search(['alice', 'docs'], { query: 'green tea' });
    expect(keysOf(results)).toEqual(['a', 'b', 'c']);
    expect(results[1]?.score).toBeTypeOf('number');
  });

  it('indexes the fields asked for, and puts unindexed items after the ranked ones', async () => {
    const parts = storeRig();
    const store = new MemloomStore(parts.memory, { fields: ['text'] });
    await store.put(['alice'], 'a', { text: 'sailing on the fjord', secret: 'volcano' });
    await store.put(['alice'], 'b', { text: 'volcano hiking' });
    await store.put(['alice'], 'c', { title: 'volcano' }, false);
    await store.put(['alice'], 'd', { body: 'volcano notes', text: 'unrelated' }, ['body']);
    const results = await store.search(['alice'], { query: 'volcano' });
    expect(results.slice(0, 2).map((item) => item.key).sort()).toEqual(['b', 'd']);
    expect(results.at(-1)).toMatchObject({ key: 'c', score: undefined });
    const [b] = await parts.memory.list({ filter: { metadata: { lgKey: 'b' } } });
    expect(b?.content).toBe('volcano hiking');
  });

  it('indexes LangGraph field sets and wildcards ({a,b}, a.*, list[*].x) as LangGraph reads them', async () => {
    const parts = storeRig();
    const { store, memory } = parts;
    await store.put(['alice'], 'set', { title: 'volcano trip', body: 'lava fields', other: 'chess' }, ['{title,body}']);
    await store.put(['alice'], 'star', { meta: { x: 'volcano eruption', y: 'ash' }, other: 'chess' }, ['meta.*']);
    await store.put(['alice'], 'nested', { body: { a: 'volcano crater', b: 'rim' } }, ['body.{a,b}']);
    await store.put(['alice'], 'list', { stops: [{ city: 'volcano town' }, { city: 'Reykjavik' }] }, ['stops[*].city', 'stops[-1].city']);
    await store.put(['alice'], 'plain', { text: 'chess openings' }, ['text']);
    const contents = Object.fromEntries((await memory.list()).map((record) => [record.metadata.lgKey, [record.content, record.metadata.lgIndexed]]));
    expect(contents).toEqual({
      set: ['volcano trip\nlava fields', true],
      star: ['volcano eruption\nash', true],
      nested: ['volcano crater\nrim', true],
      list: ['volcano town\nReykjavik\nReykjavik', true],
      plain: ['chess openings', true],
    });
    const results = await store.search(['alice'], { query: 'volcano' });
    expect(keysOf(results.slice(0, 4)).sort()).toEqual(['list', 'nested', 'set', 'star']);
    expect(results.slice(0, 4).every((item) => typeof item.score === 'number' && item.score > 0)).toBe(true);
  });
});

describe('MemloomStore: search with a query past the 1,000 items one memloom search ranks', () => {
  /**
   * Writing 1,100 items and ranking them all takes a few seconds, more on a loaded machine (a clean
   * clone runs every package's tests at once): past vitest's 5 s default, which counts the first
   * test's share of the writing.
   */
  const CROWDED_TIMEOUT_MS = 60_000;
  /** 1,100 ranked items: 1,095 documents about topics and 5 notes about a volcano (written first); and 2 unindexed volcano notes. Searches only read it. */
  let shared: Promise<ReturnType<typeof storeRig>> | undefined;
  const crowded = () => (shared ??= fill());
  async function fill() {
    const parts = storeRig();
    const documents = Array.from({ length: 1095 }, (_, index) => ({
      namespace: ['alice', 'docs'],
      key: `d${index}`,
      value: { text: `document number ${index} about topic ${index % 7}`, volcano: false },
    }));
    const notes = Array.from({ length: 5 }, (_, index) => ({ namespace: ['alice', 'docs'], key: `v${index}`, value: { text: `volcano ash cloud ${index}`, volcano: true } }));
    await parts.store.batch([...notes, ...documents]);
    await parts.store.put(['alice', 'docs'], 'u0', { text: 'volcano notes, not indexed', volcano: true }, false);
    await parts.store.put(['alice', 'docs'], 'u1', { text: 'more volcano notes, not indexed', volcano: true }, false);
    return parts;
  }
  const QUERY = 'document topic';
  /** Every item for QUERY, in two pages of 1,000: the first one search, the second ranked 1,000 items at a time. */
  async function everyItem(store: BaseStore) {
    return [...(await store.search(['alice'], { query: QUERY, limit: 1000 })), ...(await store.search(['alice'], { query: QUERY, offset: 1000, limit: 1000 }))];
  }
  const ranked = (item: Item & { score?: number }) => [item.key, item.score];

  it('answers a value filter whose items all rank among the 1,000 best, then the unindexed ones', async () => {
    const { store } = await crowded();
    const results = await store.search(['alice'], { query: 'volcano ash cloud', filter: { volcano: true } });
    expect(keysOf(results.slice(0, 5)).sort()).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    expect(results.slice(0, 5).every((item) => typeof item.score === 'number')).toBe(true);
    expect(results.slice(5)).toMatchObject([
      { key: 'u1', score: undefined },
      { key: 'u0', score: undefined },
    ]);
  }, CROWDED_TIMEOUT_MS);

  it('ranks every item of the prefix: pages past the 1,000 best continue the ranking, then the unindexed items', async () => {
    const { store, memory } = await crowded();
    const all = await everyItem(store);
    expect(all).toHaveLength(1102);
    expect(new Set(keysOf(all)).size).toBe(1102);
    const scores = all.slice(0, 1100).map((item) => item.score as number);
    expect(scores.every((score) => typeof score === 'number')).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // The volcano notes match no word of the query: they rank last, then come the unindexed items.
    expect(keysOf(all.slice(1095, 1100)).sort()).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    expect(all.slice(1100)).toMatchObject([
      { key: 'u1', score: undefined },
      { key: 'u0', score: undefined },
    ]);
    // A page across the 1,000th place, and one that ends past the last item.
    expect((await store.search(['alice'], { query: QUERY, offset: 995, limit: 10 })).map(ranked)).toEqual(all.slice(995, 1005).map(ranked));
    expect((await store.search(['alice'], { query: QUERY, offset: 1097, limit: 10 })).map(ranked)).toEqual(all.slice(1097).map(ranked));
    expect(await store.search(['alice'], { query: QUERY, offset: 2000 })).toEqual([]);
    // Ranked 1,000 at a time (a value filter that leaves out the best item, so the 999 others of one search fall short of
    // the page), the best 1,000 are those of one search, with the same scores.
    const search = vi.spyOn(memory, 'search');
    try {
      const chunked = await store.search(['alice'], { query: QUERY, limit: 1000, filter: { text: { $ne: all[0]!.value.text } } });
      expect(search.mock.calls.filter(([, options]) => options?.filter?.ids).map(([, options]) => options?.filter?.ids?.length)).toEqual([1000, 99]);
      expect(chunked.map(ranked)).toEqual(all.slice(1, 1001).map(ranked));
    } finally {
      search.mockRestore();
    }
  }, CROWDED_TIMEOUT_MS);

  it('applies a value filter before ranking, like LangGraph’s InMemoryStore: items ranked below the 1,000 best are found, in rank order', async () => {
    const { store } = await crowded();
    // The volcano notes rank last for this query: none is among the 1,000 best. (This returned no item, then NOT_SUPPORTED.)
    const filtered = await store.search(['alice'], { query: QUERY, filter: { volcano: true } });
    const volcanoNotes = (await everyItem(store)).filter((item) => item.value.volcano === true);
    expect(filtered.map(ranked)).toEqual(volcanoNotes.map(ranked));
    expect(keysOf(filtered)).toHaveLength(7);
    expect(keysOf(filtered.slice(5))).toEqual(['u1', 'u0']);
    expect(keysOf(await store.search(['alice'], { query: QUERY, filter: { volcano: true }, offset: 3, limit: 3 }))).toEqual(keysOf(filtered.slice(3, 6)));
    // Without a query, every item is read.
    expect(keysOf(await store.search(['alice'], { filter: { volcano: true } })).sort()).toEqual(['u0', 'u1', 'v0', 'v1', 'v2', 'v3', 'v4']);
  }, CROWDED_TIMEOUT_MS);
});

describe('MemloomStore: listNamespaces', () => {
  it('lists namespaces by prefix, suffix and wildcard, to a depth, paged and sorted', async () => {
    const { store } = storeRig();
    await store.put(['alice', 'memories'], 'k', { a: 1 });
    await store.put(['alice', 'projects', 'v1'], 'k', { a: 1 });
    await store.put(['alice', 'projects', 'v2'], 'k', { a: 1 });
    await store.put(['bob', 'memories'], 'k', { a: 1 });
    await store.put(['bob', 'projects', 'v1'], 'k', { a: 1 });

    expect(await store.listNamespaces()).toEqual([
      ['alice', 'memories'],
      ['alice', 'projects', 'v1'],
      ['alice', 'projects', 'v2'],
      ['bob', 'memories'],
      ['bob', 'projects', 'v1'],
    ]);
    expect(await store.listNamespaces({ prefix: ['alice'] })).toEqual([
      ['alice', 'memories'],
      ['alice', 'projects', 'v1'],
      ['alice', 'projects', 'v2'],
    ]);
    expect(await store.listNamespaces({ suffix: ['v1'] })).toEqual([
      ['alice', 'projects', 'v1'],
      ['bob', 'projects', 'v1'],
    ]);
    expect(await store.listNamespaces({ prefix: ['*', 'memories'] })).toEqual([
      ['alice', 'memories'],
      ['bob', 'memories'],
    ]);
    expect(await store.listNamespaces({ prefix: ['alice'], suffix: ['v2'] })).toEqual([['alice', 'projects', 'v2']]);
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ['alice', 'memories'],
      ['alice', 'projects'],
      ['bob', 'memories'],
      ['bob', 'projects'],
    ]);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([['alice'], ['bob']]);
    expect(await store.listNamespaces({ limit: 2, offset: 1 })).toEqual([
      ['alice', 'projects', 'v1'],
      ['alice', 'projects', 'v2'],
    ]);
    await store.delete(['bob', 'memories'], 'k');
    expect(await store.listNamespaces({ prefix: ['bob'] })).toEqual([['bob', 'projects', 'v1']]);
  });

  it('answers like LangGraph’s own InMemoryStore for the same operations', async () => {
    const ours = storeRig().store;
    const theirs = new InMemoryStore();
    const run = async (store: BaseStore) => {
      await store.put(['u1', 'a'], 'k1', { text: 'one', n: 1 });
      await store.put(['u1', 'a'], 'k2', { text: 'two', n: 2 });
      await store.put(['u1', 'b', 'c'], 'k3', { text: 'three', n: 3 });
      await store.put(['u2'], 'k4', { text: 'four', n: 4 });
      await store.put(['u1', 'a'], 'k1', { text: 'one again', n: 10 });
      await store.delete(['u1', 'a'], 'k2');
      const sorted = (items: Item[]) => items.map((item) => [item.namespace, item.key, item.value]).sort((a, b) => String(a[1]).localeCompare(String(b[1])));
      return {
        get: [await store.get(['u1', 'a'], 'k1'), await store.get(['u1', 'a'], 'k2'), await store.get(['u1'], 'k1')].map((item) => item && [item.key, item.value]),
        all: sorted(await store.search([])),
        prefix: sorted(await store.search(['u1'])),
        filtered: sorted(await store.search([], { filter: { n: { $gte: 3 } } })),
        namespaces: await store.listNamespaces(),
        depth: await store.listNamespaces({ maxDepth: 1 }),
        suffix: await store.listNamespaces({ suffix: ['c'] }),
      };
    };
    expect(await run(ours)).toEqual(await run(theirs));
  });
});

describe('MemloomStore in LangGraph', () => {
  it('serves createAgent({ store }): tools read and write it through runtime.store', async () => {
    const { store, memory } = storeRig();
    const save = tool(
      async ({ fact }, runtime: ToolRuntime) => {
        await (runtime.store as unknown as BaseStore).put(['alice', 'facts'], 'f1', { text: fact });
        return 'saved';
      },
      { name: 'save_fact', description: 'save', schema: z.object({ fact: z.string() }) },
    );
    const recall = tool(
      async ({ query }, runtime: ToolRuntime) => {
        const found = await (runtime.store as unknown as BaseStore).search(['alice'], { query });
        return found.map((item) => String(item.value.text)).join('; ');
      },
      { name: 'recall', description: 'recall', schema: z.object({ query: z.string() }) },
    );
    const model = fakeModel()
      .respondWithTools([{ name: 'save_fact', args: { fact: 'Alice was born in Porto' } }])
      .respondWithTools([{ name: 'recall', args: { query: 'where was Alice born' } }])
      .respond(new AIMessage('Porto.'));
    const agent = createAgent({ model, tools: [save, recall], store });
    const result = await agent.invoke({ messages: [new HumanMessage('Where was I born?')] });
    expect(result.messages.map((message) => message.content)).toContain('Alice was born in Porto');
    expect((await memory.list({ scope: { userId: 'alice' } }))[0]?.content).toBe(JSON.stringify({ text: 'Alice was born in Porto' }, null, 2));
  });

  it("with category 'fact', a user's statement merged into an item survives the item's next put and its delete", async () => {
    const { memory } = rig();
    const store = new MemloomStore(memory, { category: 'fact', fields: ['text'] });
    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink green tea every morning' });
    // The middleware records what the user said; core merges it into the item, its nearest fact.
    const agent = createAgent({ model: fakeModel().respond(new AIMessage('Nice.')).respond(new AIMessage('Noted.')), tools: [], middleware: [createMemloomMiddleware(memory, { model: null })] });
    await agent.invoke({ messages: [new HumanMessage('I drink green tea every morning.')] }, { context: { userId: 'alice' } });
    const userFacts = async () =>
      (await memory.list({ scope: { userId: 'alice' }, filter: { category: 'fact' } })).filter((record) => !record.tags.includes('langgraph-item')).map((record) => record.content);

    await store.put(['alice', 'prefs'], 'drink', { text: 'I drink coffee now' });
    expect(await userFacts()).toEqual(['I drink green tea every morning.']);
    expect(await store.get(['alice', 'prefs'], 'drink')).toMatchObject({ value: { text: 'I drink coffee now' } });
    expect((await memory.list({ filter: { tags: ['langgraph-item'] } })).map((record) => record.content)).toEqual(['I drink coffee now']);

    // Merged into again, then deleted: the user's statement stays.
    await agent.invoke({ messages: [new HumanMessage('I drink coffee now.')] }, { context: { userId: 'alice' } });
    await store.delete(['alice', 'prefs'], 'drink');
    expect(await store.get(['alice', 'prefs'], 'drink')).toBeNull();
    expect((await userFacts()).sort()).toEqual(['I drink coffee now.', 'I drink green tea every morning.']);
    const released = await memory.list({ scope: { userId: 'alice' }, filter: { category: 'fact' } });
    expect(released.flatMap((record) => Object.keys(record.metadata)).filter((key) => key.startsWith('lg'))).toEqual([]);
  });

  it('maps namespaces to scopes as configured, and items survive a new Memory over the same store', async () => {
    const parts = rig();
    const store = new MemloomStore(parts.memory, { scopeFromNamespace: (namespace) => ({ userId: namespace[1] }) });
    await store.put(['memories', 'alice'], 'k', { text: 'hello' });
    await store.put(['memories', 'bob'], 'k', { text: 'hi' });
    expect((await parts.memory.list({ scope: { userId: 'alice' } })).map((record) => record.metadata.lgKey)).toEqual(['k']);
    expect(keysOf(await store.search(['memories']))).toHaveLength(2);
    expect((await store.search(['memories', 'bob'])).map((item) => item.value)).toEqual([{ text: 'hi' }]);

    const reopened = new MemloomStore(createMemory({ store: parts.store, embedder: parts.embedder, clock: parts.clock }), {
      scopeFromNamespace: (namespace) => ({ userId: namespace[1] }),
    });
    expect((await reopened.get(['memories', 'alice'], 'k'))?.value).toEqual({ text: 'hello' });
  });

  it('MemloomEmbeddings lets LangGraph’s InMemoryStore index with a memloom embedder', async () => {
    const { embedder } = rig();
    const embeddings = new MemloomEmbeddings(embedder);
    const store = new InMemoryStore({ index: { dims: embeddings.dimension, embeddings } });
    await store.put(['docs'], 'a', { text: 'sailing boats on the fjord' });
    await store.put(['docs'], 'b', { text: 'chess openings for beginners' });
    const [best] = await store.search(['docs'], { query: 'chess openings' });
    expect(best?.key).toBe('b');
  });
});

describe('MemloomStore: mutation audit (paging defaults, offset checks, filter bounds)', () => {
  it('a batch search that gives no limit or offset takes 10 items from the first', async () => {
    const { store } = storeRig();
    for (let index = 0; index < 12; index++) await store.put(['alice'], `n${String(index).padStart(2, '0')}`, { text: `note ${index}` });
    const [listed, ranked] = (await store.batch([{ namespacePrefix: ['alice'] }, { namespacePrefix: ['alice'], query: 'note' }] as never)) as Item[][];
    expect(listed).toHaveLength(10);
    expect(keysOf(listed!)).toEqual(keysOf(await store.search(['alice'], { limit: 10, offset: 0 })));
    expect(ranked).toHaveLength(10);
  });

  it('refuses a negative offset, through search and through a batch, writing nothing', async () => {
    const { store, memory } = storeRig();
    await store.put(['alice'], 'a', { text: 'tea' });
    const error = await errorOf(store.search(['alice'], { offset: -1 }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.backend).toBe('langgraph-store');
    expect(error.message).toContain('limit and offset must be whole numbers of at least 0');
    const batchError = await errorOf(store.batch([{ namespace: ['alice'], key: 'b', value: { n: 1 } }, { namespacePrefix: ['alice'], offset: -2 }] as never));
    expect(batchError.code).toBe('INVALID_INPUT');
    expect(await memory.count()).toBe(1);
  });

  it('compares at the bounds: $gt and $lt leave out an equal value, $gte and $lte keep it', async () => {
    const { store, clock } = storeRig();
    for (const [key, score] of [['low', 3], ['mid', 5], ['high', 8]] as const) {
      await store.put(['alice'], key, { text: `${key} score`, score });
      clock.advance(1000);
    }
    const keysWhere = async (filter: Record<string, unknown>) => keysOf(await store.search(['alice'], { filter })).sort();
    expect(await keysWhere({ score: { $gt: 5 } })).toEqual(['high']);
    expect(await keysWhere({ score: { $gte: 5 } })).toEqual(['high', 'mid']);
    expect(await keysWhere({ score: { $lt: 5 } })).toEqual(['low']);
    expect(await keysWhere({ score: { $lte: 5 } })).toEqual(['low', 'mid']);
  });
});
