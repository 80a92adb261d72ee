import { createInMemoryStore } from '@memloom/core/testing';
import { testMemoryStore } from '../src/index.js';

testMemoryStore({
  name: 'in-memory',
  create: () => createInMemoryStore(),
  capabilities: { textSearch: true, persistent: false, multiProcess: false, reindex: true, listPage: true, listAfter: true, readMany: true },
});
