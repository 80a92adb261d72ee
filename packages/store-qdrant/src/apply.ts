import { randomUUID } from 'node:crypto';
import {
  assertPutChange,
  assertUsableVector,
  assertWellFormedRecord,
  dataPath,
  loneSurrogatePath,
  MemloomError,
  type MemoryChange,
  type MemoryRecord,
  type MemoryVersion,
  wellFormed,
} from '@memloom/core';
import { chunks, DECIDING_READ, denseVectorOf, retrieveAll, type Backend, type Filter, type PointRecord } from './backend.js';
import type { Schemas } from './client.js';
import { deleteVersionChains, versionChain } from './history.js';
import { storedKeywordFields, toMemoryPayload, toVersionPayload, type MemoryPayload } from './payload.js';
import { memoryPointId, versionPointId } from './point-ids.js';
import { WRITE } from './retry.js';
import { memoryTextVector } from './sparse-text.js';

/** What one memory looked like before the call. */
interface Initial {
  revision: number;
  writeId: string;
  /** Kept by every update of a memory: tells it from one deleted and created again at the same revision. */
  createdAt: unknown;
  payload: Record<string, unknown>;
  /** Undefined when the point holds no (readable) dense vector: a delete needs none, a put keeping it fails. */
  vector: number[] | undefined;
}

interface WrittenVersion {
  entry: MemoryVersion;
  writeId: string;
  parentWriteId: string | null;
}

/** Everything one call does to one memory id. */
interface Plan {
  id: string;
  pointId: string;
  initial: Initial | undefined;
  /** The existing point goes away (a delete in the batch). */
  removesInitial: boolean;
  /** Some delete in the batch named an expectedRevision: remove only if the revision is still the one read. */
  conditionalRemove: boolean;
  final: { record: MemoryRecord; vector: number[]; writeId: string } | undefined;
  versions: WrittenVersion[];
}

/**
 * Apply changes as atomically as Qdrant allows (it has no multi-point
 * transactions):
 *
 * 1. check every change locally and against revisions read with `majority`
 *    consistency (and a put's `version.before` against the stored createdAt,
 *    so a memory deleted and created again is not taken for the one the
 *    caller read); a stale change fails the call before anything is written;
 * 2. write the version points (invisible until a memory points at them);
 * 3. write the memory points conditionally: creations with `insert_only`,
 *    replacements with `update_only` + an `update_filter` on the writeId
 *    read in step 1, so a concurrent writer is never overwritten;
 * 4. read the memory points back: if another writer won any of them, undo the
 *    ones this call won (conditionally, on its own writeId) and fail with
 *    CONFLICT;
 * 5. delete what the batch deletes, then the versions on the deleted memories' chains (by point
 *    id: versions another writer wrote since, for the same id, stay).
 *
 * A crash between the steps leaves either invisible version points or a
 * batch applied to some memories and not others; never a memory without its
 * versions, nor a findable vector without its record (both live in one point).
 */
export async function applyChanges(backend: Backend, dimension: number | undefined, changes: readonly MemoryChange[]): Promise<void> {
  if (!Array.isArray(changes)) throw invalid('apply needs an array of changes');
  for (const change of changes) checkShape(change, dimension);
  if (changes.length === 0) return;

  const ids = [...new Set(changes.map(changeId))];
  const initial = await readInitial(backend, ids);
  const plans = ids.map((id) => plan(id, initial.get(id), changes));

  await writeVersions(backend, plans);
  await removeInitial(backend, plans.filter((entry) => entry.removesInitial && entry.conditionalRemove), plans);
  await writeMemories(backend, plans);
  await verifyWrites(backend, plans);
  await removeInitial(backend, plans.filter((entry) => entry.removesInitial && !entry.conditionalRemove), plans);
  await purgeVersions(backend, plans);
}

