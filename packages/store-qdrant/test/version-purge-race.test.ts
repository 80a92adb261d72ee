import type { MemoryChange, MemoryRecord } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { miniQdrant, twoStoresOn } from './mini-qdrant.js';

/**
 * Two processes (two stores) on one collection, run against the in-memory stand-in in
 * mini-qdrant.ts (not a Qdrant): another writer acts just before a call deletes version points.
 * Deleting a memory's versions must remove only the versions of the memory the call deleted,
 * never versions another writer wrote for the same id since.
 */
const AT = '2024-01-01T00:00:00.000Z';

function record(id: string, revision: number, content: string, userId = 'alice'): MemoryRecord {
  return {
    id, content, level: 'full', weight: 1, baseWeight: 1, importance: 0.5, baseImportance: 0.5, category: 'fact', type: 'user',
    scope: { userId }, createdAt: AT, updatedAt: AT, lastAccessedAt: AT, source: 'user', verified: false, sources: [], tags: [], metadata: {}, revision,
  };
}

function put(memory: MemoryRecord, before: MemoryRecord | null = null): MemoryChange {
  return {
    op: 'put', memory, vector: [1, 0], expectedRevision: memory.revision - 1,
    version: { memoryId: memory.id, version: memory.revision, at: AT, trigger: 'manual_edit', action: before ? 'edit' : 'create', reason: 'test', before, after: memory },
  };
}

async function twoProcesses() {
  const qdrant = miniQdrant();
  const { a, b } = await twoStoresOn(qdrant);
  const versionsOf = (id: string) => [...qdrant.points.values()].filter((point) => point.payload.kind === 'version' && point.payload.memoryId === id);
  return { qdrant, a, b, versionsOf };
}

describe('deleting versions races another writer of the same id', () => {
  it('A deletes x; B creates x again before A deletes the versions: B\'s x keeps its history', async () => {
    const { qdrant, a, b, versionsOf } = await twoProcesses();
    await a.apply([put(record('x', 1, 'old'))]);
    let interleaved = 0;
    qdrant.beforeVersionDelete(async () => {
      interleaved++;
      await b.apply([put(record('x', 1, 'new'))]);
    });
    await a.apply([{ op: 'delete', id: 'x' }]);
    expect(interleaved).toBe(1);
    expect((await b.get('x'))?.content).toBe('new');
    expect((await b.history('x')).map((entry) => entry.after.content)).toEqual(['new']);
    // A's versions of the old x are gone.
    expect(versionsOf('x').map((point) => point.payload.entry.after.content)).toEqual(['new']);
  });

  it('A deletes and puts x again in one batch; B updates the new x before A deletes the old versions: B\'s version stays', async () => {
    const { qdrant, a, b, versionsOf } = await twoProcesses();
    const old = record('x', 1, 'old');
    await a.apply([put(old), put(record('x', 2, 'old, edited'), old)]);
    let interleaved = 0;
    qdrant.beforeVersionDelete(async () => {
      interleaved++;
      const current = (await b.get('x')) as MemoryRecord;
      await b.apply([put(record('x', 2, 'b-update'), current)]);
    });
    await a.apply([{ op: 'delete', id: 'x' }, put(record('x', 1, 'recreated'))]);
    expect(interleaved).toBe(1);
    expect((await b.get('x'))?.content).toBe('b-update');
    expect((await b.history('x')).map((entry) => entry.after.content)).toEqual(['recreated', 'b-update']);
    expect(versionsOf('x')).toHaveLength(2);
  });

  it('deleteByScope: B creates the id again (another user) before the versions go: B\'s memory keeps its history', async () => {
    const { qdrant, a, b } = await twoProcesses();
    await a.apply([put(record('x', 1, 'alice\'s')), put(record('y', 1, 'alice\'s too'))]);
    qdrant.beforeVersionDelete(async () => {
      await b.apply([put(record('x', 1, 'bob\'s', 'bob'))]);
    });
    expect(await a.deleteByScope({ userId: 'alice' })).toBe(2);
    expect((await b.get('x'))?.content).toBe('bob\'s');
    expect((await b.history('x')).map((entry) => entry.after.content)).toEqual(['bob\'s']);
    expect(await b.history('y')).toEqual([]);
    expect([...qdrant.points.values()].filter((point) => point.payload.userId === 'alice')).toEqual([]);
  });
});

describe('deleting versions without a race', () => {
  it('a deleted memory leaves no version points, its updates\' included; a recreated one keeps only its new history', async () => {
    const { a, versionsOf } = await twoProcesses();
    const first = record('x', 1, 'one');
    await a.apply([put(first), put(record('x', 2, 'two'), first)]);
    await a.apply([{ op: 'delete', id: 'x' }]);
    expect(versionsOf('x')).toEqual([]);
    expect(await a.history('x')).toEqual([]);
    await a.apply([put(first), put(record('x', 2, 'two'), first)]);
    await a.apply([{ op: 'delete', id: 'x' }, put(record('x', 1, 'again'))]);
    expect((await a.history('x')).map((entry) => entry.after.content)).toEqual(['again']);
    expect(versionsOf('x')).toHaveLength(1);
  });

  it('versions written on top of the read memory before the delete landed go with it (no invisible leftovers)', async () => {
    const { qdrant, a, b, versionsOf } = await twoProcesses();
    const first = record('x', 1, 'one');
    await a.apply([put(first)]);
    // B updates x after A read it but before A's delete of the point: A's delete (no expectedRevision) removes B's revision too.
    const original = qdrant.client.delete.bind(qdrant.client);
    let interleaved = false;
    (qdrant.client as any).delete = async (collection: string, body: any) => {
      if (!interleaved) {
        interleaved = true;
        (qdrant.client as any).delete = original;
        await b.apply([put(record('x', 2, 'two'), first)]);
      }
      return original(collection, body);
    };
    await a.apply([{ op: 'delete', id: 'x' }]);
    expect(interleaved).toBe(true);
    expect(await b.get('x')).toBeUndefined();
    expect(versionsOf('x')).toEqual([]);
  });
});
