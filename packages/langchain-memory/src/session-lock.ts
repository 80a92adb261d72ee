import { KeyedLock } from '@memloom/core';

/**
 * Work on one chat session runs one task at a time, in arrival order, across
 * every history object over the same store: `RunnableWithMessageHistory`
 * makes a new history object per call, so a double-submit gives two objects
 * writing one session. Keyed by the store object, so two `Memory` instances
 * over one store share the queue. (Another process is not covered.) The working-memory overview's
 * writes queue here too, under keys of their own.
 */
const locksByStore = new WeakMap<object, KeyedLock>();

export function runInSession<T>(store: object, sessionKey: string, task: () => Promise<T>): Promise<T> {
  let lock = locksByStore.get(store);
  if (!lock) {
    lock = new KeyedLock();
    locksByStore.set(store, lock);
  }
  return lock.run(sessionKey, task);
}