function checkShape(change: MemoryChange, dimension: number | undefined): void {
  if (!change || (change.op !== 'put' && change.op !== 'delete')) throw invalid('each change needs op "put" or "delete"');
  if (change.op === 'delete') {
    if (typeof change.id !== 'string' || change.id === '') throw invalid('a delete needs an id');
    return;
  }
  const { memory } = change;
  if (!memory || typeof memory.id !== 'string' || memory.id === '') throw invalid('a put needs a memory with an id');
  // Core's checks of every store: numbering, scope, context, and metadata (the payload is JSON).
  assertPutChange(change, 'qdrant');
  // JSON sent to the server is UTF-8, which its parser insists on: refused here, typed, before any request.
  assertWellFormedRecord(memory, 'qdrant');
  // Everything else the points carry (tags, sources, metadata and its keys, the version) as well: the payload is UTF-8 JSON.
  for (const [name, value] of [['memory', memory], ['version', change.version]] as const) {
    const path = loneSurrogatePath(value);
    if (path) {
      const field = dataPath(name, path);
      throw new MemloomError({
        code: 'INVALID_INPUT',
        backend: 'qdrant',
        message: `memory ${memory.id}: ${wellFormed(field)} holds a lone half of a UTF-16 pair (a string cut through an emoji), which Qdrant's server refuses in JSON; core's wellFormed() replaces it with U+FFFD`,
        details: { id: memory.id, field },
      });
    }
  }
  if (change.vector === undefined) return;
  if (dimension !== undefined && change.vector.length !== dimension) {
    throw new MemloomError({
      code: 'DIMENSION_MISMATCH',
      backend: 'qdrant',
      message: `vector of dimension ${change.vector.length}; this store holds ${dimension}`,
      details: { id: memory.id, expected: dimension, actual: change.vector.length },
    });
  }
  assertUsableVector(change.vector, `the vector of memory ${memory.id}`, 'qdrant');
}

async function readInitial(backend: Backend, ids: readonly string[]): Promise<Map<string, Initial>> {
  const points = await retrieveAll(backend, 'read revisions', ids.map(memoryPointId), {
    withPayload: true,
    withVector: ['dense'],
    consistency: DECIDING_READ,
  });
  const byPoint = new Map(points.map((point) => [String(point.id), point]));
  const found = new Map<string, Initial>();
  for (const id of ids) {
    const point = byPoint.get(memoryPointId(id));
    if (!point) continue;
    // Only what the write needs is checked, not the whole record as a read does: a point damaged elsewhere can still be
    // deleted, or replaced by a put that brings its own vector (the vector is checked where a put keeps it, in plan()).
    const { revision, writeId, createdAt } = (point.payload ?? {}) as Partial<MemoryPayload>;
    if (typeof revision !== 'number') throw storedWithout(id, 'a revision');
    if (typeof writeId !== 'string') throw storedWithout(id, 'a write id');
    found.set(id, { revision, writeId, createdAt, payload: point.payload as Record<string, unknown>, vector: denseVectorOf(point) });
  }
  return found;
}

/** Replay the batch against what was read: CONFLICT or INVALID_INPUT before anything is written. */
function plan(id: string, initial: Initial | undefined, changes: readonly MemoryChange[]): Plan {
  const result: Plan = { id, pointId: memoryPointId(id), initial, removesInitial: false, conditionalRemove: false, final: undefined, versions: [] };
  let current: { revision: number; writeId: string; createdAt: unknown; vector: number[] | undefined } | undefined = initial;
  for (const change of changes) {
    if (changeId(change) !== id) continue;
    if (change.op === 'delete') {
      if (change.expectedRevision !== undefined && current?.revision !== change.expectedRevision) throw conflict(id);
      // Any delete while the stored point still exists removes it (a put earlier in the batch only replaced it).
      if (current && initial) {
        result.removesInitial = true;
        result.conditionalRemove ||= change.expectedRevision !== undefined;
      }
      current = undefined;
      result.final = undefined;
      result.versions = [];
      continue;
    }
    if ((current?.revision ?? 0) !== change.expectedRevision) throw conflict(id);
    // A memory deleted and created again since the caller read it may be back at the same revision:
    // the record the change was made from must be the one stored, not an earlier memory of that id.
    const basedOn = change.version.before;
    if (current && basedOn && basedOn.createdAt !== current.createdAt) throw conflict(id);
    const vector = change.vector ? [...change.vector] : current?.vector;
    if (!vector) throw current ? storedWithout(id, 'a vector') : invalid(`memory ${id} is new and needs a vector`);
    const writeId = randomUUID();
    result.versions.push({ entry: change.version, writeId, parentWriteId: current?.writeId ?? null });
    current = { revision: change.memory.revision, writeId, createdAt: change.memory.createdAt, vector };
    result.final = { record: change.memory, vector, writeId };
  }
  // Deleted and put again: remove the old point only if nobody moved it since it was read, then create afresh.
  if (result.removesInitial && result.final) result.conditionalRemove = true;
  return result;
}

