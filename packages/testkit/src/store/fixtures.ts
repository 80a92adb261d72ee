import {
  type MemoryChange,
  type MemoryRecord,
  type MemoryStore,
  type MemoryVersion,
  type StoreCapabilities,
} from '@memloom/core';

/** Dimension of the vectors the store suite writes directly. */
export const DIMENSION = 8;
export const EMBEDDER_ID = 'memloom/testkit-vectors';

export interface StoreSuiteOptions {
  /** Shown in test names, e.g. "sqlite". */
  name: string;
  /** A fresh, empty store for each test. */
  create: () => MemoryStore | Promise<MemoryStore>;
  /** Called after each test with the store (already closed or not); remove files here. */
  cleanup?: (store: MemoryStore) => void | Promise<void>;
  /**
   * What the store can do; capability-gated cases skip when false. The suite
   * also checks that `store.capabilities` says the same.
   */
  capabilities: StoreCapabilities;
  /**
   * For persistent stores: close `store` and open the same data again.
   * Enables the reopen round-trip cases.
   */
  reopen?: (store: MemoryStore) => Promise<MemoryStore>;
}

/** Unit vector along `axis`. */
export function axis(index: number, dimension = DIMENSION): number[] {
  const vector = new Array<number>(dimension).fill(0);
  vector[index % dimension] = 1;
  return vector;
}

/** Unit vector at cosine `similarity` from axis `a`, towards axis `b`. */
export function towards(a: number, b: number, similarity: number, dimension = DIMENSION): number[] {
  const vector = new Array<number>(dimension).fill(0);
  vector[a] = similarity;
  vector[b] = Math.sqrt(1 - similarity * similarity);
  return vector;
}

let counter = 0;

/** A complete record with sensible values; override what a case cares about. */
export function record(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  counter++;
  const at = overrides.createdAt ?? new Date(Date.UTC(2024, 0, 1, 10, 0, counter % 60, counter % 1000)).toISOString();
  return {
    id: `mem-${counter.toString().padStart(5, '0')}-${Math.random().toString(36).slice(2, 8)}`,
    content: `memory number ${counter}`,
    level: 'full',
    weight: 1,
    baseWeight: 1,
    importance: 1,
    baseImportance: 1,
    category: 'fact',
    type: 'user',
    scope: { userId: 'alice' },
    createdAt: at,
    updatedAt: at,
    lastAccessedAt: at,
    source: 'user',
    verified: true,
    sources: [],
    tags: [],
    metadata: {},
    revision: 1,
    ...overrides,
  };
}

/** The change that creates `memory` (revision 1) with `vector`. */
export function create(memory: MemoryRecord, vector: readonly number[]): MemoryChange {
  return { op: 'put', memory, vector, expectedRevision: 0, version: version(null, memory, 'create') };
}

/** The change that replaces `before` with `after` (revision + 1). */
export function replace(before: MemoryRecord, patch: Partial<MemoryRecord>, vector?: readonly number[]): MemoryChange {
  const after: MemoryRecord = { ...before, ...patch, revision: before.revision + 1 };
  return {
    op: 'put',
    memory: after,
    ...(vector ? { vector } : {}),
    expectedRevision: before.revision,
    version: version(before, after, 'edit'),
  };
}

export function version(before: MemoryRecord | null, after: MemoryRecord, action: MemoryVersion['action']): MemoryVersion {
  return {
    memoryId: after.id,
    version: after.revision,
    at: after.updatedAt,
    trigger: action === 'create' ? 'user_mention' : 'manual_edit',
    action,
    reason: `${action} for the conformance suite`,
    before,
    after,
  };
}

/** Open a store for the suite's vectors. */
export async function openStore(store: MemoryStore): Promise<MemoryStore> {
  await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
  return store;
}

/** Expect a promise to reject with a MemloomError of this code. */
export async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  let caught: unknown;
  let failed = false;
  try {
    await promise;
  } catch (error) {
    caught = error;
    failed = true;
  }
  if (!failed) throw new Error(`expected a MemloomError ${code}, but the call succeeded`);
  const actual = (caught as { code?: unknown } | undefined)?.code;
  if (actual !== code) {
    throw new Error(`expected a MemloomError ${code}, got ${String(actual)}: ${(caught as Error | undefined)?.message}`, { cause: caught });
  }
}

/** The store under test, fresh for each case. */
export interface StoreContext {
  readonly store: MemoryStore;
  readonly options: StoreSuiteOptions;
}
