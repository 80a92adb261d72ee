import { createMemory, type Memory, type MemoryStore } from '@memloom/core';
import { createFakeClock, createTestEmbedder, type FakeClock, type TestEmbedder } from '@memloom/core/testing';
import { DIMENSION, EMBEDDER_ID, axis } from './fixtures.js';

export interface FacadeRig {
  memory: Memory;
  embedder: TestEmbedder;
  clock: FakeClock;
}

/** A Memory over the store under test, with an embedder whose vectors a case can choose. */
export function facade(store: MemoryStore, vectors: Record<string, number[]> = {}): FacadeRig {
  const embedder = createTestEmbedder({ dimension: DIMENSION, id: EMBEDDER_ID, vectors });
  const clock = createFakeClock('2024-01-01T10:00:00.000Z');
  // Closing the Memory would close the store the suite owns; cases leave that to the suite.
  const memory = createMemory({ store, embedder, clock });
  return { memory, embedder, clock };
}

export { axis };
