import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { MemoryChange, MemoryRecord } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { closedAfterEach, tempStore } from './helpers.js';

const track = closedAfterEach();

function put(id: string, content: string, revision = 1): MemoryChange {
  const at = '2024-03-02T09:00:00.000Z';
  const memory: MemoryRecord = {
    id, content, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1, category: 'fact', type: 'user', scope: {},
    createdAt: at, updatedAt: at, lastAccessedAt: at, source: 'user', verified: true, sources: [], tags: [], metadata: {}, revision,
  };
  return {
    op: 'put', memory, vector: [1, 0, 0, 0], expectedRevision: revision - 1,
    version: { memoryId: id, version: revision, at, trigger: 'user_mention', action: 'create', reason: content, before: null, after: memory },
  };
}

describe('apply', () => {
  it('gives a memory deleted and put again in one apply a new history holding the new version', async () => {
    const store = await tempStore();
    track(store);
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    await store.apply([put('m1', 'Alice likes tea.')]);
    await store.apply([{ op: 'delete', id: 'm1', expectedRevision: 1 }, put('m1', 'Alice likes coffee.')]);

    expect((await store.get('m1'))?.content).toBe('Alice likes coffee.');
    expect((await store.history('m1')).map((version) => version.reason)).toEqual(['Alice likes coffee.']);
    const file = path.join(store.directoryFor({}), '.history', 'm1.jsonl');
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(1);
    // A put, a delete and a put again: only what follows the delete is kept.
    await store.apply([put('m2', 'Bob likes tea.'), { op: 'delete', id: 'm2' }, put('m2', 'Bob likes juice.')]);
    expect((await store.history('m2')).map((version) => version.reason)).toEqual(['Bob likes juice.']);

    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect((await reopened.history('m1')).map((version) => version.reason)).toEqual(['Alice likes coffee.']);
  });
});
