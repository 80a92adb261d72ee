import { MemloomError, type MemoryRecord } from '@memloom/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../src/index.js';
import { createChange, DIMENSION, EMBEDDER_ID, newRecord, replaceChange, vectorFor } from './fixtures/records.mjs';
import { inspect, tempFolders } from './helpers.js';

const folder = tempFolders();

async function openStore(): Promise<{ store: SqliteStore; path: string }> {
  const path = folder().file();
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

  it('applies a batch row by row, and the changes to one memory in the order given', async () => {
    const { store, path } = await openStore();
    const low = newRecord('low', 'first row', 'alice');
    const high = newRecord('high', 'second row', 'alice');
    await store.apply([createChange(low, vectorFor(1)), createChange(high, vectorFor(2))]);
    const high2: MemoryRecord = { ...high, content: 'second row, edited', revision: 2 };
    const high3: MemoryRecord = { ...high2, tags: ['twice'], revision: 3 };
    const low2: MemoryRecord = { ...low, content: 'first row, edited', revision: 2 };
    const lowAgain = newRecord('low', 'first row, made again', 'bob');
    const fresh = newRecord('fresh', 'a new row', 'alice');
    // The higher row's changes come first, and each memory's changes depend on the one before.
    await store.apply([
      createChange(fresh, vectorFor(3)),
      replaceChange(high, high2),
      replaceChange(low, low2),
      replaceChange(high2, high3),
      { op: 'delete', id: 'low', expectedRevision: 2 },
      createChange(lowAgain, vectorFor(4)),
    ]);
    expect(await store.get('high')).toEqual(high3);
    expect(await store.get('low')).toEqual(lowAgain);
    expect(await store.get('fresh')).toEqual(fresh);
    expect((await store.history('high')).map((version) => version.version)).toEqual([1, 2, 3]);
    expect((await store.vectorSearch({ vector: vectorFor(4), limit: 1, scope: { userId: 'bob' } }))[0]?.memory.id).toBe('low');
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 3, vectors: 3, textRows: 3, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('writes every version of a large batch (64 to a statement, the rest one by one) and deletes the rows and versions of its deletes', async () => {
    const { store, path } = await openStore();
    const records = Array.from({ length: 150 }, (_, index) => newRecord(`m${index}`, `memory number ${index}`, index % 2 === 0 ? 'alice' : 'bob'));
    await store.apply(records.map((record, index) => createChange(record, vectorFor(index))));
    // Every third memory deleted, the others edited: 100 versions and 50 deletes in one batch.
    const edited = records.map((record, index): MemoryRecord => ({ ...record, content: `edited number ${index}`, revision: 2 }));
    await store.apply(records.map((record, index) => (index % 3 === 0 ? { op: 'delete' as const, id: record.id } : replaceChange(record, edited[index] as MemoryRecord))));
    const histories = await Promise.all(records.map((record) => store.history(record.id)));
    for (const [index, history] of histories.entries()) {
      if (index % 3 === 0) expect(history).toEqual([]);
      else expect(history.map((version) => [version.version, version.before, version.after])).toEqual([[1, null, records[index]], [2, records[index], edited[index]]]);
    }
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 100, vectors: 100, textRows: 100, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('writes every field of a put: indexed ones (scope, created) only when they changed, the others always', async () => {
    const { store, path } = await openStore();
    const first = { ...newRecord('a', 'kestrel hovering', 'alice'), tags: ['birds'], metadata: { n: 1 } };
    const other = newRecord('b', 'swift overhead', 'alice');
    await store.apply([createChange(first, vectorFor(1)), createChange(other, vectorFor(2))]);
    const moved: MemoryRecord = {
      ...first,
      scope: { userId: 'alice', sessionId: 's1' },
      createdAt: '2020-01-01T00:00:00.000Z',
      tags: [],
      metadata: { n: 2, nested: { ok: true } },
      weight: 0.5,
      revision: 2,
    };
    const sameIndexed: MemoryRecord = { ...other, importance: 2, lastAccessedAt: '2025-05-05T00:00:00.000Z', revision: 2 };
    await store.apply([replaceChange(first, moved), replaceChange(other, sameIndexed)]);
    expect(await store.get('a')).toEqual(moved);
    expect(await store.get('b')).toEqual(sameIndexed);
    expect((await store.list({ scope: { userId: 'alice' }, orderBy: 'createdAt' })).map((memory) => memory.id)).toEqual(['a', 'b']);
    expect((await store.list({ scope: { sessionId: 's1' } })).map((memory) => memory.id)).toEqual(['a']);
    expect(await textIds(store, 'kestrel', 'alice')).toEqual(['a']);
    expect((await store.textSearch({ text: 'kestrel', limit: 5, scope: { userId: 'alice', sessionId: 's1' }, exactScope: true })).map((hit) => hit.memory.id)).toEqual(['a']);
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 2, textRows: 2, incomplete: 0, orphans: 0, integrity: 'ok' });
  });
});


describe('records read back', () => {
  it('gets empty sources, tags and metadata as fresh values each read: changing one read changes no other', async () => {
    const { store } = await openStore();
    const empty = newRecord('empty', 'puffin on a cliff', 'alice');
    const full = { ...newRecord('full', 'gannet diving', 'alice'), sources: ['turn-1'], tags: ['birds'], metadata: { n: 1 } };
    await store.apply([createChange(empty, vectorFor(1)), createChange(full, vectorFor(2))]);
    const first = (await store.get('empty')) as MemoryRecord;
    const [second, third] = (await store.list({ orderBy: 'id' })) as [MemoryRecord, MemoryRecord];
    expect([first, second]).toEqual([empty, empty]);
    expect(third).toEqual(full);
    first.sources.push('turn-9');
    first.tags.push('changed');
    first.metadata['changed'] = true;
    expect(second).toEqual(empty);
    expect(await store.get('empty')).toEqual(empty);
    expect(await store.get('full')).toEqual(full);
    await store.close();
  });
});
