import { describe, expect, it } from 'vitest';
import { facade } from './facade.js';
import { axis, create, DIMENSION, record, replace, type StoreContext } from './fixtures.js';

export function concurrencyCases(context: StoreContext): void {
  describe('concurrency', () => {
    it('loses nothing when several async callers add distinct memories at once', async () => {
      const { memory, embedder } = facade(context.store);
      const users = ['u1', 'u2', 'u3', 'u4'];
      const contents = Array.from({ length: 24 }, (_, index) => `distinct memory ${index}`);
      // Orthogonal-enough vectors per user so that nothing merges.
      contents.forEach((content, index) => {
        const vector = new Array<number>(DIMENSION).fill(0);
        vector[Math.floor(index / users.length) % DIMENSION] = 1;
        embedder.setVector(content, vector);
      });
      await Promise.all(contents.map((content, index) => memory.add(content, { scope: { userId: users[index % users.length]! } })));
      expect(await context.store.count({})).toBe(24);
      for (const user of users) expect(await context.store.count({ scope: { userId: user } })).toBe(6);
      const stored = (await context.store.list({})).map((entry) => entry.content).sort();
      expect(stored).toEqual([...contents].sort());
    });

    it('merges concurrent mentions of the same thing without losing any of their sources', async () => {
      const { memory } = facade(context.store, { 'the user loves hiking': axis(3) });
      const mentions = Array.from({ length: 8 }, (_, index) => `turn-${index}`);
      const results = await Promise.all(
        mentions.map((turn) => memory.add('the user loves hiking', { scope: { userId: 'alice' }, sources: [turn] })),
      );
      expect(results.filter((result) => result.decision.strategy === 'create_new')).toHaveLength(1);
      expect(results.filter((result) => result.decision.strategy === 'merge_update')).toHaveLength(7);
      const stored = await context.store.list({ scope: { userId: 'alice' } });
      expect(stored).toHaveLength(1);
      expect([...stored[0]!.sources].sort()).toEqual([...mentions].sort());
      expect(await context.store.history(stored[0]!.id)).toHaveLength(8);
    });

    it('lets exactly one of several writers based on the same revision win', async () => {
      const memory = record({ content: 'contended' });
      await context.store.apply([create(memory, axis(0))]);
      const outcomes = await Promise.allSettled(
        [1, 2, 3, 4].map((index) => context.store.apply([replace(memory, { content: `writer ${index}` })])),
      );
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') expect((outcome.reason as { code?: string }).code).toBe('CONFLICT');
      }
      const stored = await context.store.get(memory.id);
      expect(stored?.revision).toBe(2);
      expect(await context.store.history(memory.id)).toHaveLength(2);
    });
  });
}
