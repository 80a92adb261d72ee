import { describe, expect, it } from 'vitest';
import { copyMemories, createMemory, MemloomError, type CopyProgress, type ListQuery, type MemoryChange, type MemoryRecord, type MemoryStore } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';
import { MAX_REPEATED_PAGES } from '../src/store-reads.js';

const DIM = 8;

/** A source Memory with three users' memories, one edited and restored (four versions). */
async function source() {
  const embedder = createTestEmbedder({ dimension: DIM });
  const clock = createFakeClock('2024-03-01T09:00:00.000Z');
  const memory = createMemory({ store: createInMemoryStore(), embedder, clock });
  const contents = ['alice likes tea', 'alice lives in Porto', 'bob plays chess', 'carol runs marathons', 'carol keeps bees'];
  contents.forEach((content, index) => embedder.setVector(content, axisVector(DIM, index)));
  embedder.setVector('alice lives in Lisbon', axisVector(DIM, 6));
  const added = [];
  for (const content of contents) {
    clock.advance(60_000);
    added.push((await memory.add(content, { scope: { userId: content.split(' ')[0]! } })).memory);
  }
  const moved = added[1]!;
  await memory.update(moved.id, { content: 'alice lives in Lisbon' }, { reason: 'moved' });
  await memory.restore(moved.id, 1);
  return { memory, embedder, added, moved };
}

async function snapshot(store: MemoryStore) {
  const records = await store.list({ orderBy: 'id' });
  return Promise.all(
    records.map(async (record) => ({ record, vector: await store.getVector(record.id), history: await store.history(record.id) })),
  );
}

/** Counts apply calls and can fail the n-th one, to stand for a crash or a network failure. */
function watched(store: MemoryStore, failOn?: number): MemoryStore & { applies: number } {
  const wrapper = Object.create(store) as MemoryStore & { applies: number };
  wrapper.applies = 0;
  wrapper.apply = async (changes: readonly MemoryChange[]) => {
    wrapper.applies++;
    if (wrapper.applies === failOn) throw new MemloomError({ code: 'STORE_ERROR', message: 'connection reset' });
    return store.apply(changes);
  };
  return wrapper;
}

