import { describe, expect, it } from 'vitest';
import { facade } from './facade.js';
import { axis, create, record, rejectsWithCode, replace, type StoreContext } from './fixtures.js';

export function historyCases(context: StoreContext): void {
  describe('history', () => {
    it('keeps every version in order with trigger, action, reason, before and after', async () => {
      const first = record({ content: 'version one', context: 'said after a question' });
      await context.store.apply([create(first, axis(0))]);
      const second = { ...first, content: 'version two', revision: 2 };
      await context.store.apply([replace(first, { content: 'version two' })]);
      await context.store.apply([replace(second, { content: 'version three' })]);
      const versions = await context.store.history(first.id);
      expect(versions.map((entry) => entry.version)).toEqual([1, 2, 3]);
      expect(versions.map((entry) => entry.after.content)).toEqual(['version one', 'version two', 'version three']);
      expect(versions[0]?.before).toBeNull();
      expect(versions[0]?.action).toBe('create');
      expect(versions[0]?.trigger).toBe('user_mention');
      expect(versions[1]?.before?.content).toBe('version one');
      expect(versions[0]?.after.context).toBe('said after a question');
      expect(versions[1]?.before?.context).toBe('said after a question');
      expect(versions[2]?.trigger).toBe('manual_edit');
      expect(versions[2]?.reason).toBe('edit for the conformance suite');
      expect(versions[2]?.memoryId).toBe(first.id);
      expect(versions[2]?.after).toEqual({ ...first, content: 'version three', revision: 3 });
    });

    it.skipIf(!context.options.capabilities.readMany)('historyMany and getVectors give what history and getVector give, in the order asked, unknown ids included', async () => {
      const first = record({ content: 'read many, first' });
      const second = record({ content: 'read many, second', scope: { userId: 'someone-else' } });
      await context.store.apply([create(first, axis(1)), create(second, axis(2))]);
      await context.store.apply([replace(first, { content: 'read many, first, edited' }, axis(3))]);
      const ids = [second.id, 'no-such-memory', first.id, second.id];
      const store = context.store as Required<Pick<typeof context.store, 'historyMany' | 'getVectors'>> & typeof context.store;
      const histories = await store.historyMany(ids);
      expect(histories).toEqual([await store.history(second.id), [], await store.history(first.id), await store.history(second.id)]);
      expect(histories[2]?.map((entry) => entry.after.content)).toEqual(['read many, first', 'read many, first, edited']);
      const vectors = await store.getVectors(ids);
      expect(vectors).toEqual([await store.getVector(second.id), undefined, await store.getVector(first.id), await store.getVector(second.id)]);
      expect(vectors[2]?.[3]).toBeCloseTo(1, 5);
      expect(await store.historyMany([])).toEqual([]);
      expect(await store.getVectors([])).toEqual([]);
    });

    it('tells the whole story through the Memory facade and restores an earlier version', async () => {
      const { memory } = facade(context.store, {
        'I work as a nurse in Lyon': axis(0),
        'I work as a teacher in Lyon': axis(1),
      });
      const added = await memory.add('I work as a nurse in Lyon', { scope: { userId: 'alice' }, sources: ['turn-1'] });
      await memory.update(added.memory.id, { content: 'I work as a teacher in Lyon' }, { reason: 'user corrected the job' });
      const story = await memory.history(added.memory.id);
      expect(story.map((entry) => [entry.version, entry.trigger, entry.action])).toEqual([
        [1, 'user_mention', 'create'],
        [2, 'manual_edit', 'edit'],
      ]);
      expect(story[1]?.reason).toBe('user corrected the job');

      const restored = await memory.restore(added.memory.id, 1);
      expect(restored.content).toBe('I work as a nurse in Lyon');
      expect(restored.revision).toBe(3);
      const after = await memory.history(added.memory.id);
      expect(after.map((entry) => entry.action)).toEqual(['create', 'edit', 'restore']);
      expect((await memory.get(added.memory.id))?.content).toBe('I work as a nurse in Lyon');
      // The restored content is what vector search finds again.
      const hits = await context.store.vectorSearch({ vector: axis(0), limit: 1 });
      expect(hits[0]?.memory.id).toBe(added.memory.id);
      expect(hits[0]?.score).toBeCloseTo(1, 5);
      await rejectsWithCode(memory.restore(added.memory.id, 9), 'VERSION_NOT_FOUND');
    });
  });
}
