import { testMemoryStore } from '@memloom/testkit';
import { createSqliteStore, type SqliteStore } from '../src/index.js';
import { tempFolder } from './helpers.js';

const folders = new Map<string, () => void>();

testMemoryStore({
  name: 'sqlite (file)',
  create: () => {
    const folder = tempFolder();
    const store = createSqliteStore({ path: folder.file() });
    folders.set(store.path, folder.dispose);
    return store;
  },
  cleanup: (store) => {
    const path = (store as SqliteStore).path;
    folders.get(path)?.();
    folders.delete(path);
  },
  reopen: async (store) => {
    const path = (store as SqliteStore).path;
    await store.close();
    return createSqliteStore({ path });
  },
  capabilities: { textSearch: true, persistent: true, multiProcess: true, reindex: true, listPage: true, listAfter: true, readMany: true },
});

testMemoryStore({
  name: 'sqlite (:memory:)',
  create: () => createSqliteStore({ path: ':memory:' }),
  capabilities: { textSearch: true, persistent: false, multiProcess: false, reindex: true, listPage: true, listAfter: true, readMany: true },
});
