import type { MemoryStore } from '@memloom/core';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type StoreContext, type StoreSuiteOptions } from './fixtures.js';

/** Create and open a fresh store before each case; close and clean it after. */
export function useStore(options: StoreSuiteOptions): StoreContext & { replace(store: MemoryStore): void } {
  let current: MemoryStore | undefined;
  beforeEach(async () => {
    current = await openStore(await options.create());
  });
  afterEach(async () => {
    if (!current) return;
    const store = current;
    current = undefined;
    await store.close().catch(() => undefined);
    await options.cleanup?.(store);
  });
  return {
    options,
    get store(): MemoryStore {
      if (!current) throw new Error('store not created yet');
      return current;
    },
    replace(store: MemoryStore) {
      current = store;
    },
  };
}
