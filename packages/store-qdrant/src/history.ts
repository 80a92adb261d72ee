import { MemloomError, type MemoryVersion } from '@memloom/core';
import { chunks, DECIDING_READ, scrollAll, type Backend } from './backend.js';
import { versionsOf, versionsOfMany } from './filters.js';
import { fromVersionPayload, type VersionPayload } from './payload.js';
import { WRITE } from './retry.js';

/**
 * A memory's history is the chain of version points from the memory's own
 * writeId back through each version's parentWriteId. Version points of
 * writes that never landed (a lost race, a crash between the version write
 * and the memory write) are not on the chain and stay invisible.
 */
export async function versionChain(backend: Backend, memoryId: string, headWriteId: string, consistency?: typeof DECIDING_READ): Promise<VersionPayload[]> {
  const points = await scrollAll(backend, 'read versions', versionsOf(memoryId), true, consistency);
  return chainOf(memoryId, headWriteId, points.map((point) => fromVersionPayload(point.payload)));
}

/** The chain from `headWriteId` through the given version points of one memory; STORE_CORRUPT when a link is missing. */
export function chainOf(memoryId: string, headWriteId: string, versions: readonly VersionPayload[]): VersionPayload[] {
  const byWriteId = new Map<string, VersionPayload>();
  for (const version of versions) byWriteId.set(version.writeId, version);
  const chain: VersionPayload[] = [];
  let cursor: string | null = headWriteId;
  while (cursor !== null) {
    const version = byWriteId.get(cursor);
    if (!version || chain.length > byWriteId.size) {
      throw new MemloomError({
        code: 'STORE_CORRUPT',
        backend: 'qdrant',
        message: `history of memory ${memoryId} is broken: version written by ${cursor} is missing`,
        details: { id: memoryId, writeId: cursor },
      });
    }
    chain.push(version);
    cursor = version.parentWriteId;
  }
  return chain.reverse();
}

export function entriesOf(chain: readonly VersionPayload[]): MemoryVersion[] {
  return chain.map((version) => version.entry);
}

/** A memory as a call deleted it: its id and the writeId its point held (the head of its chain). */
export interface DeletedHead {
  id: string;
  writeId: string;
}

/** The links of one version point, as the purge reads them. */
interface VersionLink {
  pointId: string;
  writeId: string;
  parentWriteId: string | null;
}

/**
 * Delete the version points of memories this call deleted: those on the chain from each head
 * (`writeId` as the call read it) back to the creation, and those written on top of that chain
 * (a writer that updated the memory between the read and the delete). Nothing else of the same
 * memory id goes: a memory created again by another writer starts a chain of its own
 * (`parentWriteId: null`), so its versions, and its later updates', survive. Points are deleted by
 * id, never by a filter on the memory id, so a version written after the read is never removed.
 *
 * Requests: per `batchSize` memories, one scroll (only the link fields) and one delete per
 * `batchSize` version points. Versions of the memory on no chain (left by a crash before the
 * memory write) stay: they cannot be told apart from a concurrent writer's versions not yet
 * linked, and no history shows them.
 */
export async function deleteVersionChains(backend: Backend, heads: readonly DeletedHead[], keep: ReadonlySet<string> = new Set()): Promise<void> {
  const { batchSize } = backend.options;
  for (const chunk of chunks(heads, batchSize)) {
    const points = await scrollAll(backend, 'read versions to delete', versionsOfMany(chunk.map((head) => head.id)), ['memoryId', 'writeId', 'parentWriteId'], DECIDING_READ);
    const byMemory = new Map<string, VersionLink[]>();
    for (const point of points) {
      const payload = (point.payload ?? {}) as Partial<VersionPayload>;
      if (typeof payload.memoryId !== 'string' || typeof payload.writeId !== 'string') continue;
      const links = byMemory.get(payload.memoryId) ?? [];
      if (links.length === 0) byMemory.set(payload.memoryId, links);
      links.push({ pointId: String(point.id), writeId: payload.writeId, parentWriteId: typeof payload.parentWriteId === 'string' ? payload.parentWriteId : null });
    }
    const doomed = chunk.flatMap((head) => chainPointIds(head.writeId, byMemory.get(head.id) ?? [], keep));
    for (const ids of chunks(doomed, batchSize)) {
      await backend.call('delete versions', () => backend.client.delete(backend.collection, { wait: true, ordering: backend.options.writeOrdering, points: ids }), WRITE);
    }
  }
}

/** Point ids of the chain ending at `headWriteId` and of the versions built on it, `keep` excepted. */
export function chainPointIds(headWriteId: string, links: readonly VersionLink[], keep: ReadonlySet<string> = new Set()): string[] {
  const byWriteId = new Map(links.map((link) => [link.writeId, link]));
  const children = new Map<string, VersionLink[]>();
  for (const link of links) {
    if (link.parentWriteId === null) continue;
    const list = children.get(link.parentWriteId) ?? [];
    if (list.length === 0) children.set(link.parentWriteId, list);
    list.push(link);
  }
  const onChain = new Set<string>();
  // Back to the creation, as far as the links go.
  for (let cursor: string | null = headWriteId; cursor !== null && !onChain.has(cursor); cursor = byWriteId.get(cursor)?.parentWriteId ?? null) {
    onChain.add(cursor);
  }
  // Then forward: writes built on the chain.
  const queue = [...onChain];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop() as string) ?? []) {
      if (onChain.has(child.writeId) || keep.has(child.writeId)) continue;
      onChain.add(child.writeId);
      queue.push(child.writeId);
    }
  }
  return links.filter((link) => onChain.has(link.writeId) && !keep.has(link.writeId)).map((link) => link.pointId);
}
