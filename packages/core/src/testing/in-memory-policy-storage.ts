import type { PolicyOverrides, PolicyStorage } from '../policy.js';
import { scopeKey } from '../scope.js';
import type { Scope } from '../types.js';

export interface InMemoryPolicyStorage extends PolicyStorage {
  /** The current overrides (undefined: none). */
  overrides: unknown;
  /** Every snapshot taken before a write, oldest first (seed 001's `policy_snapshots/`). */
  readonly snapshots: Array<{ at: Date; overrides: unknown }>;
  /** Delete the overrides: the policy rolls back to the configuration. */
  deleteOverrides(): void;
  /** Last long-term compression per scope key. */
  readonly lastCompressions: Map<string, Date>;
}

/** A `PolicyStorage` in process memory, for tests: snapshots are kept in a list. */
export function createInMemoryPolicyStorage(initial?: PolicyOverrides): InMemoryPolicyStorage {
  const storage: InMemoryPolicyStorage = {
    overrides: initial === undefined ? undefined : structuredClone(initial),
    snapshots: [],
    lastCompressions: new Map(),
    async readOverrides() {
      return storage.overrides === undefined ? undefined : structuredClone(storage.overrides);
    },
    async writeOverrides(overrides: PolicyOverrides, at: Date) {
      if (storage.overrides !== undefined) storage.snapshots.push({ at, overrides: structuredClone(storage.overrides) });
      storage.overrides = structuredClone(overrides);
    },
    deleteOverrides() {
      storage.overrides = undefined;
    },
    async readLastCompression(scope: Scope) {
      return storage.lastCompressions.get(scopeKey(scope));
    },
    async writeLastCompression(scope: Scope, at: Date) {
      storage.lastCompressions.set(scopeKey(scope), at);
    },
  };
  return storage;
}

/**
 * A store's `policyStorage` that keeps a policy file per scope, as the Markdown store keeps seed 001's:
 * each made on first use, in `files` by scope key.
 */
export function policyStoragePerScope(files: Map<string, InMemoryPolicyStorage> = new Map()): (scope: Scope) => InMemoryPolicyStorage {
  return (scope) => {
    const key = scopeKey(scope);
    if (!files.has(key)) files.set(key, createInMemoryPolicyStorage());
    return files.get(key)!;
  };
}