describe('copyMemories', () => {
  it('copies records, vectors and whole histories, reporting progress per batch', async () => {
    const { memory, embedder } = await source();
    const target = createInMemoryStore();
    const progress: CopyProgress[] = [];
    const report = await copyMemories({ from: memory, to: target, batchSize: 2, onProgress: (step) => progress.push(step) });

    expect(await snapshot(target)).toEqual(await snapshot(memory.store));
    expect(report).toEqual({ total: 5, done: 5, copied: 5, skipped: 0, replaced: 0 });
    expect(progress.map((step) => step.done)).toEqual([2, 4, 5]);
    expect(progress.every((step) => step.total === 5)).toBe(true);

    // The target works through the facade: search finds, history reads, restore restores.
    const moved = createMemory({ store: target, embedder });
    const [hit] = await moved.search('alice lives in Porto', { scope: { userId: 'alice' }, limit: 1 });
    expect(hit?.memory.content).toBe('alice lives in Porto');
    expect((await moved.history(hit!.memory.id)).map((entry) => entry.action)).toEqual(['create', 'edit', 'restore']);
    expect((await moved.restore(hit!.memory.id, 2)).content).toBe('alice lives in Lisbon');
  });

  it('is idempotent: a second run skips everything and writes nothing', async () => {
    const { memory } = await source();
    const target = watched(createInMemoryStore());
    await copyMemories({ from: memory, to: target });
    const writes = target.applies;
    const again = await copyMemories({ from: memory, to: target });
    expect(again).toEqual({ total: 5, done: 5, copied: 0, skipped: 5, replaced: 0 });
    expect(target.applies).toBe(writes);
  });

  it('resumes after a failure: the rerun copies what is missing and skips what landed', async () => {
    const { memory } = await source();
    const inner = createInMemoryStore();
    const flaky = watched(inner, 2);
    await expect(copyMemories({ from: memory, to: flaky, batchSize: 2 })).rejects.toMatchObject({ code: 'STORE_ERROR' });
    expect(await inner.count({})).toBe(2);

    const report = await copyMemories({ from: memory, to: inner, batchSize: 2, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } });
    expect(report).toMatchObject({ copied: 3, skipped: 2 });
    expect(await snapshot(inner)).toEqual(await snapshot(memory.store));
  });

  it('skips no memory when others are deleted from the source while it copies (the app still running)', async () => {
    const { memory, added } = await source();
    const target = createInMemoryStore();
    const deletions = [added[0]!.id, added[1]!.id];
    const report = await copyMemories({
      from: memory,
      to: target,
      batchSize: 2,
      // After each page lands, someone deletes a memory the copy already has.
      onProgress: () => void memory.store.apply([{ op: 'delete', id: deletions.shift() ?? 'none' }]),
    });
    // Each page starts after the last memory of the one before, wherever that is now. Paged by offset,
    // each would have started one memory further than it should, and the copy would have missed two.
    expect((await target.list({})).map((record) => record.id)).toEqual(added.map((record) => record.id));
    expect(report).toMatchObject({ total: 5, done: 5, copied: 5 });
  });

  it('counts a memory deleted between reading its page and copying it as skipped, not as a corrupt source', async () => {
    const { memory, added } = await source();
    const target = createInMemoryStore();
    const busy = Object.create(memory.store) as MemoryStore;
    busy.list = async (query) => {
      const page = await memory.store.list(query);
      await memory.store.apply([{ op: 'delete', id: added[1]!.id }]);
      return page;
    };
    const report = await copyMemories({ from: busy, to: target, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } });
    expect(report).toEqual({ total: 5, done: 5, copied: 4, skipped: 1, replaced: 0 });
    expect(await target.get(added[1]!.id)).toBeUndefined();
  });

  it.each([
    ['before its vector is read', 'vector'],
    ['between reading its vector and its history', 'history'],
  ] as const)("copies a memory the app updates %s at its new revision, with that revision's vector and every version", async (_when, readFirst) => {
    for (const readMany of [true, false]) {
      const { memory, embedder, added } = await source();
      embedder.setVector('bob plays go', axisVector(DIM, 7));
      const busy = Object.create(memory.store) as MemoryStore;
      Object.defineProperty(busy, 'capabilities', { value: { ...memory.store.capabilities, readMany } });
      let updates = 0;
      // The app edits bob's memory (new content, new vector) after the copy listed it.
      const edited = async <T>(kind: 'vector' | 'history', read: () => Promise<T>): Promise<T> => {
        if (kind === readFirst && updates++ === 0) await memory.update(added[2]!.id, { content: 'bob plays go' }, { reason: 'switched games' });
        return read();
      };
      busy.getVectors = (ids) => edited('vector', () => memory.store.getVectors!(ids));
      busy.getVector = (id) => edited('vector', () => memory.store.getVector(id));
      busy.historyMany = (ids) => edited('history', () => memory.store.historyMany!(ids));
      busy.history = (id) => edited('history', () => memory.store.history(id));
      const target = createInMemoryStore();
      const report = await copyMemories({ from: busy, to: target, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } });

      expect(report, `readMany ${readMany}`).toEqual({ total: 5, done: 5, copied: 5, skipped: 0, replaced: 0 });
      expect(await target.get(added[2]!.id)).toMatchObject({ content: 'bob plays go', revision: 2 });
      expect(await target.getVector(added[2]!.id)).toEqual(axisVector(DIM, 7));
      expect((await target.history(added[2]!.id)).map((entry) => entry.reason)).toEqual([(await memory.history(added[2]!.id))[0]?.reason, 'switched games']);
      expect(await snapshot(target)).toEqual(await snapshot(memory.store));
    }
  });

  it('takes a memory whose history lacks its last version as it is, once its record shows it did not change', async () => {
    const { memory, moved } = await source();
    // A source whose history is behind for one memory (a replica that has not caught up).
    const behind = Object.create(memory.store) as MemoryStore;
    behind.historyMany = async (ids) => (await memory.store.historyMany!(ids)).map((history) => history.filter((entry) => entry.memoryId !== moved.id || entry.version < 3));
    const target = createInMemoryStore();
    expect(await copyMemories({ from: behind, to: target, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } })).toMatchObject({ copied: 5 });
    expect((await target.history(moved.id)).map((entry) => [entry.version, entry.trigger])).toEqual([[1, 'user_mention'], [2, 'manual_edit'], [3, 'import']]);
    expect(await target.get(moved.id)).toEqual(await memory.store.get(moved.id));
  });

  it('stops with CONFLICT, naming the memory, when one changes on every read, and copies it on the next run', async () => {
    const { memory, added } = await source();
    const busy = Object.create(memory.store) as MemoryStore;
    let restless = true;
    busy.getVectors = async (ids) => {
      if (restless) await memory.update(added[3]!.id, { importance: Math.random() });
      return memory.store.getVectors!(ids);
    };
    const target = createInMemoryStore();
    const open = { dimension: DIM, embedderId: 'memloom/test-embedder' };
    const error = await copyMemories({ from: busy, to: target, open }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'CONFLICT', backend: 'memory', details: { ids: [added[3]!.id] } });
    expect(await target.count({})).toBe(0);
    restless = false;
    expect(await copyMemories({ from: busy, to: target, open })).toMatchObject({ copied: 5 });
    expect(await snapshot(target)).toEqual(await snapshot(memory.store));
  });

  it('pages by offset a source that does not take after', async () => {
    const { memory } = await source();
    const plain = Object.create(memory.store) as MemoryStore;
    Object.defineProperty(plain, 'capabilities', { value: { ...memory.store.capabilities, listAfter: false } });
    const queries: object[] = [];
    plain.list = async (query) => {
      queries.push(query);
      return memory.store.list(query);
    };
    const target = createInMemoryStore();
    const report = await copyMemories({ from: plain, to: target, batchSize: 2, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } });
    expect(report).toMatchObject({ total: 5, copied: 5 });
    expect(queries.map((query) => ('after' in query ? 'after' : (query as { offset: number }).offset))).toEqual([0, 2, 4]);
    expect(await snapshot(target)).toEqual(await snapshot(memory.store));
  });

  // Another process imports memories said earlier (memloom import --merge keeps their times) between two pages: by offset,
  // the memories read move on by as many places. With two, the second page is the first again.
  it.each([1, 2])('pages by offset past %i memories added before the place reached, copying each memory read once', async (count) => {
    const { memory } = await source();
    const plain = Object.create(memory.store) as MemoryStore;
    Object.defineProperty(plain, 'capabilities', { value: { ...memory.store.capabilities, listAfter: false } });
    const offsets: number[] = [];
    plain.list = async (query) => {
      offsets.push((query as { offset: number }).offset);
      if (offsets.length === 2) {
        for (let index = 0; index < count; index++) await memory.add(`said long ago ${index}`, { scope: { userId: 'dave' }, at: '2024-01-01T00:00:00.000Z', merge: false });
      }
      return memory.store.list(query);
    };
    const target = createInMemoryStore();
    const progress: CopyProgress[] = [];
    const report = await copyMemories({ from: plain, to: target, batchSize: 2, open: { dimension: DIM, embedderId: 'memloom/test-embedder' }, onProgress: (step) => progress.push(step) });
    // The five memories there from the start, each once; the ones added before the place reached are for the next copy.
    expect(report).toEqual({ total: 5, done: 5, copied: 5, skipped: 0, replaced: 0 });
    expect(offsets).toEqual([0, 2, 4, 6]);
    expect((await target.list({})).map((record) => record.scope.userId).sort()).toEqual(['alice', 'alice', 'bob', 'carol', 'carol']);
    expect(progress.at(-1)?.done).toBe(5);
  });

  it.each([true, false])('stops with STORE_ERROR naming the source when its list gives the first page again (listAfter: %s), instead of copying forever', async (listAfter) => {
    const { memory } = await source();
    const stuck = Object.create(memory.store) as MemoryStore;
    Object.defineProperty(stuck, 'capabilities', { value: { ...memory.store.capabilities, listAfter } });
    let reads = 0;
    stuck.list = async ({ offset: _offset, after: _after, ...query }) => {
      // Past a few reads the copy is looping: fail the test rather than hang it.
      if (++reads > 5) throw new Error('the copy keeps reading the same page');
      return memory.store.list(query);
    };
    const target = createInMemoryStore();
    const error = await copyMemories({ from: stuck, to: target, batchSize: 2, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'memory', message: expect.stringContaining(listAfter ? 'list with after gave the same 2 memories' : 'list by offset gave the same 2 memories') });
    // The first page, then the same one MAX_REPEATED_PAGES times in a row.
    expect(reads).toBe(1 + MAX_REPEATED_PAGES);
    expect(await target.count({})).toBe(2);
  });

  it("reads a page's vectors and histories in one call each when the source declares readMany, one per memory otherwise", async () => {
    for (const readMany of [true, false]) {
      const { memory } = await source();
      const counted = Object.create(memory.store) as MemoryStore;
      Object.defineProperty(counted, 'capabilities', { value: { ...memory.store.capabilities, readMany } });
      const calls: Record<string, number> = {};
      for (const name of ['history', 'historyMany', 'getVector', 'getVectors'] as const) {
        const original = (memory.store[name] as (...args: unknown[]) => unknown).bind(memory.store);
        (counted as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
          calls[name] = (calls[name] ?? 0) + 1;
          return original(...args);
        };
      }
      const target = createInMemoryStore();
      await copyMemories({ from: counted, to: target, batchSize: 2, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } });
      expect(calls, `readMany ${readMany}`).toEqual(readMany ? { historyMany: 3, getVectors: 3 } : { history: 5, getVector: 5 });
      expect(await snapshot(target)).toEqual(await snapshot(memory.store));
    }
  });

  it('copies one scope only', async () => {
    const { memory } = await source();
    const target = createInMemoryStore();
    const report = await copyMemories({ from: memory, to: target, scope: { userId: 'carol' } });
    expect(report).toMatchObject({ total: 2, copied: 2 });
    expect((await target.list({})).map((record) => record.scope.userId)).toEqual(['carol', 'carol']);
  });

  it('on a memory at another revision in the target: stops with CONFLICT, skips, or replaces as asked', async () => {
    const { memory, moved } = await source();
    const target = createInMemoryStore();
    await copyMemories({ from: memory, to: target });
    await memory.update(moved.id, { content: 'alice lives in Braga' });

    const conflict = await copyMemories({ from: memory, to: target }).catch((error: unknown) => error);
    expect(MemloomError.hasCode(conflict, 'CONFLICT')).toBe(true);
    expect((conflict as MemloomError).details).toMatchObject({ id: moved.id, source: 4, target: 3 });

    expect(await copyMemories({ from: memory, to: target, onMismatch: 'skip' })).toMatchObject({ skipped: 5, replaced: 0 });
    expect((await target.get(moved.id))?.revision).toBe(3);

    expect(await copyMemories({ from: memory, to: target, onMismatch: 'replace' })).toMatchObject({ skipped: 4, replaced: 1 });
    expect(await snapshot(target)).toEqual(await snapshot(memory.store));
  });

  it('fills versions missing from the source history with import versions that say so', async () => {
    const { memory, moved } = await source();
    // A source that kept only the latest version of each memory.
    const forgetful = Object.create(memory.store) as MemoryStore;
    forgetful.history = async (id) => (await memory.store.history(id)).slice(-1);
    forgetful.historyMany = async (ids) => (await memory.store.historyMany!(ids)).map((history) => history.slice(-1));
    const target = createInMemoryStore();
    await copyMemories({ from: forgetful, to: target, open: { dimension: DIM, embedderId: 'memloom/test-embedder' } });
    const history = await target.history(moved.id);
    expect(history.map((entry) => [entry.version, entry.trigger])).toEqual([[1, 'import'], [2, 'import'], [3, 'restore']]);
    expect(history[0]?.reason).toBe('copied: version 1 was not in the source history');
    expect(await target.get(moved.id)).toEqual(await memory.store.get(moved.id));
  });

  it('refuses to mix embedders, or to copy a store onto itself', async () => {
    const { memory } = await source();
    const other = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: DIM, id: 'another/model' }) });
    await expect(copyMemories({ from: memory, to: other })).rejects.toMatchObject({ code: 'EMBEDDER_MISMATCH' });
    expect(await other.store.count({})).toBe(0);
    await expect(copyMemories({ from: memory, to: memory.store })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });

  it('refuses a source memory whose id holds a control character (INVALID_INPUT naming it by code point), writing nothing of its batch', async () => {
    const { memory } = await source();
    const [first, second] = await memory.store.list({ orderBy: 'createdAt' });
    // A store written before ids were checked: its second memory's id holds an escape sequence.
    const badId = `${second!.id}\u001b[2J`;
    const shown = (record: MemoryRecord) => (record.id === second!.id ? { ...record, id: badId } : record);
    const stored = (id: string) => (id === badId ? second!.id : id);
    const store = memory.store;
    const legacy: MemoryStore = Object.assign(Object.create(store) as MemoryStore, {
      capabilities: { ...store.capabilities, readMany: false, listAfter: false },
      list: async (query: ListQuery) => (await store.list(query)).map(shown),
      getMany: async (ids: readonly string[]) => (await store.getMany(ids.map(stored))).map(shown),
      get: async (id: string) => {
        const record = await store.get(stored(id));
        return record && shown(record);
      },
      history: async (id: string) => store.history(stored(id)),
      getVector: async (id: string) => store.getVector(stored(id)),
    });
    const target = createInMemoryStore();
    const refused = await copyMemories({ from: legacy, to: target, batchSize: 2, open: { dimension: DIM, embedderId: memory.embedder.id } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
    expect((refused as MemloomError).message).toContain('U+001B at index 36');
    expect((refused as MemloomError).message).not.toContain('\u001b');
    expect(await target.get(first!.id)).toBeUndefined();
    expect(await target.count({})).toBe(0);
  });

  it('shows a batch size that is not a whole number as it was given', async () => {
    const { memory } = await source();
    await expect(copyMemories({ from: memory, to: createInMemoryStore(), batchSize: '10' as never })).rejects.toThrow('got "10"');
  });

  it('stops between batches when aborted', async () => {
    const { memory } = await source();
    const target = createInMemoryStore();
    const controller = new AbortController();
    const done = copyMemories({ from: memory, to: target, batchSize: 2, signal: controller.signal, onProgress: () => controller.abort() });
    await expect(done).rejects.toThrow();
    expect(await target.count({})).toBe(2);
  });
});
