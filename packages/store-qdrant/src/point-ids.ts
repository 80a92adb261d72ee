import { createHash } from 'node:crypto';

/** Fixed prefix hashed before every name, so memloom's ids never collide with another scheme's. */
const NAMESPACE = Buffer.from('memloom-qdrant-ids', 'utf8');

/**
 * Qdrant point ids must be unsigned integers or UUIDs, while memory ids are
 * any string. Each memory id maps to a name-based UUID (SHA-1, version 5
 * layout) under a memloom namespace; the original id stays in the payload.
 */
export function memoryPointId(memoryId: string): string {
  return nameUuid(`memory\u0000${memoryId}`);
}

/** One point per written version; the write id keeps racing writers' versions apart. */
export function versionPointId(memoryId: string, version: number, writeId: string): string {
  return nameUuid(`version\u0000${memoryId}\u0000${version}\u0000${writeId}`);
}

/** The single point that records the embedder and schema of the collection. */
export const META_POINT_ID = nameUuid('meta\u0000memloom');

function nameUuid(name: string): string {
  const bytes = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
