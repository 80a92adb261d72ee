import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { createMarkdownStore, type MarkdownStore, type MarkdownStoreOptions } from '../src/index.js';

const roots = new WeakMap<object, string>();

/** A fresh temp folder. */
export async function tempRoot(prefix = 'memloom-md-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/** A store over a fresh temp folder; remember the folder for cleanup. */
export async function tempStore(options: Partial<MarkdownStoreOptions> = {}): Promise<MarkdownStore> {
  const root = options.root ?? (await tempRoot());
  const store = createMarkdownStore({ ...options, root });
  roots.set(store, root);
  return store;
}

export async function removeStoreFiles(store: object): Promise<void> {
  const root = roots.get(store) ?? (store as MarkdownStore).root;
  await rm(root, { recursive: true, force: true });
}

/**
 * For a test file: stores handed to the returned `track` (which gives them back) are closed and
 * their folders removed after each test.
 */
export function closedAfterEach(): (store: MarkdownStore) => MarkdownStore {
  let stores: MarkdownStore[] = [];
  afterEach(async () => {
    for (const store of stores) {
      await store.close();
      await removeStoreFiles(store);
    }
    stores = [];
  });
  return (store) => {
    stores.push(store);
    return store;
  };
}

/** A process of this host that is gone: a lock or `lock.break` it recorded as its owner is stale. */
export const GONE_PROCESS = { pid: 2 ** 30, host: os.hostname() };

/**
 * `<root>/.memloom/lock` held by a process that is gone, as a stale lock is left (its `owner.json` naming
 * `GONE_PROCESS`), and the paths of the folders around it.
 */
export async function staleLock(root: string): Promise<{ state: string; lock: string; breaker: string; gone: typeof GONE_PROCESS }> {
  const state = path.join(root, '.memloom');
  const lock = path.join(state, 'lock');
  await mkdir(lock, { recursive: true });
  await writeFile(path.join(lock, 'owner.json'), JSON.stringify({ ...GONE_PROCESS, token: 'gone' }));
  return { state, lock, breaker: `${lock}.break`, gone: GONE_PROCESS };
}
