import { reindex, type MemoryStore, type ReindexProgress } from '@memloom/core';
import { createTestEmbedder } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { axis, create, DIMENSION, EMBEDDER_ID, record, rejectsWithCode, replace, type StoreContext } from './fixtures.js';

/** The embedder the cases move to: another id and another dimension than the suite's. */
const NEXT_DIMENSION = 5;
const NEXT_ID = 'memloom/testkit-next-vectors';

function nextEmbedder(contents: string[]) {
  // Each content gets its own axis in the new space, so a search shows which vectors are live.
  const vectors = Object.fromEntries(contents.map((content, index) => [content, axis(index, NEXT_DIMENSION)]));
  return createTestEmbedder({ dimension: NEXT_DIMENSION, id: NEXT_ID, vectors });
}

async function seed(store: MemoryStore, count: number) {
  const memories = Array.from({ length: count }, (_, index) => record({ content: `reindex me ${index}` }));
  await store.apply(memories.map((memory, index) => create(memory, axis(index))));
  return memories;
}

export function reindexCases(context: StoreContext & { replace(store: MemoryStore): void }): void {
  const { options } = context;

  it.skipIf(options.capabilities.reindex)('reindex() refuses a store that cannot re-index with NOT_SUPPORTED', async () => {
    await context.store.apply([create(record(), axis(0))]);
    await rejectsWithCode(reindex({ store: context.store, embedder: nextEmbedder([]) }), 'NOT_SUPPORTED');
  });

  describe.skipIf(!options.capabilities.reindex)('reindex', () => {
    it('moves every vector to the new embedder with progress, then refuses the old one', async () => {
      const memories = await seed(context.store, 5);
      const embedder = nextEmbedder(memories.map((memory) => memory.content));
      const progress: ReindexProgress[] = [];
      const report = await reindex({ store: context.store, embedder, batchSize: 2, onProgress: (step) => progress.push(step) });

      expect(report).toMatchObject({ embedderId: NEXT_ID, dimension: NEXT_DIMENSION, total: 5, embedded: 5, resumed: 0 });
      expect(progress.map((step) => step.done)).toEqual([0, 2, 4, 5]);
      expect(progress.every((step) => step.total === 5 && step.embedderId === NEXT_ID)).toBe(true);
      expect(embedder.calls.map((call) => call.length)).toEqual([2, 2, 1]);

      await context.store.open({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID });
      await rejectsWithCode(context.store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID }), 'DIMENSION_MISMATCH');
      for (const [index, memory] of memories.entries()) {
        const hits = await context.store.vectorSearch({ vector: axis(index, NEXT_DIMENSION), limit: 1 });
        expect(hits[0]?.memory.id).toBe(memory.id);
        expect(hits[0]?.score).toBeCloseTo(1, 5);
        expect(await context.store.getVector(memory.id)).toHaveLength(NEXT_DIMENSION);
      }
      await rejectsWithCode(context.store.vectorSearch({ vector: axis(0), limit: 1 }), 'DIMENSION_MISMATCH');
      // Records and history are untouched by a re-index.
      expect(await context.store.get(memories[0]!.id)).toEqual(memories[0]);
      expect(await context.store.history(memories[0]!.id)).toHaveLength(1);
    });

    it('keeps serving the old vectors until the switch, and resumes an interrupted run', async () => {
      const memories = await seed(context.store, 6);
      const embedder = nextEmbedder(memories.map((memory) => memory.content));
      let store = context.store;
      await store.beginReindex!({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID });
      const first = await store.pendingReindex!(4);
      expect(first).toHaveLength(4);
      const vectors = await embedder.embed(first.map((memory) => memory.content));
      expect(await store.stageReindex!(first.map((memory, index) => ({ id: memory.id, revision: memory.revision, vector: vectors[index]! })))).toBe(4);

      // Still the old embedder's store: old vectors answer, the target is refused.
      expect((await store.vectorSearch({ vector: axis(2), limit: 1 }))[0]?.memory.id).toBe(memories[2]!.id);
      await rejectsWithCode(store.open({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID }), 'DIMENSION_MISMATCH');

      if (options.reopen) {
        store = await options.reopen(store);
        context.replace(store);
        await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      }
      embedder.calls.length = 0;
      const progress: number[] = [];
      const report = await reindex({ store, embedder, batchSize: 10, onProgress: (step) => progress.push(step.done) });
      expect(report).toMatchObject({ total: 6, embedded: 2, resumed: 4 });
      expect(progress).toEqual([4, 6]);
      expect(embedder.calls.flat().sort()).toEqual([memories[4]!.content, memories[5]!.content].sort());
      await store.open({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID });
      expect((await store.vectorSearch({ vector: axis(2, NEXT_DIMENSION), limit: 1 }))[0]?.memory.id).toBe(memories[2]!.id);
    });

    it('pendingReindex refuses a limit that is not a whole number >= 0, and stageReindex a vector holding NaN or all zeros, with INVALID_INPUT', async () => {
      await seed(context.store, 3);
      const store = context.store;
      const target = { dimension: NEXT_DIMENSION, embedderId: NEXT_ID };
      await store.beginReindex!(target);
      // A negative limit is not "no limit" (SQLite reads LIMIT -1 so).
      for (const limit of [-1, 2.5, Number.NaN, '2', undefined]) await rejectsWithCode(store.pendingReindex!(limit as never), 'INVALID_INPUT');
      expect(await store.pendingReindex!(0)).toEqual([]);
      const [first] = await store.pendingReindex!(1);
      const nan = axis(0, NEXT_DIMENSION).map((value, index) => (index === 1 ? Number.NaN : value));
      for (const vector of [nan, new Array<number>(NEXT_DIMENSION).fill(0)]) {
        await rejectsWithCode(store.stageReindex!([{ id: first!.id, revision: first!.revision, vector }]), 'INVALID_INPUT');
      }
      expect(await store.beginReindex!(target)).toEqual({ target, done: 0, total: 3 });
      expect(await store.pendingReindex!(10)).toHaveLength(3);
    });

    it('re-embeds what changes during the run and refuses to switch while anything is pending', async () => {
      const [edited, deleted, kept] = await seed(context.store, 3);
      const store = context.store;
      await store.beginReindex!({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID });
      const pending = await store.pendingReindex!(10);
      const staged = pending.map((memory) => ({ id: memory.id, revision: memory.revision, vector: axis(0, NEXT_DIMENSION) }));
      expect(await store.stageReindex!(staged)).toBe(3);

      // A new vector under the old embedder makes the memory pending again; a delete drops it.
      await store.apply([replace(edited!, { content: 'edited while re-indexing' }, axis(4))]);
      await store.apply([{ op: 'delete', id: deleted!.id }]);
      const added = record({ content: 'added while re-indexing' });
      await store.apply([create(added, axis(5))]);
      expect((await store.pendingReindex!(10)).map((memory) => memory.id).sort()).toEqual([edited!.id, added.id].sort());
      await rejectsWithCode(store.commitReindex!(), 'CONFLICT');

      // A vector computed from an older revision is not kept.
      expect(await store.stageReindex!([{ id: edited!.id, revision: 1, vector: axis(1, NEXT_DIMENSION) }])).toBe(0);
      expect(await store.stageReindex!([{ id: 'no-such-id', revision: 1, vector: axis(1, NEXT_DIMENSION) }])).toBe(0);

      const status = await store.beginReindex!({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID });
      expect(status).toEqual({ target: { dimension: NEXT_DIMENSION, embedderId: NEXT_ID }, done: 1, total: 3 });
      expect(kept).toBeDefined();
      const report = await reindex({ store, embedder: nextEmbedder(['edited while re-indexing', 'added while re-indexing']) });
      expect(report).toMatchObject({ total: 3, embedded: 2, resumed: 1 });
      expect(await store.count({})).toBe(3);
    });

    it('refuses staged vectors of the wrong dimension, and an abort leaves the store as it was', async () => {
      const [memory] = await seed(context.store, 2);
      const store = context.store;
      await store.beginReindex!({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID });
      await rejectsWithCode(store.stageReindex!([{ id: memory!.id, revision: 1, vector: axis(0) }]), 'DIMENSION_MISMATCH');
      expect(await store.stageReindex!([{ id: memory!.id, revision: 1, vector: axis(0, NEXT_DIMENSION) }])).toBe(1);
      await store.abortReindex!();
      await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      expect((await store.vectorSearch({ vector: axis(0), limit: 1 }))[0]?.memory.id).toBe(memory!.id);
      // Starting again after an abort starts from nothing.
      expect((await store.beginReindex!({ dimension: NEXT_DIMENSION, embedderId: NEXT_ID })).done).toBe(0);
      await store.abortReindex!();
    });
  });
}
