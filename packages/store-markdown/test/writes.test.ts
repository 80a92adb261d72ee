import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MemloomError, type MemoryChange, type MemoryRecord } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { closedAfterEach, tempRoot, tempStore } from './helpers.js';

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

  it('gives a memory deleted and put again (in one apply or two) the lastAccessedAt of the put, not a time touched before, here, in another process and after a reopen', async () => {
    const store = track(await tempStore());
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    await store.apply([put('m1', 'Alice likes tea.'), put('m2', 'Bob likes tea.')]);
    await store.touch(['m1', 'm2'], '2025-01-01T00:00:00.000Z');
    const other = track(createMarkdownStore({ root: store.root, checkIntervalMs: 0 }));
    expect((await other.get('m1'))?.lastAccessedAt).toBe('2025-01-01T00:00:00.000Z');

    await store.apply([{ op: 'delete', id: 'm1' }, put('m1', 'Alice likes coffee.')]);
    await store.apply([{ op: 'delete', id: 'm2' }]);
    await store.apply([put('m2', 'Bob likes juice.')]);
    const own = '2024-03-02T09:00:00.000Z';
    const times = async (reader: MarkdownStore) => (await reader.getMany(['m1', 'm2'])).map((memory) => memory?.lastAccessedAt);
    expect(await times(store)).toEqual([own, own]);
    expect(await times(other)).toEqual([own, own]);
    expect(await times(track(createMarkdownStore({ root: store.root })))).toEqual([own, own]);

    // The memory put again is touched as any other.
    await store.touch(['m2'], '2026-06-06T06:06:06.000Z');
    expect(await times(track(createMarkdownStore({ root: store.root })))).toEqual([own, '2026-06-06T06:06:06.000Z']);
  });

  it('leaves out history lines past the memory\'s revision (a write that did not commit)', async () => {
    const store = track(await tempStore());
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    await store.apply([put('m1', 'Alice likes tea.')]);
    // A write of revision 2 that appended its version line and stopped before the Markdown was written.
    const file = path.join(store.directoryFor({}), '.history', 'm1.jsonl');
    const [line] = (await readFile(file, 'utf8')).trim().split('\n');
    await appendFile(file, `${JSON.stringify({ ...JSON.parse(line as string), version: 2, reason: 'never committed' })}\n`);

    expect((await store.history('m1')).map((version) => [version.version, version.reason])).toEqual([[1, 'Alice likes tea.']]);
    const reopened = track(createMarkdownStore({ root: store.root }));
    expect((await reopened.history('m1')).map((version) => version.version)).toEqual([1]);
  });
});

describe('a put without a vector', () => {
  it('is INVALID_INPUT for a new memory, and nothing of the batch is written; an existing memory keeps its vector', async () => {
    const store = track(await tempStore());
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const { vector: _dropped, ...bare } = put('m1', 'Alice likes tea.') as Extract<MemoryChange, { op: 'put' }>;
    const error = await store.apply([put('m0', 'Bob likes juice.'), bare]).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'INVALID_INPUT')).toBe(true);
    expect(await store.getMany(['m0', 'm1'])).toEqual([]);

    await store.apply([put('m1', 'Alice likes tea.')]);
    const { vector: _kept, ...edit } = put('m1', 'Alice likes green tea.', 2) as Extract<MemoryChange, { op: 'put' }>;
    await store.apply([edit]);
    expect((await store.get('m1'))?.content).toBe('Alice likes green tea.');
    expect(await store.getVector('m1')).toEqual([1, 0, 0, 0]);
  });
});

describe('vectorSearch', () => {
  it('breaks ties in score by id, smallest first, whatever order the memories were written in', async () => {
    const store = track(await tempStore());
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    // The same vector for all three: every score ties.
    await store.apply([put('m-c', 'Carol likes tea.'), put('m-a', 'Alice likes tea.'), put('m-b', 'Bob likes tea.')]);
    const ids = async (limit: number) => (await store.vectorSearch({ vector: [1, 0, 0, 0], limit })).map((hit) => hit.memory.id);
    expect(await ids(2)).toEqual(['m-a', 'm-b']);
    expect(await ids(3)).toEqual(['m-a', 'm-b', 'm-c']);
  });
});

describe('deleteByScope', () => {
  it('returns how many memories it deleted, not how many scope folders', async () => {
    const store = track(await tempStore());
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const of = (id: string, scope: MemoryRecord['scope']): MemoryChange => {
      const change = put(id, `memory ${id}`) as Extract<MemoryChange, { op: 'put' }>;
      const memory = { ...change.memory, scope };
      return { ...change, memory, version: { ...change.version, after: memory } };
    };
    const alice = { userId: 'alice' };
    const aliceAgent = { userId: 'alice', agentId: 'helper' };
    await store.apply([of('a1', alice), of('a2', alice), of('a3', aliceAgent), of('b1', { userId: 'bob' })]);

    // Two folders (alice's, and alice's with the agent), three memories.
    expect(await store.deleteByScope(alice)).toBe(3);
    expect(await store.deleteByScope(alice)).toBe(0);
    expect((await store.list({})).map((memory) => memory.id)).toEqual(['b1']);
  });
});

describe('checkIntervalMs', () => {
  it('reads the files again only once the interval has passed: an edit by hand is seen at once with 0, and by sync() before the interval', async () => {
    const root = await tempRoot();
    const patient = track(createMarkdownStore({ root, checkIntervalMs: 600_000 }));
    const eager = track(createMarkdownStore({ root }));
    await patient.open({ dimension: 4, embedderId: 'test/vectors' });
    await eager.open({ dimension: 4, embedderId: 'test/vectors' });
    await patient.apply([put('m1', 'Alice likes tea.')]);
    expect((await eager.get('m1'))?.content).toBe('Alice likes tea.');

    const file = path.join(patient.directoryFor({}), 'MEMORY.md');
    await writeFile(file, (await readFile(file, 'utf8')).replace('Alice likes tea.', 'Alice likes green tea.'));
    // Within the interval, reads answer from what the store last read; with 0, every read looks first.
    expect((await patient.get('m1'))?.content).toBe('Alice likes tea.');
    expect((await eager.get('m1'))?.content).toBe('Alice likes green tea.');
    await patient.sync();
    expect((await patient.get('m1'))?.content).toBe('Alice likes green tea.');
  });
});
