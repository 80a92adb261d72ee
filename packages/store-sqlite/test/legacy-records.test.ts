import { createMemory } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/index.js';
import { tempFolders } from './helpers.js';

const folders = tempFolders();
const LEGACY_ID = 'ticket\t42';

/**
 * A store as 0.1.0 could leave it: a memory whose id holds a tab and one whose scope holds a blank agentId.
 * No put may create them any more, so the rows are written as the store writes them, then renamed and
 * blanked in the file.
 */
async function legacyStore(path: string) {
  const clock = createFakeClock('2024-01-01T09:00:00.000Z');
  const embedder = createTestEmbedder();
  const writer = createMemory({ store: createSqliteStore({ path }), embedder, clock });
  const tabbed = await writer.add('Alice prefers window seats on long flights', { scope: { userId: 'alice' } });
  const blank = await writer.add('Alice is allergic to peanuts', { scope: { userId: 'alice', agentId: 'planner' } });
  await writer.close();
  const database = new Database(path);
  database.prepare('UPDATE memories SET id = ? WHERE id = ?').run(LEGACY_ID, tabbed.memory!.id);
  database.prepare("UPDATE versions SET after_json = json_set(after_json, '$.id', ?) WHERE memory_row = (SELECT row_id FROM memories WHERE id = ?)").run(LEGACY_ID, LEGACY_ID);
  database.prepare("UPDATE memories SET agent_id = '' WHERE id = ?").run(blank.memory!.id);
  database.prepare("UPDATE versions SET after_json = json_set(after_json, '$.scope.agentId', '') WHERE memory_row = (SELECT row_id FROM memories WHERE id = ?)").run(blank.memory!.id);
  database.close();
  return { clock, embedder, blankId: blank.memory!.id };
}

describe('a store written before the rules for new ids and scopes', () => {
  it('keeps a memory whose id holds a control character, or whose scope a blank value, readable, editable, maintainable and deletable', { timeout: 30_000 }, async () => {
    const path = folders().file();
    const { clock, embedder, blankId } = await legacyStore(path);
    const memory = createMemory({ store: createSqliteStore({ path }), embedder, clock });
    try {
      expect((await memory.get(LEGACY_ID))?.content).toBe('Alice prefers window seats on long flights');
      expect((await memory.get(blankId))?.scope).toEqual({ userId: 'alice', agentId: '' });
      expect(await memory.history(LEGACY_ID)).toHaveLength(1);

      // add: the same fact again boosts the stored memory (a put that rewrites it).
      await memory.add('Alice prefers window seats on long flights', { scope: { userId: 'alice' } });
      expect((await memory.get(LEGACY_ID))?.revision).toBe(2);

      // update, then maintenance months later: both rewrite the memories.
      await memory.update(LEGACY_ID, { content: 'Alice prefers aisle seats on long flights' });
      clock.set('2024-01-15T09:00:00.000Z');
      const report = await memory.maintain();
      // Two weeks on, both are compressed (a rewrite each), not deleted.
      expect(report.changes.map((change) => [change.id, change.action])).toEqual([[LEGACY_ID, 'compress'], [blankId, 'compress']]);
      expect((await memory.get(LEGACY_ID))!.revision).toBe(4);
      expect((await memory.get(blankId))!.revision).toBe(2);
      expect((await memory.get(blankId))?.scope).toEqual({ userId: 'alice', agentId: '' });

      // restore puts an old version back (another rewrite); delete removes it.
      await memory.restore(LEGACY_ID, 1);
      expect((await memory.get(LEGACY_ID))?.content).toBe('Alice prefers window seats on long flights');
      await memory.delete(LEGACY_ID);
      expect(await memory.get(LEGACY_ID)).toBeUndefined();
      expect(await memory.store.count({})).toBe(1);
    } finally {
      await memory.close();
    }
  });

  it('still refuses to create a memory with such an id or scope', { timeout: 30_000 }, async () => {
    const path = folders().file();
    const { embedder, blankId } = await legacyStore(path);
    const store = createSqliteStore({ path });
    await store.open({ dimension: embedder.dimension, embedderId: embedder.id });
    try {
      const kept = (await store.get(blankId))!;
      const [vector] = await embedder.embed([kept.content]);
      const createOf = (memory: typeof kept) => ({
        op: 'put' as const,
        memory: { ...memory, revision: 1 },
        vector: vector as number[],
        expectedRevision: 0,
        version: { memoryId: memory.id, version: 1, at: memory.updatedAt, trigger: 'user_mention' as const, action: 'create' as const, reason: 'new', before: null, after: { ...memory, revision: 1 } },
      });
      await expect(store.apply([createOf({ ...kept, id: 'ticket\t43' })])).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
      await expect(store.apply([createOf({ ...kept, id: 'fresh-id' })])).rejects.toMatchObject({ code: 'INVALID_SCOPE', details: { field: 'agentId' } });
      expect(await store.count({})).toBe(2);
    } finally {
      await store.close();
    }
  });
});
