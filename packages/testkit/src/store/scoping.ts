import { MemloomError, type MemoryStore, type Scope } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { axis, create, DIMENSION, record, type StoreContext } from './fixtures.js';

/** Scope values that break naive SQL, LIKE patterns, filters or JSON. Every store must keep them apart. */
export const HOSTILE_IDS = [
  "alice' OR '1'='1",
  'alice%',
  'a_ice',
  '*',
  'robert"); DROP TABLE memories;--',
  'alice\\',
  '{"$ne": null}',
  '用户甲',
  'ALICE',
  ' alice',
];

/** Path-like values: a store may refuse them with INVALID_SCOPE, or keep them apart; never escape with them. */
export const PATH_LIKE_IDS = ['../bob', '..', '/etc/passwd', 'a/b', 'C:\\Windows', 'con', 'nul'];

export function scopingCases(context: StoreContext): void {
  const { options } = context;

  describe('scoping', () => {
    async function seed(store: MemoryStore, scopes: Scope[]) {
      const memories = scopes.map((scope, index) => record({ scope, content: `shared words for ${index}` }));
      await store.apply(memories.map((memory) => create(memory, axis(0))));
      return memories;
    }

    it('keeps users apart in list, count, vector search and text search', async () => {
      const [alice, bob] = await seed(context.store, [{ userId: 'alice' }, { userId: 'bob' }]);
      const aliceScope = { userId: 'alice' };
      expect((await context.store.list({ scope: aliceScope })).map((memory) => memory.id)).toEqual([alice!.id]);
      expect(await context.store.count({ scope: aliceScope })).toBe(1);
      const vectorHits = await context.store.vectorSearch({ vector: axis(0), limit: 10, scope: { userId: 'bob' } });
      expect(vectorHits.map((hit) => hit.memory.id)).toEqual([bob!.id]);
      if (options.capabilities.textSearch) {
        const textHits = await context.store.textSearch!({ text: 'shared words', limit: 10, scope: aliceScope });
        expect(textHits.map((hit) => hit.memory.id)).toEqual([alice!.id]);
      }
    });

    it('keeps hostile ids apart from each other and from the ids they imitate', async () => {
      const scopes = ['alice', 'bob', ...HOSTILE_IDS].map((userId) => ({ userId }));
      const memories = await seed(context.store, scopes);
      for (const [index, scope] of scopes.entries()) {
        const expected = [memories[index]!.id];
        expect((await context.store.list({ scope })).map((memory) => memory.id)).toEqual(expected);
        expect(await context.store.count({ scope })).toBe(1);
        const hits = await context.store.vectorSearch({ vector: axis(0), limit: 50, scope });
        expect(hits.map((hit) => hit.memory.id)).toEqual(expected);
        if (options.capabilities.textSearch) {
          const textHits = await context.store.textSearch!({ text: 'shared words', limit: 50, scope });
          expect(textHits.map((hit) => hit.memory.id)).toEqual(expected);
        }
        expect((await context.store.get(memories[index]!.id))?.scope).toEqual(scope);
      }
    });

    it('keeps path-like ids apart, or refuses them with INVALID_SCOPE', async () => {
      for (const userId of PATH_LIKE_IDS) {
        const memory = record({ scope: { userId }, content: 'path like' });
        try {
          await context.store.apply([create(memory, axis(1))]);
        } catch (error) {
          expect(MemloomError.hasCode(error, 'INVALID_SCOPE'), String(error)).toBe(true);
          expect(await context.store.get(memory.id)).toBeUndefined();
          continue;
        }
        expect((await context.store.list({ scope: { userId } })).map((stored) => stored.id)).toEqual([memory.id]);
      }
      expect(await context.store.count({ scope: { userId: 'bob' } })).toBe(0);
    });

    it('matches every given scope field, and with exactScope requires the others absent', async () => {
      const [userOnly, withSession, withAgent, otherUser] = await seed(context.store, [
        { userId: 'alice' },
        { userId: 'alice', sessionId: 's1' },
        { userId: 'alice', agentId: 'helper' },
        { userId: 'bob', sessionId: 's1' },
      ]);
      const ids = async (scope: Scope, exactScope = false) =>
        (await context.store.vectorSearch({ vector: axis(0), limit: 10, scope, exactScope })).map((hit) => hit.memory.id).sort();
      expect(await ids({ userId: 'alice' })).toEqual([userOnly!.id, withSession!.id, withAgent!.id].sort());
      expect(await ids({ userId: 'alice' }, true)).toEqual([userOnly!.id]);
      expect(await ids({ userId: 'alice', sessionId: 's1' }, true)).toEqual([withSession!.id]);
      expect(await ids({ sessionId: 's1' })).toEqual([withSession!.id, otherUser!.id].sort());
      expect(await ids({ agentId: 'helper' })).toEqual([withAgent!.id]);
      const listed = await context.store.list({ scope: { userId: 'alice' }, exactScope: true });
      expect(listed.map((memory) => memory.id)).toEqual([userOnly!.id]);
      if (options.capabilities.textSearch) {
        const hits = await context.store.textSearch!({ text: 'shared', limit: 10, scope: { userId: 'alice' }, exactScope: true });
        expect(hits.map((hit) => hit.memory.id)).toEqual([userOnly!.id]);
      }
    });

    it('deletes by every given scope field: one session of a user, or one agent, leaves the rest of that user', async () => {
      const [plain, session1, session2, agentSession1, agentOnly, bobSession1] = await seed(context.store, [
        { userId: 'alice' },
        { userId: 'alice', sessionId: 's1' },
        { userId: 'alice', sessionId: 's2' },
        { userId: 'alice', agentId: 'helper', sessionId: 's1' },
        { userId: 'alice', agentId: 'helper' },
        { userId: 'bob', sessionId: 's1' },
      ]);
      const remaining = async () => (await context.store.list({})).map((memory) => memory.id).sort();
      expect(await context.store.deleteByScope({ userId: 'alice', sessionId: 's1' })).toBe(2);
      expect(await remaining()).toEqual([plain!.id, session2!.id, agentOnly!.id, bobSession1!.id].sort());
      for (const gone of [session1!, agentSession1!]) {
        expect(await context.store.get(gone.id)).toBeUndefined();
        expect(await context.store.history(gone.id)).toEqual([]);
        expect(await context.store.getVector(gone.id)).toBeUndefined();
      }
      expect(await context.store.history(plain!.id)).toHaveLength(1);
      expect(await context.store.getVector(session2!.id)).toHaveLength(DIMENSION);
      expect(await context.store.deleteByScope({ userId: 'alice', agentId: 'helper' })).toBe(1);
      expect(await remaining()).toEqual([plain!.id, session2!.id, bobSession1!.id].sort());
      expect(await context.store.deleteByScope({ userId: 'alice', agentId: 'nobody' })).toBe(0);
      expect(await context.store.deleteByScope({ userId: 'bob', sessionId: 's2' })).toBe(0);
      expect(await remaining()).toEqual([plain!.id, session2!.id, bobSession1!.id].sort());
      const hits = await context.store.vectorSearch({ vector: axis(0), limit: 10, scope: { userId: 'alice' } });
      expect(hits.map((hit) => hit.memory.id).sort()).toEqual([plain!.id, session2!.id].sort());
      if (options.capabilities.textSearch) {
        const textHits = await context.store.textSearch!({ text: 'shared words', limit: 10, scope: { userId: 'alice' } });
        expect(textHits.map((hit) => hit.memory.id).sort()).toEqual([plain!.id, session2!.id].sort());
      }
    });

    it("deletes one scope with everything in it and nothing of anyone else's", async () => {
      const [alice1, alice2, bob, hostile] = await seed(context.store, [
        { userId: 'alice' },
        { userId: 'alice', sessionId: 'x' },
        { userId: 'bob' },
        { userId: 'alice%' },
      ]);
      expect(await context.store.deleteByScope({ userId: 'alice' })).toBe(2);
      expect(await context.store.get(alice1!.id)).toBeUndefined();
      expect(await context.store.get(alice2!.id)).toBeUndefined();
      expect(await context.store.history(alice1!.id)).toEqual([]);
      expect(await context.store.getVector(alice2!.id)).toBeUndefined();
      expect((await context.store.get(bob!.id))?.id).toBe(bob!.id);
      expect((await context.store.get(hostile!.id))?.id).toBe(hostile!.id);
      const hits = await context.store.vectorSearch({ vector: axis(0), limit: 10 });
      expect(hits.map((hit) => hit.memory.id).sort()).toEqual([bob!.id, hostile!.id].sort());
      if (options.capabilities.textSearch) {
        const textHits = await context.store.textSearch!({ text: 'shared words', limit: 10, scope: { userId: 'alice' } });
        expect(textHits).toEqual([]);
      }
    });
  });
}
