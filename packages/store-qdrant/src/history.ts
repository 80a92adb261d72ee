import { MemloomError, type MemoryVersion } from '@memloom/core';
import { DECIDING_READ, scrollAll, type Backend } from './backend.js';
import { versionsOf } from './filters.js';
import { fromVersionPayload, type VersionPayload } from './payload.js';

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
