import type { MemoryVersion } from '@memloom/core';

/**
 * The derived index and the machine logs that live in hidden folders next
 * to the Markdown:
 * - `.index/vectors.bin`: append-only vector log (last record per id wins,
 *   a tombstone clears it), rebuilt from the Markdown with the embedder
 *   when missing or written by another embedder;
 * - `.index/accessed.log`: lastAccessedAt per id and revision (touch), and
 *   the ids whose access times were dropped (a memory deleted);
 * - `.index/deleted.log`: memories deleted by hand whose history and vector
 *   still wait (see Reconciler);
 * - `.history/<id>.jsonl`: one version per line.
 */

const MAGIC = 'memloom-vectors 1\n';

export interface VectorHeader {
  embedderId: string;
  dimension: number;
}

/** The header that starts a vector log file. */
export function encodeVectorHeader(header: VectorHeader): Buffer {
  const text = `${MAGIC}${JSON.stringify(header)}\n`;
  // Pad so that records start on a 4-byte boundary.
  return Buffer.from(text.padEnd(Math.ceil(text.length / 4) * 4, ' '), 'utf8');
}

/** One record: a vector for `id` at `revision`, or a tombstone when `vector` is undefined. */
export function encodeVectorRecord(id: string, revision: number, vector: ArrayLike<number> | undefined): Buffer {
  const idBytes = Buffer.from(id, 'utf8');
  const idPadded = Math.ceil(idBytes.length / 4) * 4;
  const floats = vector ? vector.length : 0;
  const size = 12 + idPadded + floats * 4;
  const buffer = Buffer.alloc(size);
  buffer.writeUInt32LE(size, 0);
  buffer.writeInt32LE(vector ? revision : -1, 4);
  buffer.writeUInt32LE(idBytes.length, 8);
  idBytes.copy(buffer, 12);
  for (let index = 0; index < floats; index++) buffer.writeFloatLE(vector![index] as number, 12 + idPadded + index * 4);
  return buffer;
}

/** Read a vector log's header; undefined when the file is not one (then it is rebuilt). */
export function decodeVectorHeader(data: Buffer): { header: VectorHeader; offset: number } | undefined {
  const text = data.subarray(0, Math.min(data.length, 4096)).toString('utf8');
  if (!text.startsWith(MAGIC)) return undefined;
  const headerEnd = text.indexOf('\n', MAGIC.length);
  if (headerEnd < 0) return undefined;
  let header: VectorHeader;
  try {
    header = JSON.parse(text.slice(MAGIC.length, headerEnd)) as VectorHeader;
  } catch {
    return undefined;
  }
  if (typeof header.embedderId !== 'string' || !Number.isInteger(header.dimension)) return undefined;
  return { header, offset: Math.ceil(Buffer.byteLength(text.slice(0, headerEnd + 1), 'utf8') / 4) * 4 };
}

/** A vector as the log holds it, with the revision of its memory it was made for. */
export interface LoggedVector {
  vector: Float32Array;
  /** Older than the memory's revision when the vector was kept through an edit of fields only. */
  revision: number;
}

/**
 * Apply the records in `data` from `offset` to `vectors` (last record per id
 * wins, tombstones delete).
 * Stops at a torn or foreign tail. Returns how many records were read and
 * where they end.
 */
export function decodeVectorRecords(
  data: Buffer,
  offset: number,
  dimension: number,
  vectors: Map<string, LoggedVector>,
): { records: number; end: number } {
  let records = 0;
  while (offset + 12 <= data.length) {
    const size = data.readUInt32LE(offset);
    if (size < 12 || offset + size > data.length) break;
    const revision = data.readInt32LE(offset + 4);
    const idLength = data.readUInt32LE(offset + 8);
    const idPadded = Math.ceil(idLength / 4) * 4;
    const id = data.toString('utf8', offset + 12, offset + 12 + idLength);
    if (revision < 0) {
      vectors.delete(id);
    } else {
      const start = offset + 12 + idPadded;
      const floats = (size - 12 - idPadded) / 4;
      if (floats !== dimension) break;
      vectors.set(id, { vector: new Float32Array(data.buffer.slice(data.byteOffset + start, data.byteOffset + start + floats * 4)), revision });
    }
    records++;
    offset += size;
  }
  return { records, end: offset };
}

export interface AccessEntry {
  revision: number;
  at: string;
}

export function encodeAccess(id: string, revision: number, at: string): string {
  return `${JSON.stringify([id, revision, at])}\n`;
}

/**
 * The line that drops an id's access times: the memory was deleted, and one put again under its id
 * (starting again at revision 1) must not take on the time of a read of the one deleted.
 */
export function encodeAccessDrop(id: string): string {
  return `${JSON.stringify([id])}\n`;
}

/** Last access per id (a drop line clears it); malformed or torn lines are skipped. */
export function decodeAccessLog(text: string): { entries: Map<string, AccessEntry>; lines: number } {
  const entries = new Map<string, AccessEntry>();
  let lines = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    lines++;
    try {
      const fields = JSON.parse(line) as unknown[];
      const [id, revision, at] = fields;
      if (typeof id === 'string' && typeof revision === 'number' && typeof at === 'string') entries.set(id, { revision, at });
      else if (typeof id === 'string' && fields.length === 1) entries.delete(id);
    } catch {
      // A line cut by a crash: the access time is not worth failing for.
    }
  }
  return { entries, lines };
}

/** `.index/deleted.log`: a scope's pending hand deletions, one `["id","when first seen"]` a line. */
export function encodeDeletions(deletions: Map<string, number>): string {
  return [...deletions].map(([id, atMs]) => `${JSON.stringify([id, new Date(atMs).toISOString()])}\n`).join('');
}

/** Pending hand deletions by id (when first seen, ms); lines that do not read are skipped (the deletion is then seen anew). */
export function decodeDeletions(text: string): Map<string, number> {
  const deletions = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const [id, at] = JSON.parse(line) as [unknown, unknown];
      const atMs = typeof at === 'string' ? Date.parse(at) : Number.NaN;
      if (typeof id === 'string' && Number.isFinite(atMs)) deletions.set(id, atMs);
    } catch {
      // Skipped: losing the line only restarts that deletion's wait.
    }
  }
  return deletions;
}

export function encodeVersion(version: MemoryVersion): string {
  return `${JSON.stringify(version)}\n`;
}

/** Versions in a history file, oldest first; a torn last line is ignored. */
export function decodeHistory(text: string): { versions: MemoryVersion[]; badLine?: number } {
  const versions: MemoryVersion[] = [];
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    try {
      versions.push(JSON.parse(line) as MemoryVersion);
    } catch {
      if (index === lines.length - 1) break;
      return { versions, badLine: index + 1 };
    }
  }
  return { versions };
}