async function writeVersions(backend: Backend, plans: readonly Plan[]): Promise<void> {
  const points = plans.flatMap((entry) =>
    entry.versions.map((version) => ({
      id: versionPointId(entry.id, version.entry.version, version.writeId),
      vector: {},
      payload: { ...toVersionPayload(version.entry, version.writeId, version.parentWriteId) },
    })),
  );
  for (const chunk of chunks(points, backend.options.batchSize)) {
    // Fresh ids each time, so retrying is harmless and ordering does not matter.
    await backend.call('write versions', () => backend.client.upsert(backend.collection, { wait: true, ordering: backend.options.writeOrdering, points: chunk }), WRITE);
  }
}

async function writeMemories(backend: Backend, plans: readonly Plan[]): Promise<void> {
  const creations = plans.filter((entry) => entry.final && (!entry.initial || entry.removesInitial));
  const replacements = plans.filter((entry) => entry.final && entry.initial && !entry.removesInitial);
  for (const chunk of chunks(creations, backend.options.batchSize)) {
    await backend.call('create memories', () =>
      backend.client.upsert(backend.collection, {
        wait: true,
        ordering: backend.options.writeOrdering,
        update_mode: 'insert_only',
        points: chunk.map((entry) => memoryPoint(backend, entry)),
      }),
      WRITE,
    );
  }
  for (const chunk of chunks(replacements, backend.options.batchSize)) {
    await backend.call('update memories', () =>
      backend.client.upsert(backend.collection, {
        wait: true,
        ordering: backend.options.writeOrdering,
        update_mode: 'update_only',
        update_filter: unchangedSinceRead(chunk),
        points: chunk.map((entry) => memoryPoint(backend, entry)),
      }),
      WRITE,
    );
  }
}

/**
 * The memory points of `plans` that still hold the write each was read at. Compared by writeId,
 * not by revision: a memory deleted and created again since the read can be back at the same
 * revision, never at the same write. writeIds are unique, so one list covers the batch; `has_id`
 * keeps the version points, which carry their write's id too, out of it.
 */
function unchangedSinceRead(plans: readonly Plan[]): Filter {
  return {
    must: [{ has_id: plans.map((entry) => entry.pointId) }, { key: 'writeId', match: { any: plans.map((entry) => (entry.initial as Initial).writeId) } }],
  };
}

function memoryPoint(backend: Backend, entry: Plan): Schemas['PointStruct'] {
  const final = entry.final as NonNullable<Plan['final']>;
  const text = memoryTextVector(final.record, backend.options.textSearch);
  return {
    id: entry.pointId,
    vector: { dense: final.vector, ...(text ? { text } : {}) },
    payload: { ...toMemoryPayload(final.record, final.writeId) },
  };
}

async function verifyWrites(backend: Backend, plans: readonly Plan[]): Promise<void> {
  const written = plans.filter((entry) => entry.final);
  if (written.length === 0) return;
  const points = await retrieveAll(backend, 'verify writes', written.map((entry) => entry.pointId), {
    withPayload: ['writeId', 'revision'],
    consistency: DECIDING_READ,
  });
  const byPoint = new Map(points.map((point) => [String(point.id), point]));
  const won: Plan[] = [];
  const lost: Plan[] = [];
  for (const entry of written) {
    (await landed(backend, entry, byPoint.get(entry.pointId)) ? won : lost).push(entry);
  }
  if (lost.length === 0) return;
  await undo(backend, won);
  // Lost writes never became any memory's writeId, so no history points at their versions.
  await removeVersionPoints(backend, lost);
  throw conflict(lost[0]!.id, lost.map((entry) => entry.id));
}

/** Did this plan's final write land (possibly built upon since by another writer)? */
async function landed(backend: Backend, entry: Plan, point: PointRecord | undefined): Promise<boolean> {
  const final = entry.final as NonNullable<Plan['final']>;
  const payload = point?.payload as Partial<MemoryPayload> | undefined;
  if (!payload || typeof payload.writeId !== 'string' || typeof payload.revision !== 'number') return false;
  if (payload.writeId === final.writeId) return true;
  if (payload.revision <= final.record.revision) return false;
  // Someone wrote on top already: ours landed only if it is on their history chain.
  const chain = await versionChain(backend, entry.id, payload.writeId, DECIDING_READ);
  return chain.some((version) => version.writeId === final.writeId);
}

