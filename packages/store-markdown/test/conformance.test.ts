import { testMemoryStore } from '@memloom/testkit';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { removeStoreFiles, tempStore } from './helpers.js';

testMemoryStore({
  name: 'markdown',
  create: () => tempStore(),
  cleanup: (store) => removeStoreFiles(store),
  capabilities: { textSearch: true, persistent: true, multiProcess: true, listPage: true, listAfter: true },
  reopen: async (store) => {
    await store.close();
    return createMarkdownStore({ root: (store as MarkdownStore).root });
  },
});
