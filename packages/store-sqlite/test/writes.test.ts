import { MemloomError, type MemoryRecord } from '@memloom/core';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../src/index.js';
import { createChange, DIMENSION, EMBEDDER_ID, newRecord, replaceChange, vectorFor } from './fixtures/records.mjs';
import { inspect, tempFolder } from './helpers.js';

let dispose: (() => void) | undefined;
afterEach(() => {
  dispose?.();
  dispose = undefined;
});

async function openStore(): Promise<{ store: SqliteStore; path: string }> {
  const folder = tempFolder();
  dispose = folder.dispose;
  const path = folder.file();
  const store = createSqliteStore({ path });
  await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
  return { store, path };
}

async function textIds(store: SqliteStore, text: string, userId?: string): Promise<string[]> {
  const hits = await store.textSearch({ text, limit: 20, ...(userId ? { scope: { userId } } : {}) });
  return hits.map((hit) => hit.memory.id).sort();
}

function rowIdOf(path: string, id: string): number {
  const database = new Database(path, { readonly: true });
  try {
    return (database.prepare('SELECT row_id FROM memories WHERE id = ?').get(id) as { row_id: number }).row_id;
  } finally {
    database.close();
  }
}

describe('the text index inside one batch (written at the end of the transaction)', () => {
  it('ends with the last text of each memory: created then edited, created then deleted, deleted and its row id reused, moved to another user', async () => {
    const { store, path } = await openStore();
    const moved = newRecord('moved', 'walrus on a pebble beach', 'alice');
    const last = newRecord('last', 'narwhal under the ice', 'alice');
    await store.apply([createChange(moved, vectorFor(1)), createChange(last, vectorFor(2))]);
    const lastRow = rowIdOf(path, 'last');

    const edited = newRecord('edited', 'pelican at the harbour', 'alice');
    const editedAgain: MemoryRecord = { ...edited, content: 'albatross over the ocean', revision: 2 };
    const fleeting = newRecord('fleeting', 'flamingo in the lagoon', 'alice');
    const reuser = newRecord('reuser', 'octopus in a rock pool', 'bob');
    const movedToBob: MemoryRecord = { ...moved, scope: { userId: 'bob' }, revision: 2 };
    await store.apply([
      { op: 'delete', id: 'last' },
      createChange(reuser, vectorFor(5)),
      createChange(edited, vectorFor(3)),
      replaceChange(edited, editedAgain),
      createChange(fleeting, vectorFor(4)),
      { op: 'delete', id: 'fleeting' },
      replaceChange(moved, movedToBob),
    ]);
    // SQLite hands the freed highest row id to the next insert: the FTS row must follow the new memory.
    expect(rowIdOf(path, 'reuser')).toBe(lastRow);

    expect(await textIds(store, 'pelican harbour')).toEqual([]);
    expect(await textIds(store, 'albatross')).toEqual(['edited']);
    expect(await textIds(store, 'flamingo lagoon')).toEqual([]);
    expect(await textIds(store, 'narwhal ice')).toEqual([]);
    expect(await textIds(store, 'octopus')).toEqual(['reuser']);
    expect(await textIds(store, 'walrus', 'alice')).toEqual([]);
    expect(await textIds(store, 'walrus', 'bob')).toEqual(['moved']);
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 3, textRows: 3, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('keeps nothing of a batch that failed, and the next batch writes its text as usual', async () => {
    const { store, path } = await openStore();
    const kept = newRecord('kept', 'heron by the river', 'alice');
    await store.apply([createChange(kept, vectorFor(1))]);

    const failing = store.apply([
      createChange(newRecord('new', 'kingfisher diving', 'alice'), vectorFor(2)),
      replaceChange(kept, { ...kept, content: 'stork on a chimney', revision: 2 }),
      { op: 'delete', id: 'kept', expectedRevision: 7 },
    ]);
    await expect(failing).rejects.toSatisfy((error) => MemloomError.hasCode(error, 'CONFLICT'));
    expect(await textIds(store, 'kingfisher stork')).toEqual([]);
    expect(await textIds(store, 'heron')).toEqual(['kept']);

    await store.apply([createChange(newRecord('after', 'puffin on a cliff', 'alice'), vectorFor(3))]);
    expect(await textIds(store, 'puffin heron kingfisher')).toEqual(['after', 'kept']);
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 2, textRows: 2, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('sees, within one batch, what earlier changes of the batch did to the same memory', async () => {
    const { store, path } = await openStore();
    const first = newRecord('same', 'gannet at sea', 'alice');
    await store.apply([createChange(first, vectorFor(1))]);
    const second: MemoryRecord = { ...first, content: 'gannet diving', revision: 2 };
    const third: MemoryRecord = { ...second, tags: ['birds'], revision: 3 };
    const reborn = newRecord('same', 'cormorant drying its wings', 'bob');
    await store.apply([replaceChange(first, second), replaceChange(second, third), { op: 'delete', id: 'same', expectedRevision: 3 }, createChange(reborn, vectorFor(2))]);
    expect(await store.get('same')).toEqual(reborn);
    expect((await store.history('same')).map((version) => version.after.content)).toEqual(['cormorant drying its wings']);
    expect(await textIds(store, 'gannet cormorant')).toEqual(['same']);

    // A change based on a revision an earlier change of the batch already replaced is a conflict.
    const stale = store.apply([replaceChange(reborn, { ...reborn, content: 'one', revision: 2 }), replaceChange(reborn, { ...reborn, content: 'two', revision: 2 })]);
    await expect(stale).rejects.toSatisfy((error) => MemloomError.hasCode(error, 'CONFLICT'));
    expect(await store.get('same')).toEqual(reborn);
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 1, vectors: 1, textRows: 1, incomplete: 0, orphans: 0, integrity: 'ok' });
  });
});
