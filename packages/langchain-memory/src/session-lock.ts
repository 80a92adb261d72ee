/**
 * Work on one chat session runs one task at a time, in arrival order, across
 * every history object over the same store: `RunnableWithMessageHistory`
 * makes a new history object per call, so a double-submit gives two objects
 * writing one session. Keyed by the store object, so two `Memory` instances
 * over one store share the queue. (Another process is not covered.)
 */
const tailsByStore = new WeakMap<object, Map<string, Promise<unknown>>>();

export function runInSession<T>(store: object, sessionKey: string, task: () => Promise<T>): Promise<T> {
  let tails = tailsByStore.get(store);
  if (!tails) {
    tails = new Map();
    tailsByStore.set(store, tails);
  }
  const sessions = tails;
  const previous = sessions.get(sessionKey) ?? Promise.resolve();
  const result = previous.then(task, task);
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  sessions.set(sessionKey, tail);
  void tail.then(() => {
    if (sessions.get(sessionKey) === tail) sessions.delete(sessionKey);
  });
  return result;
}
