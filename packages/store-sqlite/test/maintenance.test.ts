import { createMemory } from '@memloom/core';
import { axisVector, createFakeClock, createRecord, createTestEmbedder } from '@memloom/core/testing';
import { create } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/index.js';
import { tempFolders } from './helpers.js';

const DIMENSION = 8;
const EMBEDDER_ID = 'test/maintenance';
const folder = tempFolders();

describe('the maintenance pass over a SQLite file', () => {
  it('meets every memory when another connection deletes memories of a page the pass has already written', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    // 20,001 memories (the pass reads pages of 10,000); in the first page every other one is an
    // episode old enough to be deleted, every other memory is a fact old enough to be compressed.
    const records = Array.from({ length: 20_001 }, (_, index) =>
      createRecord(
        { id: `s-${String(index).padStart(5, '0')}`, content: `the note number ${index}`, scope: { userId: 'a' }, atIso: '2024-03-01T09:00:00.000Z' },
        { importance: 1, category: index < 10_000 && index % 2 === 0 ? 'episode' : 'fact', type: 'user' },
      ),
    );
    for (let start = 0; start < records.length; start += 5_000) await store.apply(records.slice(start, start + 5_000).map((record) => create(record, axisVector(DIMENSION, 0))));

    const other = createSqliteStore({ path });
    await other.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const apply = store.apply.bind(store);
    let batches = 0;
    store.apply = async (changes) => {
      await apply(changes);
      if (++batches > 1) return;
      // Another connection forgets 1,000 facts of the page just written, its last memory among them.
      await other.apply(Array.from({ length: 1_000 }, (_, index) => ({ op: 'delete' as const, id: `s-${String(9_999 - 2 * index).padStart(5, '0')}` })));
    };
    const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: DIMENSION, id: EMBEDDER_ID }), clock: createFakeClock('2024-03-16T09:00:00.000Z') });
    const report = await memory.maintain();

    expect(report).toMatchObject({ scanned: 20_001, deleted: 5_000, conflicts: 0 });
    const left = await store.list({});
    expect(left).toHaveLength(14_001);
    // Every memory left was maintained once: paging by offset would have skipped 1,000 of them.
    expect(left.filter((record) => record.revision !== 2).map((record) => record.id)).toEqual([]);
    await other.close();
    await store.close();
  }, 60_000);
});
