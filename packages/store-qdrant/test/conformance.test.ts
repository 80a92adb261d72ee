import { randomUUID } from 'node:crypto';
import type { MemoryStore } from '@memloom/core';
import { testMemoryStore } from '@memloom/testkit';
import { QdrantClient } from '@qdrant/js-client-rest';
import { describe, it } from 'vitest';
import { createQdrantStore } from '../src/index.js';

const url = process.env.QDRANT_URL;
const apiKey = process.env.QDRANT_API_KEY;

if (!url) {
  console.warn(
    '[memloom] store-qdrant: QDRANT_URL is not set, so the memloom store conformance suite did NOT run against Qdrant. ' +
      'Only request shapes, error mapping and retries were tested (with a scripted client). ' +
      'Start one with `docker run -p 6333:6333 qdrant/qdrant` and run `QDRANT_URL=http://localhost:6333 pnpm test`.',
  );
}

describe.runIf(!url)('store-qdrant against a real Qdrant', () => {
  it.skip('conformance suite against a real Qdrant (set QDRANT_URL): CRUD, search, scoping, history, bad input, concurrency', () => {});
});

describe.skipIf(!url)('store-qdrant against a real Qdrant', () => {
  const admin = url ? new QdrantClient({ url, ...(apiKey ? { apiKey } : {}), checkCompatibility: false }) : undefined;
  const collections = new WeakMap<MemoryStore, string>();
  const open = (collection: string) => createQdrantStore({ url, ...(apiKey ? { apiKey } : {}), collection });

  testMemoryStore({
    name: 'qdrant',
    create: () => {
      const collection = `memloom_test_${randomUUID().replaceAll('-', '')}`;
      const store = open(collection);
      collections.set(store, collection);
      return store;
    },
    cleanup: async (store) => {
      const collection = collections.get(store);
      if (collection) await admin!.deleteCollection(collection);
    },
    capabilities: { textSearch: true, persistent: true, multiProcess: true, listPage: true, listAfter: true, readMany: true },
    reopen: async (store) => {
      await store.close();
      const collection = collections.get(store) as string;
      const reopened = open(collection);
      collections.set(reopened, collection);
      return reopened;
    },
  });
});
