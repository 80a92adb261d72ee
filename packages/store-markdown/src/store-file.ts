import type { MemoryChange, Scope, StoreOpenOptions } from '@memloom/core';
import { assertPutChange, assertRecordTimes, assertUsableVector, hasLoneSurrogate } from '@memloom/core';
import { readIfExists } from './atomic-file.js';
import { unreadableField } from './block-format.js';
import { BACKEND, guarded, storeError } from './errors.js';
import type { VectorHeader } from './index-logs.js';
import { assertSafeScope } from './scope-path.js';

/** The layout this package writes (`format` in `.memloom/store.json`); a store written in a newer one is refused. */
export const STORE_FORMAT = 1;

/**
 * `.memloom/store.json`: which embedder's vectors the store holds. Undefined when not written yet. A store
 * a newer @memloom/store-markdown wrote (a higher `format`) is refused with SCHEMA_TOO_NEW, untouched.
 */
export async function readStoreFile(file: string, display: string): Promise<VectorHeader | undefined> {
  const text = await guarded(`cannot read ${display}`, () => readIfExists(file));
  if (text === undefined) return undefined;
  let value: (Partial<VectorHeader> & { format?: unknown }) | undefined;
  try {
    value = JSON.parse(text) as Partial<VectorHeader> & { format?: unknown };
  } catch {
    // Reported below.
  }
  const format = value?.format ?? STORE_FORMAT;
  if (typeof format === 'number' && Number.isInteger(format) && format > STORE_FORMAT) {
    throw storeError(
      'SCHEMA_TOO_NEW',
      `${display} was written by a newer @memloom/store-markdown (format ${format}; this one knows up to ${STORE_FORMAT}). The store was left untouched; upgrade @memloom/store-markdown to open it`,
      { path: display, format, supported: STORE_FORMAT },
    );
  }
  if (value && format === STORE_FORMAT && typeof value.embedderId === 'string' && Number.isInteger(value.dimension)) {
    return { embedderId: value.embedderId, dimension: value.dimension as number };
  }
  throw storeError('STORE_CORRUPT', `${display} cannot be read; delete it to let the next open write it again`, { path: display });
}

export function pickHeader(options: StoreOpenOptions): VectorHeader {
  return { embedderId: options.embedderId, dimension: options.dimension };
}

/** Refuse to open a store for another dimension or embedder than its vectors were made with. */
export function checkHeader(current: VectorHeader, options: StoreOpenOptions): void {
  if (current.dimension !== options.dimension) {
    throw storeError('DIMENSION_MISMATCH', `store holds vectors of dimension ${current.dimension}; the embedder gives ${options.dimension}`);
  }
  if (current.embedderId !== options.embedderId) {
    throw storeError(
      'EMBEDDER_MISMATCH',
      `store was indexed by ${current.embedderId}, not ${options.embedderId}; delete root/.memloom/store.json and the memory/.index folders, then open with the new embedder to rebuild`,
    );
  }
}

export function checkDimension(header: VectorHeader | undefined, vector: readonly number[]): void {
  if (header && vector.length !== header.dimension) {
    throw storeError('DIMENSION_MISMATCH', `vector of dimension ${vector.length}; this store holds ${header.dimension}`);
  }
}

/**
 * Check a change's shape before any lock is taken: ids, a scope that can
 * name a folder (INVALID_SCOPE), metadata that is JSON data, vectors of the
 * store's dimension with finite values, not all zero. Returns the put's clean scope.
 */
export function validateChange(change: MemoryChange, header: VectorHeader | undefined): Scope | undefined {
  if (!change || typeof change !== 'object' || (change.op !== 'put' && change.op !== 'delete')) {
    throw storeError('INVALID_INPUT', 'a change must be { op: "put", … } or { op: "delete", id }');
  }
  if (change.op === 'delete') {
    if (typeof change.id !== 'string' || change.id === '') throw storeError('INVALID_INPUT', 'a delete needs an id');
    return undefined;
  }
  const { memory } = change;
  if (!memory || typeof memory.id !== 'string' || memory.id === '' || memory.id.length > 256) {
    throw storeError('INVALID_INPUT', 'a memory id must be a non-empty string of at most 256 characters');
  }
  if (hasLoneSurrogate(memory.id)) {
    // The id names its history file and its vector record, in UTF-8: two such ids would become one.
    throw storeError('INVALID_INPUT', `memory id ${JSON.stringify(memory.id)} holds a lone surrogate (half of a UTF-16 pair), which a file name cannot hold`);
  }
  if (typeof memory.content !== 'string') throw storeError('INVALID_INPUT', `memory ${memory.id} has no text content`);
  // Core's checks of every store: numbering, scope, context, and metadata (the field line and the history are JSON).
  assertPutChange(change, BACKEND);
  // The times are written into the Markdown as text: one that cannot be read back (2024-02-30 among them, which
  // a Date takes as March 1) would make the file unreadable.
  assertRecordTimes(memory, BACKEND);
  // So would any other field the reader refuses (a weight of 1.5, an empty tag, NaN, which JSON writes as null).
  const unreadable = unreadableField(memory);
  if (unreadable) throw storeError('INVALID_INPUT', `memory ${memory.id}: ${unreadable} (the Markdown could not read it back)`);
  const scope = assertSafeScope(memory.scope);
  if (change.vector !== undefined) {
    checkDimension(header, change.vector);
    assertUsableVector(change.vector, `the vector of memory ${memory.id}`, BACKEND);
  }
  return scope;
}