/** Put back what this call replaced, but only where its own write is still the latest. */
async function undo(backend: Backend, won: readonly Plan[]): Promise<void> {
  for (const entry of won) {
    const ours = { must: [{ has_id: [entry.pointId] }, { key: 'writeId', match: { value: (entry.final as NonNullable<Plan['final']>).writeId } }] };
    const initial = entry.initial;
    if (!initial) {
      await backend.call('undo a write', () =>
        backend.client.delete(backend.collection, { wait: true, ordering: backend.options.writeOrdering, filter: ours }),
        WRITE,
      );
      continue;
    }
    // Read as leniently as readInitial took it: a put over a point damaged elsewhere is undone too.
    const fields = storedKeywordFields(initial.payload);
    const text = fields && memoryTextVector(fields, backend.options.textSearch);
    const vector = { ...(initial.vector ? { dense: initial.vector } : {}), ...(text ? { text } : {}) };
    await backend.call('undo a write', () =>
      backend.client.upsert(backend.collection, {
        wait: true,
        ordering: backend.options.writeOrdering,
        update_mode: 'update_only',
        update_filter: ours,
        points: [{ id: entry.pointId, vector, payload: initial.payload }],
      }),
      WRITE,
    );
  }
}

/** Drop the version points a failed call wrote; no memory's history points at them. */
async function removeVersionPoints(backend: Backend, plans: readonly Plan[]): Promise<void> {
  const ids = plans.flatMap((entry) => entry.versions.map((version) => versionPointId(entry.id, version.entry.version, version.writeId)));
  for (const chunk of chunks(ids, backend.options.batchSize)) {
    await backend.call('remove versions of a failed write', () => backend.client.delete(backend.collection, { wait: true, ordering: backend.options.writeOrdering, points: chunk }), WRITE);
  }
}

async function removeInitial(backend: Backend, plans: readonly Plan[], all: readonly Plan[]): Promise<void> {
  if (plans.length === 0) return;
  const conditional = plans.filter((entry) => entry.conditionalRemove);
  const unconditional = plans.filter((entry) => !entry.conditionalRemove);
  for (const chunk of chunks(unconditional, backend.options.batchSize)) {
    await backend.call('delete memories', () =>
      backend.client.delete(backend.collection, { wait: true, ordering: backend.options.writeOrdering, points: chunk.map((entry) => entry.pointId) }),
      WRITE,
    );
  }
  for (const chunk of chunks(conditional, backend.options.batchSize)) {
    await backend.call('delete memories', () =>
      backend.client.delete(backend.collection, {
        wait: true,
        ordering: backend.options.writeOrdering,
        filter: unchangedSinceRead(chunk),
      }),
      WRITE,
    );
  }
  if (conditional.length === 0) return;
  const still = await retrieveAll(backend, 'verify deletes', conditional.map((entry) => entry.pointId), {
    withPayload: ['writeId'],
    consistency: DECIDING_READ,
  });
  if (still.length === 0) return;
  const kept = new Set(still.map((point) => String(point.id)));
  const moved = conditional.filter((entry) => kept.has(entry.pointId)).map((entry) => entry.id);
  // The batch's version points are not on any chain yet: drop them with the failed call.
  await removeVersionPoints(backend, all);
  throw conflict(moved[0]!, moved);
}

/**
 * Versions of deleted memories go after the memory, so a crash never leaves a memory without its
 * history. Only the chain of the memory as this call read it goes (by point id): another writer
 * may have created the id again, or updated the memory this call recreated, since.
 */
async function purgeVersions(backend: Backend, plans: readonly Plan[]): Promise<void> {
  const gone = plans.filter((entry) => entry.removesInitial);
  // Recreated in this call: the versions it just wrote stay.
  const keep = new Set(gone.flatMap((entry) => entry.versions.map((version) => version.writeId)));
  await deleteVersionChains(backend, gone.map((entry) => ({ id: entry.id, writeId: (entry.initial as Initial).writeId })), keep);
}

function changeId(change: MemoryChange): string {
  return change.op === 'delete' ? change.id : change.memory.id;
}

function conflict(id: string, ids: string[] = [id]): MemloomError {
  return new MemloomError({ code: 'CONFLICT', backend: 'qdrant', message: `memory ${id} was changed by someone else`, details: { id, ids } });
}

function storedWithout(id: string, missing: string): MemloomError {
  return new MemloomError({ code: 'STORE_CORRUPT', backend: 'qdrant', message: `memory ${id} is stored without ${missing}`, details: { id } });
}

function invalid(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_INPUT', backend: 'qdrant', message });
}
