import type { MemoryChange, MemoryRecord } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { miniQdrant, twoStoresOn } from './mini-qdrant.js';

/**
 * A memory deleted and created again reaches the revision it had before (ABA): the revision alone
 * cannot tell the two apart. Two stores share one collection of the in-memory stand-in
 * (mini-qdrant.ts, not a Qdrant); B deletes and recreates x while A updates or deletes it.
 */
function record(id: string, revision: number, content: string, createdAt: string): MemoryRecord {
  return {
    id, content, level: 'full', weight: 1, baseWeight: 1, importance: 0.5, baseImportance: 0.5, category: 'fact', type: 'user',
    scope: { userId: 'alice' }, createdAt, updatedAt: createdAt, lastAccessedAt: createdAt, source: 'user', verified: false, sources: [], tags: [], metadata: {}, revision,
  };
}

function put(memory: MemoryRecord, before: MemoryRecord | null = null): MemoryChange {
  return {
    op: 'put', memory, ...(before ? {} : { vector: [1, 0] }), expectedRevision: memory.revision - 1,
    version: { memoryId: memory.id, version: memory.revision, at: memory.updatedAt, trigger: 'manual_edit', action: before ? 'edit' : 'create', reason: 'test', before, after: memory },
  };
}

const OLD = record('x', 1, 'old', '2024-01-01T00:00:00.000Z');
const NEW = record('x', 1, 'new', '2024-02-02T00:00:00.000Z');

async function twoProcesses() {
  const qdrant = miniQdrant();
  const { a, b } = await twoStoresOn(qdrant);
  await a.apply([put(OLD)]);
  const recreate = () => b.apply([{ op: 'delete', id: 'x' }, put(NEW)]);
  return { qdrant, a, b, recreate };
}

/** Run `step` once, just before the first request of `method` that `when` picks. */
function before(qdrant: ReturnType<typeof miniQdrant>, method: 'upsert' | 'delete', when: (body: any) => boolean, step: () => Promise<void>) {
  const client = qdrant.client as any;
  const original = client[method];
  let done = false;
  client[method] = async (collection: string, body: any) => {
    if (!done && when(body)) {
      done = true;
      await step();
    }
    return original(collection, body);
  };
  return () => done;
}

describe('a memory deleted and created again at the same revision', () => {
  it('an update based on the memory read before: CONFLICT, the new memory stays as it is', async () => {
    const { a, b, recreate } = await twoProcesses();
    const read = (await a.get('x')) as MemoryRecord;
    await recreate();
    const edit = { ...read, content: 'edit of the old memory', revision: 2 };
    await expect(a.apply([put(edit, read)])).rejects.toMatchObject({ code: 'CONFLICT', backend: 'qdrant', details: { id: 'x' } });
    expect(await b.get('x')).toEqual(NEW);
    expect((await b.history('x')).map((entry) => entry.after.content)).toEqual(['new']);
  });

  it('recreated between the update\'s revision read and its write: CONFLICT, the new memory stays as it is', async () => {
    const { qdrant, a, b, recreate } = await twoProcesses();
    const interleaved = before(qdrant, 'upsert', (body) => body.update_mode === 'update_only', recreate);
    const edit = { ...OLD, content: 'edit of the old memory', revision: 2 };
    await expect(a.apply([put(edit, OLD)])).rejects.toMatchObject({ code: 'CONFLICT', backend: 'qdrant' });
    expect(interleaved()).toBe(true);
    expect(await b.get('x')).toEqual(NEW);
    expect((await b.history('x')).map((entry) => entry.after.content)).toEqual(['new']);
  });

  it('recreated between a conditional delete\'s revision read and its delete: CONFLICT, the new memory and its history stay', async () => {
    const { qdrant, a, b, recreate } = await twoProcesses();
    const interleaved = before(qdrant, 'delete', (body) => body.filter !== undefined, recreate);
    await expect(a.apply([{ op: 'delete', id: 'x', expectedRevision: 1 }])).rejects.toMatchObject({ code: 'CONFLICT', backend: 'qdrant' });
    expect(interleaved()).toBe(true);
    expect(await b.get('x')).toEqual(NEW);
    expect((await b.history('x')).map((entry) => entry.after.content)).toEqual(['new']);
  });
});
